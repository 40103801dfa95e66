#!/bin/bash
# CPU control with real domains: Xen credit weights and caps through the
# domain's CPU cgroup, vCPU pinning, vcpu-list, and refusals that change
# nothing.  Busy guests are Lodge Mini-OS running "burn" from its command
# line.  Times come from lodge-hyp (each vCPU thread's CPU clock), and the
# weight test compares two guests pinned to the same host CPU with each
# other, so other load on the machine shifts both alike.
. "$(dirname "$0")/../lib.sh"

integ_begin "CPU control" kvm root minios
if ! awk '$0 ~ / - cgroup2 / || ($0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/)' /proc/self/mountinfo | grep -q .; then
	skip "CPU control" "no cgroup CPU controller mounted"
	exit 0
fi
CG=lodge-test-$$
NCPU=$(nproc --all)
echo "cgroup = \"$CG\"" >"$ROOT/etc/lodge/lodge.conf"
cgdir() { cat "$RUN/$1/cgroup" 2>/dev/null; }
# A domain's cgroup is MOUNT/$CG/NAME; lodge-hyp removes it and its parent
# when empty, this the parent a domain killed outright left behind.
rmdir_cg() {
	local m
	awk '$0 ~ / - cgroup2? / { print $5 }' /proc/self/mountinfo | while read -r m; do rmdir "$m/$CG" 2>/dev/null; done
}
at_exit rmdir_cg

# domain NAME [KEY = VALUE lines]: a 1-vCPU Mini-OS that burns its CPU from boot.
domain() {
	local name=$1
	shift
	{
		echo "name = \"$name\""
		echo "memory = 16"
		echo "kernel = \"$MINIOS\""
		echo 'cmdline = "run=burn+600"'
		printf '%s\n' "$@"
	} >"$ROOT/etc/lodge/domains/$name.cfg"
}
burning() { lodge console --log "$1" 2>/dev/null | grep -q 'burn: 600 s'; }
# vcpu NAME VCPU COLUMN: a column of lodge vcpu-list -o tsv
# (1 name, 2 id, 3 vcpu, 4 cpu, 5 state, 6 time s, 7 wait s, 8 affinity)
vcpu() { lodge vcpu-list -o tsv "$1" | awk -F'\t' -v v="$2" -v c="$3" '$3 == v { print $c }'; }
sched_of() { lodge sched "$1" | awk -v n="$1" '$1 == n { print $3, $4 }'; }
# cpu_seconds NAME...: each domain's CPU time, all from one snapshot
cpu_seconds() {
	local snap
	snap=$(lodge vcpu-list -o tsv)
	for n in "$@"; do awk -F'\t' -v n="$n" '$1 == n { t += $6 } END { printf "%.3f\n", t }' <<<"$snap"; done
}

# ---- weights: 256 against 512 on one host CPU --------------------------------
domain lo 'cpus = "0"'
domain hi 'cpus = "0"' 'cpu_weight = 512'
if lodge create lo && lodge create hi && wait_until 30 burning lo && wait_until 30 burning hi; then
	pass "two busy guests pinned to CPU 0, weights 256 and 512"
else
	fail "two busy guests start" "$(lodge list 2>&1)"
	exit 0
fi
if [ "$(vcpu lo 0 8)" = 0 ] && [ "$(vcpu hi 0 8)" = 0 ] && [ "$(sched_of hi)" = "512 0" ] &&
   [ "$(sched_of lo)" = "256 0" ]; then
	pass "vcpu-list and sched show the config's cpus and cpu_weight"
else
	fail "config's cpus and cpu_weight" "$(lodge vcpu-list; lodge sched hi)"
fi
# The domain's process (list's pid) is in the cgroup (its supervisor too: hostdown.sh).
if [ -d "$(cgdir hi)" ] && grep -qx "$(lodge list -o tsv | awk -F'\t' '$1 == "hi" { print $9 }')" "$(cgdir hi)/cgroup.procs"; then
	pass "each domain runs in its own cgroup ($(cgdir hi))"
else
	fail "own cgroup" "$(cgdir hi): $(cat "$(cgdir hi)/cgroup.procs" 2>&1)"
fi
sleep 1
read -r lo0 hi0 < <(cpu_seconds lo hi | paste -sd' ')
sleep 10
read -r lo1 hi1 < <(cpu_seconds lo hi | paste -sd' ')
ratio=$(awk -v a="$lo0" -v b="$lo1" -v c="$hi0" -v d="$hi1" 'BEGIN { if (b - a <= 0) print 0; else printf "%.2f", (d - c) / (b - a) }')
detail="over 10 s: weight 256 ran $(awk -v a="$lo0" -v b="$lo1" 'BEGIN { printf "%.2f", b - a }') s, 512 ran $(awk -v a="$hi0" -v b="$hi1" 'BEGIN { printf "%.2f", b - a }') s, ratio $ratio"
if awk -v r="$ratio" 'BEGIN { exit !(r >= 1.7 && r <= 2.3) }'; then
	pass "weights 256:512 share one CPU within 15% of 1:2 ($detail)"
