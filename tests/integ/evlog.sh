#!/bin/bash
# The event log (ROOT/var/log/lodge/lodge.log) as a sysadmin reads it:
# each lifecycle event of a domain with its time and who asked, the uid and
# pid the kernel gives for the client (root, and a user of the control
# group played with setpriv), the guest's own poweroff and crash, the face
# a request names; `lodge log` with NAME, -n and -f (across a rotation);
# `lodge dmesg` with timestamped lines; syslog where journald runs.
. "$(dirname "$0")/../lib.sh"

integ_begin "event log" kvm root minios "cmd:setpriv:util-linux" "cmd:python3"
R=$ROOT
CONTROL=54331
LOG=$R/var/log/lodge/lodge.log
ISO='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2}'
printf 'control_group = "%s"\n' $CONTROL >"$R/etc/lodge/lodge.conf"
chmod 755 "$T"
chmod -R a+rX "$R" "$(dirname "$LODGE")" 2>/dev/null
mkcfg() {  # NAME [EXTRA]
	{
		printf 'name = "%s"\nmemory = 32\nkernel = "%s"\n' "$1" "$MINIOS"
		[ -z "${2:-}" ] || printf "extra = '%s'\n" "$2"
	} >"$DOMS/$1.cfg"
}
# by root|user ARGS...: lodge ARGS as root or as uid 65534 in the control
# group; $PID is the lodge process's pid (bash execs it, after saying its
# own pid on a descriptor root opened).
by() {
	local who=$1 rc
	shift
	if [ "$who" = root ]; then
		timeout 30 bash -c 'echo $$ >&3; exec "$@"' - "$LODGE" --root "$R" "$@" 3>"$T/pid"
	else
		timeout 30 setpriv --reuid=65534 --regid=65534 --groups=$CONTROL \
			bash -c 'echo $$ >&3; exec "$@"' - "$LODGE" --root "$R" "$@" 3>"$T/pid"
	fi
	rc=$?
	PID=$(cat "$T/pid")
	return $rc
}
logged() { grep -Eq -- "$1" "$LOG" 2>/dev/null; }   # ERE: a line of the log is there

# ---- 1. create, pause, unpause, reboot, destroy by two users ---------------
mkcfg ev
by root create ev >/dev/null || { fail "event log" "create failed"; exit 0; }
P_CREATE=$PID
by user pause ev && P_PAUSE=$PID &&
by user unpause ev && P_UNPAUSE=$PID &&
by root reboot ev && P_REBOOT=$PID || fail "event log" "pause, unpause or reboot failed"

# lodge dmesg: the reboot's lines in lodge-hyp.log, each with its time.
if wait_until 10 eval 'lodge dmesg ev | grep -Eq "^$ISO lodge-hyp: restarting domain ev$"'; then
	pass "lodge dmesg shows the domain's lodge-hyp.log with a time on each line"
else
	fail "lodge dmesg" "$(lodge dmesg ev 2>&1 | tail -3)"
fi
if [ "$(lodge dmesg ev | grep -vEc "^$ISO lodge-hyp: ")" = 0 ] && ! lodge dmesg ev | grep -q $'\r'; then
	pass "every lodge-hyp.log line is timestamped and ends in a plain newline"
else
	fail "lodge-hyp.log lines" "$(lodge dmesg ev | cat -A | head -3)"
fi

# lodge log -f: wait until it has shown the last event (then it watches),
# make a new one, and wait for it to show it.
"$LODGE" --root "$R" log -f -n 1 ev >"$T/follow" 2>&1 &
FOLLOW=$!
if wait_until 10 logged " ev rebooted uid=0,pid=$P_REBOOT from the host$" && wait_until 10 test -s "$T/follow" &&
   by user pause ev && P_PAUSE2=$PID && wait_for "$T/follow" " ev paused uid=65534,pid=$P_PAUSE2 -$" 10 &&
   [ "$(wc -l <"$T/follow")" = 2 ]; then
	pass "lodge log -f shows a new event as it is written"
else
	fail "lodge log -f" "$(cat "$T/follow")"
fi
kill "$FOLLOW" 2>/dev/null
wait "$FOLLOW" 2>/dev/null

