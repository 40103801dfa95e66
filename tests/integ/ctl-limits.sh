#!/bin/bash
# No client keeps root from a domain (lodge-hyp(8), CONTROL SOCKET): idle
# connections of a stats-group user, 16 and then 200 of them from many
# users, leave root able to pause, unpause, list and destroy; users other
# than root share 16 connections (8 for any one uid) and the one over the
# limit is told "too many clients"; root makes room among its own; a half
# request line and an idle client are closed by lodge-hyp; lodge list
# shows a domain it could not ask (state '?', the reason on stderr, exit
# 1); the dashboard reconnects when an idle connection was closed.
# The clients are one Python process as root that connects as any uid
# (setresuid, keeping root to come back), driven line by line.
. "$(dirname "$0")/../lib.sh"

integ_begin "control socket limits" kvm root minios cmd:python3
R=$ROOT
CONTROL=54331 STATS=54332
U1=61001                       # the stats-group user who opens connections
as_stats() { timeout 30 setpriv --reuid="$1" --regid="$1" --groups=$STATS "$LODGE" --root "$R" "${@:2}"; }
chmod 755 "$T"
mkdir -p "$R/etc/lodge/domains"
chmod -R a+rX "$R" "$(dirname "$LODGE")" 2>/dev/null
printf 'control_group = "%s"\nstats_group = "%s"\n' $CONTROL $STATS >"$R/etc/lodge/lodge.conf"
printf 'name = "lim"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$R/etc/lodge/domains/lim.cfg"

cat >"$T/clients.py" <<'EOF'
# Control-socket clients on command, one line in, one line out:
#   open PATH UID N   N connections as UID (in the stats group), idle
#   count             of all opened: "open X refused Y closed Z" (refused:
#                     got "error too many clients"; closed: ended unasked)
#   half PATH | idle PATH   one connection, half a request line or
#                     nothing: "closed after S s: REPLY" or "open after S s"
#   busy PATH SECS    a request every half second for SECS: "open" if
#                     every one was answered
import os, select, socket, sys, time

stats = int(sys.argv[1])
conns = []                     # [socket, state]

def connect(path, uid):
    if uid:
        os.setgroups([stats])
        os.setresgid(uid, uid, 0)
        os.setresuid(uid, uid, 0)
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return s
    finally:
        if uid:
            os.setresuid(0, 0, 0)
            os.setresgid(0, 0, 0)
            os.setgroups([])

def wait_close(s, limit):
    start, data = time.monotonic(), b""
    while time.monotonic() - start < limit:
        if select.select([s], [], [], limit)[0]:
            chunk = s.recv(4096)
            if not chunk:
                return "closed after %.1f s: %s" % (time.monotonic() - start, data.decode().strip() or "-")
            data += chunk
    return "open after %.0f s" % limit

for line in sys.stdin:
    w = line.split()
    if w[0] == "quit":
        break
    if w[0] == "open":
        for _ in range(int(w[3])):
            conns.append([connect(w[1], int(w[2])), "open"])
        out = "opened %s" % w[3]
    elif w[0] == "count":
        for c in conns:
            if c[1] != "open":
                continue
            try:
                data = c[0].recv(4096, socket.MSG_DONTWAIT)
                c[1] = "refused" if data.startswith(b"error too many clients") else "closed"
            except BlockingIOError:
                pass
        out = " ".join("%s %d" % (k, sum(c[1] == k for c in conns)) for k in ("open", "refused", "closed"))
    elif w[0] in ("half", "idle"):
        s = connect(w[1], 0)
        if w[0] == "half":
            s.sendall(b"lodge/1 sta")
        out = wait_close(s, 30)
        s.close()
    elif w[0] == "busy":
        s, out, end = connect(w[1], 0), "open", time.monotonic() + float(w[2])
        f = s.makefile("rb")
        while time.monotonic() < end and out == "open":
            s.sendall(b"lodge/1 vcpu-list\n")
            if not f.readline().startswith(b"ok"):
                out = "closed"
            while f.readline() not in (b"\n", b""):
                pass
            time.sleep(0.5)
        s.close()
    else:
        out = "unknown command " + w[0]
    print(out, flush=True)
EOF
coproc HOLD { exec python3 -u "$T/clients.py" $STATS; }
ask() {  # ask COMMAND...: one line to the clients, their one-line answer
	echo "$*" >&"${HOLD[1]}"
	read -r -t 120 answer <&"${HOLD[0]}" || answer="(no answer)"
	echo "$answer"
}
state() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $5 }'; }
root_drives() {  # root pauses, unpauses and lists it; "" or what failed
	lodge pause lim >/dev/null 2>"$T/err" || { echo "pause: $(cat "$T/err")"; return; }
	[ "$(state lim)" = paused ] || { echo "state $(state lim) after pause"; return; }
	lodge unpause lim >/dev/null 2>"$T/err" || { echo "unpause: $(cat "$T/err")"; return; }
	lodge list >"$T/list" 2>"$T/err" || { echo "list: exit $?, $(cat "$T/err")"; return; }
	grep -Eq '^lim +[0-9]+ .* r-----' "$T/list" || echo "list: $(cat "$T/list")"
}