else
	fail "weights 256:512 share one CPU 1:2" "$detail"
fi
w=$(vcpu lo 0 7)
if awk -v w="$w" 'BEGIN { exit !(w > 1) }'; then
	pass "vcpu-list shows the time each waited for the CPU (lo: $w s)"
else
	fail "wait time" "lo waited $w s while sharing CPU 0"
fi

# ---- pinning ------------------------------------------------------------------
if [ "$NCPU" -lt 2 ]; then
	skip "vcpu-pin moves a vCPU" "this host has one CPU"
else
	lodge vcpu-pin lo 0 1
	if [ "$(vcpu lo 0 8)" = 1 ] && wait_until 10 sh -c "[ \"\$($LODGE --root $ROOT vcpu-list -o tsv lo | cut -f4)\" = 1 ]"; then
		pass "vcpu-pin moves a vCPU: affinity 1, and it runs on CPU 1"
	else
		fail "vcpu-pin moves a vCPU" "$(lodge vcpu-list lo)"
	fi
	lodge vcpu-pin lo all 0-1
	if [ "$(vcpu lo 0 8)" = 0-1 ]; then
		pass "vcpu-pin all with a range"
	else
		fail "vcpu-pin all with a range" "$(lodge vcpu-list lo)"
	fi
	domain pair 'vcpus = 2' "cpus = [ '1', '0' ]"
	if lodge create pair && [ "$(vcpu pair 0 8)" = 1 ] && [ "$(vcpu pair 1 8)" = 0 ]; then
		pass "xl's list form of cpus gives each vCPU its own CPUs"
	else
		fail "cpus as a list" "$(lodge vcpu-list pair 2>&1)"
	fi
	lodge destroy pair
fi

