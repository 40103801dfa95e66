#!/bin/bash
# The dashboard during a live migration: a Mini-OS guest rewriting 64 MiB
# (`dirty 64`) is migrated over loopback to `lodge migrate-receive` under a
# second --root, through a relay that holds the stream to 32 MiB/s, so
# that pre-copy goes on round after round (it never converges at that
# rate) for as long as the test needs to read the screen: the table shows
# `migr`, the detail view the round, dirty pages, pages sent and rate,
# `lodge list -l` migr:ROUND.  Then the relay is cut: the migration fails,
# the guest runs on here, and the detail view says how it ended.
. "$(dirname "$0")/../lib.sh"

integ_begin "dashboard migration" kvm minios cmd:tmux "cmd:python3:the throttling relay"
SRC=$TMPDIR_TEST/src
DST=$TMPDIR_TEST/dst
integ_root "$SRC"
integ_root "$DST"
NAME=mig$$
# A TCP listener needs the shared secret, even on loopback.
head -c 32 /dev/urandom | base64 >"$TMPDIR_TEST/secret" && chmod 600 "$TMPDIR_TEST/secret"
for r in "$SRC" "$DST"; do
	mkdir -p "$r/etc/lodge/domains"
	printf 'migration_secret_file = "%s"\n' "$TMPDIR_TEST/secret" >"$r/etc/lodge/lodge.conf"
	printf 'name = "%s"\nmemory = 256\nvcpus = 1\nkernel = "%s"\ncmdline = "run=\\"dirty 64\\""\n' \
		"$NAME" "$MINIOS" >"$r/etc/lodge/domains/$NAME.cfg"
done
lodge() { local root=$1; shift; timeout 30 "$LODGE" --root "$root" "$@"; }
tmux_begin "lodge-tuimig-$$"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# listening PORT: something listens on 127.0.0.1:PORT (from /proc, so a
# --once receiver's one connection is not used up by the probe).
listening() { awk -v p="$(printf '%04X' "$1")" 'NR > 1 && $4 == "0A" && $2 ~ (":" p "$") { f = 1 } END { exit !f }' /proc/net/tcp; }
wait_listen() { local i=0; until listening "$1"; do [ $i -ge 50 ] && return 1; sleep 0.2; i=$((i + 1)); done; }

# relay LISTEN_PORT TO_PORT BYTES_PER_S: one connection, forwarded both
# ways, the sender's direction held to the rate.
relay() {
	python3 - "$@" <<'PY' &
import socket, sys, threading, time
lport, tport, rate = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", lport))
ls.listen(1)
a, _ = ls.accept()
b = socket.create_connection(("127.0.0.1", tport))
for s in (a, b):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def pump(src, dst, limit):
    t0, sent = time.monotonic(), 0
    try:
        while True:
            d = src.recv(65536)
            if not d:
                break
            dst.sendall(d)
            sent += len(d)
            if limit:
                ahead = sent / limit - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
t = threading.Thread(target=pump, args=(b, a, 0), daemon=True)
t.start()
pump(a, b, rate)
PY
	RELAY_PID=$!
}

lodge "$SRC" create "$NAME" >/dev/null || { fail "dashboard migration" "could not create $NAME"; exit 0; }
if ! wait_for "$SRC/run/lodge/$NAME/console.log" 'dirty: pass' 20; then
	fail "dashboard migration" "the guest never started dirtying memory: $(tail -3 "$SRC/run/lodge/$NAME/console.log")"
	exit 0
fi
tmux_open dashboard 80 24 "TERM=vt100 $LODGE --root $SRC -d 0.2; sleep 30"
if ! shows 10 " $NAME +run "; then fail "dashboard migration" "the table does not list $NAME: $(screen | sed -n 3,5p)"; exit 0; fi
press Down Enter
shows 5 'vcpu0' || { fail "dashboard migration" "no detail view: $(screen | head -5)"; exit 0; }

RPORT=$(free_port)
PPORT=$(free_port)
"$LODGE" --root "$DST" migrate-receive --listen "127.0.0.1:$RPORT" --once >"$TMPDIR_TEST/recv.out" 2>&1 &
wait_listen "$RPORT" || { fail "dashboard migration" "migrate-receive never listened: $(cat "$TMPDIR_TEST/recv.out")"; exit 0; }
relay "$PPORT" "$RPORT" $((32 << 20))
wait_listen "$PPORT" || { fail "dashboard migration" "the relay never listened"; exit 0; }
"$LODGE" --root "$SRC" migrate "$NAME" "127.0.0.1:$PPORT" >"$TMPDIR_TEST/mig.out" 2>&1 &
MIG_PID=$!

# Pre-copy: progress appears after round 0 (everything the guest touched).
if shows 20 '^Migration: round [0-9]+, [0-9]+ pages dirty, [0-9]+ sent, [0-9]+ MiB/s'; then
	pass "the detail view shows the migration's round, dirty pages, pages sent and rate ($(screen | grep -E '^Migration:'))"
else
	fail "detail view migration progress" "$(screen | head -4 | tr '\n' '|') migrate: $(tail -2 "$TMPDIR_TEST/mig.out" | tr '\n' '|')"
fi
r1=$(screen | sed -nE 's/^Migration: round ([0-9]+),.*/\1/p')
if shows 10 "^Migration: round $((r1 + 1)),"; then
	pass "the progress moves on while the migration runs (round $r1 -> $((r1 + 1)))"
else
	fail "migration progress moves" "$(screen | grep -E '^Migration:') (round $r1 before)"
fi
if [ "$(screen | wc -L)" -le 80 ]; then pass "the detail view fits 80 columns during a migration"; else fail "80 columns" "$(screen | wc -L) wide"; fi
if "$LODGE" --root "$SRC" list -l | awk -v n="$NAME" '$1 == n && $13 ~ /^migr:[0-9]+$/ { f = 1 } END { exit !f }'; then
	pass "lodge list -l shows migr:ROUND ($("$LODGE" --root "$SRC" list -l | awk -v n="$NAME" '$1 == n { print $13 }'))"
else
	fail "list -l during a migration" "$("$LODGE" --root "$SRC" list -l | tr '\n' '|')"
fi
press Escape
if shows 5 "^ +[0-9]+ $NAME +migr "; then
	pass "the table's state column says migr (vt100, 80x24)"
else
	fail "table state during a migration" "$(screen | grep -E " $NAME ")"
fi

# Cut the stream: the migration fails and the guest runs on here.
kill "$RELAY_PID" 2>/dev/null
i=0
while kill -0 "$MIG_PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
if ! kill -0 "$MIG_PID" 2>/dev/null && grep -q 'it runs on here' "$TMPDIR_TEST/mig.out"; then
	pass "cutting the stream fails the migration; the guest stays"
else
	fail "a cut migration" "$(tail -2 "$TMPDIR_TEST/mig.out" | tr '\n' '|')"
fi
if shows 10 "^ +[0-9]+ $NAME +run "; then pass "the table shows run again after the failed migration"; else fail "state after a failed migration" "$(screen | grep -E " $NAME ")"; fi
press Enter
if shows 5 '^Migration: failed after [0-9]+ rounds'; then
	pass "the detail view says how the migration ended ($(screen | grep -E '^Migration:'))"
else
	fail "detail view after a failed migration" "$(screen | head -4 | tr '\n' '|')"
fi