lodge create lim >/dev/null || { fail "control socket limits" "create failed"; exit 0; }
SOCK=$RUN/lim/control

# 16 idle connections of one stats-group user: 8 are its share.
ask open "$SOCK" $U1 16 >/dev/null
why=$(root_drives)
counts=$(ask count)
if [ -z "$why" ] && [ "$counts" = "open 8 refused 8 closed 0" ]; then
	pass "16 idle connections of a stats-group user: 8 kept, 8 refused as too many; root pauses, unpauses, lists"
else
	fail "16 idle connections" "${why:-root fine}; clients: $counts"
fi

# That user's own lodge list: the domain it cannot ask, with the reason.
out=$(as_stats $U1 list 2>"$T/err"); rc=$?
if [ $rc -ne 0 ] && grep -Eq '^lim +- +- +- +\? +-$' <<<"$out" && [ "$(wc -l <"$T/err")" = 1 ] &&
   grep -q 'domain lim: cannot ask its status: too many clients' "$T/err"; then
	pass "lodge list shows a domain it could not ask: state '?', exit $rc, $(cut -c1-100 "$T/err")"
else
	fail "lodge list with a domain it cannot ask" "rc $rc: $out; stderr: $(cat "$T/err")"
fi

# 200 in all, 8 from each of 23 more users: users other than root share 16.
for u in $(seq 61002 61024); do ask open "$SOCK" "$u" 8 >/dev/null; done
why=$(root_drives)
counts=$(ask count)
if [ -z "$why" ] && [ "$counts" = "open 16 refused 184 closed 0" ]; then
	pass "200 idle connections of 24 stats-group users: 16 kept, 184 refused; root pauses, unpauses, lists"
else
	fail "200 idle connections" "${why:-root fine}; clients: $counts"
fi
msg=$(timeout 30 setpriv --reuid=61030 --regid=61030 --groups=$CONTROL "$LODGE" --root "$R" pause lim 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'too many clients' <<<"$msg" && [ "$(state lim)" = running ]; then
	pass "a control-group user over the shared limit is refused: $(cut -c1-110 <<<"$msg")"
else
	fail "shared limit for users other than root" "rc $rc: $msg; state $(state lim)"
fi

# Root fills every slot itself: each new one makes room, users other
# than root's first, then root's own longest idle.
ask open "$SOCK" 0 64 >/dev/null
why=$(root_drives)
counts=$(ask count)
if [ -z "$why" ] && [ "$counts" = "open 63 refused 184 closed 17" ]; then
	pass "64 idle root connections take the 16 others' slots, and root's next one takes its own longest idle"
else
	fail "root makes room" "${why:-root fine}; clients: $counts"
fi
if lodge destroy lim >/dev/null 2>"$T/err" && [ ! -e "$RUN/lim" ]; then
	pass "with every slot held, root destroys the domain"
else
	fail "root destroys" "$(cat "$T/err")"
fi

# A short idle timeout, on a domain lodge-hyp runs by itself.
if ! msg=$(timeout 30 "$HYP" --kernel "$MINIOS" --memory 32 --name quick --runtime-dir "$RUN" --detach \
	   --control-idle-timeout 2 2>&1); then
	fail "control socket timeouts" "lodge-hyp --control-idle-timeout 2: $msg"
	exit 0
fi
SOCK=$RUN/quick/control
out=$(ask half "$SOCK")
if [[ $out == "closed after "*": error request line not finished within 2 s" ]]; then
	pass "a half request line is closed with an error: $out"
else
	fail "half request line closed" "$out"
fi
out=$(ask idle "$SOCK")
if [[ $out == "closed after "*": -" ]]; then
	pass "an idle client is closed without a word after the idle timeout: $out"
else
	fail "idle client closed" "$out"
fi
out=$(ask busy "$SOCK" 5)
if [ "$out" = open ]; then
	pass "a client asking every half second stays connected past the 2 s idle timeout"
else
	fail "busy client kept" "$out"
fi
# The dashboard keeps its connections between samples, 3 s apart here:
# each time lodge-hyp has closed them, and it connects again.
lodge top -b -n 3 -d 3 >"$T/top" 2>"$T/err"
if ! grep -Eq '^ +[0-9]+ quick +\?' "$T/top" && [ ! -s "$T/err" ] &&
   [ "$(grep -v '^$' "$T/top" | tail -1 | awk '{ print $2, $3 }')" = "quick running" ]; then
	pass "the dashboard connects again after lodge-hyp closed its idle connections"
else
	fail "dashboard reconnects" "$(cat "$T/top" "$T/err")"
fi
msg=$(timeout 30 "$HYP" --kernel "$MINIOS" --name bad --runtime-dir "$RUN" --control-idle-timeout 0 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'control-idle-timeout 0 is out of range (1 to 86400' <<<"$msg" && [ ! -e "$RUN/bad" ]; then
	pass "--control-idle-timeout 0 is refused: $(cut -c1-90 <<<"$msg")"
else
	fail "idle timeout range" "rc $rc: $msg"
fi
ask quit >/dev/null