# ---- refusals: clear, non-zero, nothing changed ----------------------------------
before="$(vcpu lo 0 8) $(sched_of lo)"
refused() {  # NAME EXPECTED-WORDS CMD...
	local name=$1 words=$2 msg rc
	shift 2
	msg=$(lodge "$@" 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -q -- "$words" <<<"$msg" && [ "$(wc -l <<<"$msg")" = 1 ] &&
	   [ "$(vcpu lo 0 8) $(sched_of lo)" = "$before" ]; then
		pass "$name: refused, nothing changed ($msg)"
	else
		fail "$name" "exit $rc: $msg; now $(vcpu lo 0 8) $(sched_of lo), was $before"
	fi
}
refused "a CPU the host lacks" "CPU $NCPU is not on this host" vcpu-pin lo 0 "$NCPU"
refused "a CPU list that is not one" "is not a CPU list" vcpu-pin lo 0 1-x
refused "a vCPU out of range" "vCPU 1 is out of range (0 to 0)" vcpu-pin lo 1 0
refused "a negative weight" "weight -5 is out of range (1 to 65535)" sched lo --weight -5
refused "weight 0" "weight 0 is out of range" sched lo --weight 0
refused "cap -1" "cap -1 is out of range" sched lo --cap -1
refused "a cap over what one vCPU can use" "cap 101 is out of range (0 to 100" sched lo --weight 300 --cap 101
refused "sched of an unknown domain" "no domain named nosuch is running" sched nosuch --weight 300
refused "vcpu-pin of an unknown domain" "no domain named nosuch is running" vcpu-pin nosuch 0 0
refused "vcpu-list of an unknown domain" "no domain named nosuch is running" vcpu-list nosuch
domain bad "cpus = \"$NCPU\""
msg=$(lodge create bad 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "bad.cfg:5: cpus: CPU $NCPU is not on this host" <<<"$msg" && [ ! -d "$RUN/bad" ]; then
	pass "a config pinning to a CPU the host lacks: file:line, nothing started"
else
	fail "config cpus the host lacks" "exit $rc: $msg"
fi

# ---- removed with the domain ---------------------------------------------------------
dir=$(cgdir hi)
lodge destroy hi
if [ -n "$dir" ] && [ ! -e "$dir" ]; then
	pass "destroy removes the domain's cgroup"
else
	fail "destroy removes the cgroup" "$dir: $(ls -d "$dir" 2>&1)"
fi

# ---- a cap of 25% --------------------------------------------------------------------
domain capped
lodge create capped && wait_until 30 burning capped
lodge sched capped --cap 25
if [ "$(sched_of capped)" = "256 25" ]; then
	pass "sched --cap sets the cap, keeping the weight"
else
	fail "sched --cap" "$(lodge sched capped)"
fi
# What the cap does, read from the cgroup's own counters: a busy guest
# under it is throttled (the kernel held it back, whatever else the host
# was doing), and never gets more than the cap of the enforcement periods
# it ran in (the kernel's count, so a late wakeup of this script or a slow
# lodge vcpu-list does not count as time it had); with the cap lifted it
# is throttled no more.  How much CPU it then gets depends on the host's
# other load, so that is not asserted.
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$(cgdir capped)/cpu.stat" 2>/dev/null; }
throttled() { stat_of nr_throttled; }
period_us() {   # the enforcement period: cgroup v2's cpu.max "QUOTA PERIOD", or v1's
	local d
	d=$(cgdir capped)
	if [ -f "$d/cpu.max" ]; then awk '{ print $2 }' "$d/cpu.max"; else cat "$d/cpu.cfs_period_us"; fi 2>/dev/null
}
sleep 1
t0=$(throttled); p0=$(stat_of nr_periods); c0=$(cpu_seconds capped)
sleep 8
c1=$(cpu_seconds capped); p1=$(stat_of nr_periods); t1=$(throttled)
per=$(period_us)
pct=$(awk -v a="$c0" -v b="$c1" -v n=$((${p1:-0} - ${p0:-0})) -v u="${per:-0}" \
	'BEGIN { if (n <= 0 || u <= 0) print "none"; else printf "%.1f", (b - a) * 100 / (n * u / 1e6) }')
if [ -n "$t0" ] && [ "${t1:-0}" -gt "$t0" ] && [ "$pct" != none ] && awk -v p="$pct" 'BEGIN { exit !(p <= 30) }'; then
	pass "cap 25 holds a busy guest to 25% of a CPU: $pct% of the $((p1 - p0)) periods of $per us it ran in, throttled $((t1 - t0)) times"
else
	fail "cap 25 holds a busy guest to 25%" "$pct% of $((${p1:-0} - ${p0:-0})) periods of '$per' us, nr_throttled $t0 -> $t1 ($(cgdir capped)/cpu.stat)"
fi
lodge sched capped --cap 0
sleep 1                          # a period that began under the cap ends
t2=$(throttled); c0=$(cpu_seconds capped)
sleep 3
c1=$(cpu_seconds capped); t3=$(throttled)
pct=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", (b - a) * 100 / 3 }')
if [ "$(sched_of capped)" = "256 0" ] && [ -n "$t2" ] && [ "$t3" = "$t2" ] && awk -v p="$pct" 'BEGIN { exit !(p > 0) }'; then
	pass "cap 0 lifts the cap: no longer throttled ($pct% over 3 s)"
else
	fail "cap 0 lifts the cap" "sched $(sched_of capped), nr_throttled $t2 -> $t3, $pct% over 3 s"
fi

# ---- a host without a CPU controller: domains run, weights and caps are refused ----------
domain plain
domain wanted 'cap = 20'
out=$(unshare -m sh -c '
	for m in $(awk '"'"'$0 ~ / - cgroup2? / { print $5 }'"'"' /proc/self/mountinfo); do umount -l "$m"; done
	"$1" --root "$2" create plain; echo "rc=$?"
	"$1" --root "$2" create wanted; echo "rc=$?"' sh "$LODGE" "$ROOT" 2>&1)
if grep -q '^rc=0' <<<"$out" && grep -q 'domain plain runs without weight or cap: no cgroup CPU controller is mounted' <<<"$out" &&
   [ "$(sched_of plain)" = "- -" ]; then
	pass "without a CPU controller a domain runs, with one warning, and sched shows no weight or cap"
else
	fail "a domain without a CPU controller" "$out; $(lodge sched plain 2>&1)"
fi
if grep -q '^rc=1' <<<"$out" && grep -q 'lodge-hyp: error: no cgroup CPU controller is mounted' <<<"$out" &&
   [ ! -d "$RUN/wanted" ]; then
	pass "without a CPU controller a domain that asks for a cap is refused, nothing left"
else
	fail "a cap without a CPU controller" "$out; $(ls "$RUN")"
fi
msg=$(lodge sched plain --weight 300 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'runs without a CPU cgroup' <<<"$msg"; then
	pass "sched on a domain without a cgroup says why"
else
	fail "sched without a cgroup" "exit $rc: $msg"
fi
lodge destroy plain

# ---- a killed lodge-hyp: the agent removes its cgroup with its stale entry ------------
dir=$(cgdir lo)
pid=$(lodge list -o tsv | awk -F'\t' '$1 == "lo" { print $9 }')
kill -9 "$pid"
sleep 0.3
lodge list >/dev/null 2>&1
if [ -n "$dir" ] && [ ! -e "$dir" ] && [ ! -d "$RUN/lo" ]; then
	pass "a killed domain's cgroup goes with its stale entry"
else
	fail "a killed domain's cgroup goes" "$dir: $(ls -d "$dir" 2>&1)"
fi
