#!/bin/bash
# A hostile guest: Mini-OS's `hostile` command spends 30 s writing garbage
# to every device lodge-hyp emulates (ports, PCI configuration, virtio
# registers, MSI-X tables, the MMIO hole) and handing its virtio-blk,
# virtio-net and virtio-balloon rings that loop, nest, wrap and point
# outside RAM.  Its lodge-hyp must survive with the devices in
# NEEDS_RESET, keep its log bounded, and a second domain beside it must
# neither notice nor lose a byte.  In a network namespace made here.
. "$(dirname "$0")/../lib.sh"

integ_begin "hostile guest" kvm root minios netns
R=$ROOT
SECS=${HOSTILE_SECONDS:-30}
mkdir -p "$R/etc/lodge/domains"
in_ns ip link set lo up
in_ns "$LODGE" bridge-create hbr0 >/dev/null && in_ns ip addr add 10.79.0.1/24 dev hbr0
for n in evil good; do
	truncate -s 32M "$T/$n.img"
	ip=$([ $n = evil ] && echo 10.79.0.66 || echo 10.79.0.2)
	mac=$([ $n = evil ] && echo 02:4c:00:00:66:66 || echo 02:4c:00:00:66:02)
	cat >"$R/etc/lodge/domains/$n.cfg" <<CFG
name = "$n"
memory = 64
kernel = "$MINIOS"
extra = "ip=$ip/24"
disk = [ "$T/$n.img,raw,vda,rw" ]
vif = [ "bridge=hbr0,mac=$mac" ]
CFG
	lodge create "$n" >"$T/create.out" 2>&1 || { fail "hostile guest" "create $n: $(tail -1 "$T/create.out")"; exit 0; }
done
say() { ( echo "$2"; sleep "${3:-1}" ) | lodge console "$1" >>"$T/$1.console" 2>&1; }
pid_of() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $9 }'; }
evil_pid=$(pid_of evil)
wait_for "$R/run/lodge/good/console.log" 'net: eth0' 20 || true

# The attack, seeded so a failure can be replayed.
seed=${HOSTILE_SEED:-$((RANDOM * 32768 + RANDOM + 1))}
( echo "hostile $SECS $seed"; sleep 0.5 ) | lodge console evil >/dev/null 2>&1 &
attack=$!
good_ok=1 rounds=0 why=""
end=$((SECONDS + SECS))
while [ $SECONDS -lt $end ]; do
	# Meanwhile the good domain writes, flushes and reads back its disk and
	# answers ping.
	rounds=$((rounds + 1))
	say good "blk-pattern vda $((rounds * 64)) 64 $rounds; blk-flush vda; blk-sum vda $((rounds * 64)) 64" 1.5
	if ! in_ns ping -c 1 -W 2 10.79.0.2 >/dev/null 2>&1; then good_ok=0; why="no ping reply in round $rounds"; fi
	sleep 2
done
wait $attack
if wait_for "$R/run/lodge/evil/console.log" 'hostile: done' 30; then
	pass "the hostile guest ran $SECS s (seed $seed: $(grep -o 'hostile: done: [0-9]* rounds' "$R/run/lodge/evil/console.log" | tail -1 | cut -d' ' -f3) rounds)"
else
	# What each thread of its lodge-hyp was doing, to tell a guest still
	# busy from a thread stuck in lodge-hyp.
	threads=$(for t in /proc/"$(pid_of evil)"/task/*; do
		echo "$(cat "$t/comm" 2>/dev/null) $(cut -d' ' -f3 "$t/stat" 2>/dev/null) $(cat "$t/wchan" 2>/dev/null)"
	done | tr '\n' ',')
	fail "hostile guest ran" "seed $seed: $(tail -c 300 "$R/run/lodge/evil/console.log" | tr '\n' '|'); threads: $threads"
fi
if [ -n "$evil_pid" ] && kill -0 "$evil_pid" 2>/dev/null && [ "$(pid_of evil)" = "$evil_pid" ]; then
	pass "its lodge-hyp survived and still answers its control socket"
else
	fail "lodge-hyp survives a hostile guest" "seed $seed: pid $evil_pid, now '$(pid_of evil)'; $(tail -3 "$R/run/lodge/evil/lodge-hyp.log" 2>/dev/null | tr '\n' '|')"
fi
# Typed at its console, answered in its console log (waited for: a loaded
# host may take more than the second the console stays attached).  An
# empty line first: the attack may have left bytes in the UART's receive
# FIFO, which would start the command's line.
say evil $'\necho still-here-'"$seed"
if wait_for "$R/run/lodge/evil/console.log" "^still-here-$seed" 30; then
	pass "the hostile guest's console still answers"
else
	fail "hostile guest's console" "$(tail -c 200 "$R/run/lodge/evil/console.log" | tr '\r\n' '||')"
fi
log=$R/run/lodge/evil/lodge-hyp.log
n=$(grep -c 'device needs reset' "$log" 2>/dev/null)
if [ "${n:-0}" -ge 1 ] && [ "$n" -le $((SECS * 3 + 10)) ]; then
	pass "the broken devices went to NEEDS_RESET, logged at most once a second each ($n lines)"
else
	fail "NEEDS_RESET logged, bounded" "seed $seed: ${n:-0} lines in $log"
fi
# The good domain: every round's checksum matches the pattern it wrote.
# (Read from its console log, which has everything once; what the attach
# windows caught repeats the history each time.)  Each round typed its
# commands; the last answers may still be coming.
good_sums() { [ "$(grep -ac 'blk-sum: fnv1a64w' "$R/run/lodge/good/console.log")" -ge "$rounds" ]; }
wait_until 30 good_sums
sums=$(grep -ac 'blk-sum: fnv1a64w' "$R/run/lodge/good/console.log")
errors=$(grep -acE 'I/O error|blk-.*: (error|fail)' "$R/run/lodge/good/console.log")
if [ $good_ok = 1 ] && [ "$sums" -ge "$rounds" ] && [ "$errors" -eq 0 ] && [ "$(pid_of good)" ]; then
	pass "the domain beside it kept its disk and network (a checksum for each of its $rounds disk rounds, ping every round)"
else
	fail "the other domain unaffected" "$why; $sums sums for $rounds rounds, $errors errors"
fi
# And its data is what it wrote: round 1's pattern, checked on the host.
python3 - "$T/good.img" <<'PY' && pass "the other domain's writes are on its disk, byte for byte" || fail "other domain's disk" "pattern mismatch"
import sys
f = open(sys.argv[1], 'rb'); off = 64 * 512; f.seek(off); data = f.read(64 * 512)
sys.exit(0 if data == bytes(((off + i) * 7 + 1) & 0xff for i in range(len(data))) else 1)
PY
in_ns "$LODGE" bridge-delete hbr0 >/dev/null 2>&1 || true