by root destroy ev >/dev/null && P_DESTROY=$PID
wait_until 10 logged " ev destroyed uid=0,pid=$P_DESTROY -$"
out=$(lodge log ev)
want="created uid=0,pid=$P_CREATE id [0-9]+
paused uid=65534,pid=$P_PAUSE -
unpaused uid=65534,pid=$P_UNPAUSE -
rebooted uid=0,pid=$P_REBOOT from the host
paused uid=65534,pid=$P_PAUSE2 -
destroyed uid=0,pid=$P_DESTROY -"
got=$(sed -E "s/^$ISO ev //" <<<"$out")
if grep -Eqx -- "$(head -1 <<<"$want")" <<<"$(head -1 <<<"$got")" && [ "$(tail -n +2 <<<"$got")" = "$(tail -n +2 <<<"$want")" ] &&
   [ "$(grep -Ec "^$ISO ev " <<<"$out")" = 6 ]; then
	pass "lodge log: each event in order, with its time and the uid and pid of who asked (root's, and the control group user's)"
else
	fail "lodge log" "$out"
fi
out=$(lodge log ev -n 2)
if [ "$(wc -l <<<"$out")" = 2 ] && grep -q " ev paused uid=65534,pid=$P_PAUSE2 " <<<"$(head -1 <<<"$out")" &&
   grep -q " ev destroyed uid=0," <<<"$(tail -1 <<<"$out")"; then
	pass "lodge log ev -n 2: its last two events"
else
	fail "lodge log -n 2" "$out"
fi

# ---- 2. the guest's own end, and the face a request names ------------------
mkcfg pw
lodge create pw >/dev/null || fail "guest poweroff" "create failed"
# The dashboard names itself in its requests; the log shows the face
# beside what the kernel says.  A face is a word: it cannot pose as a uid.
reply=$(python3 - "$R/run/lodge/pw/control" <<'EOF'
import os, socket, sys
for line in (b"lodge/1:dashboard pause\n", b"lodge/1:uid=0 unpause\n"):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(line)
    print(os.getpid(), s.makefile().readline().strip())
EOF
)
P_PY=$(head -1 <<<"$reply" | cut -d' ' -f1)
if wait_until 10 logged " pw paused uid=0,pid=$P_PY,via=dashboard -$" && grep -q "^$P_PY ok$" <<<"$reply" &&
   grep -q "error protocol version" <<<"$(tail -1 <<<"$reply")" && ! logged " pw unpaused "; then
	pass "a request's face is logged beside the kernel's uid and pid; a face that is not a word is refused"
else
	fail "face in the event log" "$reply; $(grep ' pw ' "$LOG")"
fi
lodge unpause pw
# The dashboard itself: p on the domain's row; the pane's process is it.
if command -v tmux >/dev/null; then
	tmux_begin "lodge-evlog-$$"
	tmux_open dashboard 100 24 "TERM=xterm exec $LODGE --root $R -d 0.5"
	P_TUI=$(pane pane_pid)
	if shows 10 ' pw ' && press / && type_text pw &&
	   press Enter Home Down && shows 5 '^ *[0-9]+ pw .*' &&
	   press p && wait_until 10 logged " pw paused uid=0,pid=$P_TUI,via=dashboard -$"; then
		pass "the dashboard's pause is logged with its pid and via=dashboard"
	else
		fail "dashboard in the event log" "$(grep ' pw ' "$LOG" | tail -2); $(screen | tail -3)"
	fi
	tmux kill-server 2>/dev/null
	lodge unpause pw
else
	skip "the dashboard in the event log" "tmux not installed"
fi
echo poweroff | lodge console pw >/dev/null 2>&1
if wait_until 20 logged " pw powered-off guest " && wait_until 10 eval '! lodge list pw >/dev/null 2>&1'; then
	pass "a guest's own poweroff is logged as the guest's: $(grep ' pw powered-off ' "$LOG" | cut -d' ' -f2-)"
else
	fail "guest poweroff" "$(grep ' pw ' "$LOG")"
fi
mkcfg cr 'run="crash"'
lodge create cr >/dev/null 2>&1
if wait_until 20 logged " cr crashed guest .+"; then
	pass "a guest's crash is logged with the reason: $(grep ' cr crashed ' "$LOG" | cut -d' ' -f4- | cut -c1-80)"
else
	fail "guest crash" "$(grep ' cr ' "$LOG")"
fi
out=$(lodge log pw -n 100)
if [ -n "$out" ] && [ "$(grep -vc " pw " <<<"$out")" = 0 ] && [ "$(lodge log -n 100 | grep -c ' ev ')" = 6 ]; then
	pass "lodge log NAME shows that domain's events only"
else
	fail "lodge log NAME" "$out"
fi

# A signal to the domain's lodge-hyp: logged with the sender's pid, not
# that of the supervisor passing it on to the domain's process.
mkcfg sig
lodge create sig >/dev/null || fail "signal in the event log" "create failed"
SUP=$(pgrep -f -- "--name sig .*--runtime-dir $R/run/lodge " | head -1)
bash -c 'echo $$ >&3; exec kill -TERM "$1"' - "$SUP" 3>"$T/pid"
P_KILL=$(cat "$T/pid")
if [ -n "$SUP" ] && wait_until 10 logged " sig destroyed uid=0,pid=$P_KILL by signal Terminated$" &&
   [ "$(grep -c ' sig destroyed ' "$LOG")" = 1 ]; then
	pass "a signal that ends a domain is logged once, with its sender's pid"
else
	fail "signal in the event log" "supervisor ${SUP:-not found}: $(grep ' sig ' "$LOG")"
fi

# ---- 3. who may read it; rotation; syslog ----------------------------------
if [ "$(stat -c %a "$(dirname "$LOG")")" = 750 ] && [ "$(stat -c %a "$LOG")" = 640 ] &&
   ! out=$(timeout 30 setpriv --reuid=65534 --regid=65534 --groups=$CONTROL "$LODGE" --root "$R" log 2>&1) &&
   grep -q "Permission denied" <<<"$out"; then
	pass "the log is root's (directory 0750, file 0640): another user's lodge log is refused ($out)"
else
	fail "log permissions" "$(stat -c '%a %U' "$(dirname "$LOG")" "$LOG"); $out"
fi
# Rotation as logrotate's create does it: the file renamed away, the next
# event makes a new one (each line opens the log anew), and a follower
# goes on to the new file.
mkcfg rot
"$LODGE" --root "$R" log -f -n 1 >"$T/follow2" 2>&1 &
FOLLOW=$!
if wait_until 10 test -s "$T/follow2" && mv "$LOG" "$LOG.1" && lodge create rot >/dev/null &&
   wait_until 10 logged " rot created uid=0," && wait_for "$T/follow2" " rot created " 10 &&
   ! grep -q " rot " "$LOG.1"; then
	pass "a rotated log is made anew by the next event, and lodge log -f follows onto it"
else
	fail "rotation" "$(ls -l "$(dirname "$LOG")"); $(cat "$T/follow2")"
fi
kill "$FOLLOW" 2>/dev/null
wait "$FOLLOW" 2>/dev/null
lodge destroy rot >/dev/null
if command -v logrotate >/dev/null; then
	sed "s|/var/log/lodge|$R/var/log/lodge|" "$TOP/etc/logrotate.d/lodge" >"$T/logrotate.conf"
	if logrotate -f -s "$T/logrotate.state" "$T/logrotate.conf" 2>"$T/lr.err" && [ -f "$LOG.1" ] &&
	   lodge create rot >/dev/null && wait_until 10 logged " rot created "; then
		pass "etc/logrotate.d/lodge rotates the log; the next event starts the new one"
	else
		fail "logrotate config" "$(cat "$T/lr.err")"
	fi
	lodge destroy rot >/dev/null 2>&1
else
	skip "etc/logrotate.d/lodge under logrotate" "logrotate not installed"
fi
if command -v journalctl >/dev/null && [ -S /run/systemd/journal/socket ] && [ -S /dev/log ]; then
	if wait_until 10 eval 'journalctl -t lodge -o cat --no-pager -n 200 | grep -q "^ev created uid=0,pid=$P_CREATE "'; then
		pass "journald has the events (syslog ident lodge)"
	else
		fail "syslog" "$(journalctl -t lodge -o cat --no-pager -n 5 2>&1)"
	fi
else
	skip "event log in journald" "journald does not run here (no /run/systemd/journal/socket or /dev/log)"
fi
if ! out=$(lodge dmesg ev 2>&1) && grep -q "no domain named ev is running" <<<"$out"; then
	pass "lodge dmesg of a domain not running says so"
else
	fail "lodge dmesg not running" "$out"
fi
