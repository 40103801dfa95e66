#!/bin/bash
# The dashboard in a real terminal: tmux runs `lodge`, the test types keys
# with send-keys and reads the screen with capture-pane.  Mini-OS guests
# burn CPU and touch memory so the live figures have something to show.
. "$(dirname "$0")/../lib.sh"

integ_begin "dashboard" kvm minios cmd:tmux
# A tmux server of our own: other tests on this machine may start, kill or
# reconfigure the default one.
tmux_begin "lodge-tui-$$"
mkdir -p "$ROOT/var/lib/lodge/images"
at_exit '"$LODGE" bridge-delete "lodgetui$$" >/dev/null 2>&1'
for n in alpha beta; do
	printf 'name = "%s"\nmemory = 64\nvcpus = 1\nkernel = "%s"\n' "$n" "$MINIOS" >"$ROOT/etc/lodge/domains/$n.cfg"
	lodge create "$n" >/dev/null || { fail "dashboard" "could not create $n"; exit 0; }
done

row() { screen | grep -E "^ +[0-9]+ $1 "; }
# first_row NAME: NAME's row comes before the other's (alpha, beta).
first_row() { screen | grep -E '^ +[0-9]+ (alpha|beta) ' | head -1 | grep -q "$1"; }
listed() { lodge list -o tsv | grep -q "^$1"$'\t'; }
start() {   # start TERM [COLS ROWS]
	tmux_open dashboard "${2:-80}" "${3:-24}" "TERM=$1 $LODGE --root $ROOT -d 0.5; sleep 30"
}

start xterm
if shows 10 'Domain-0' && shows 10 ' alpha ' && shows 10 ' beta '; then
	pass "the table lists Domain-0 and the running domains"
else
	fail "the table lists the domains" "$(screen | head -8)"
fi
if screen | sed -n 3p | grep -q 'ID.*NAME.*ST.*%CPU.*MEM.*RSS'; then pass "column header"; else fail "column header" "$(screen | sed -n 3p)"; fi
if [ "$(screen | wc -L)" -le 80 ] && screen | tail -1 | grep -q 'Help.*Quit'; then
	pass "fits 80x24 with the key bar on the bottom line"
else
	fail "80x24 layout" "$(screen | tail -2)"
fi

# CPU% rises when the guest burns CPU.
( echo "burn 20"; sleep 0.5 ) | lodge console alpha >/dev/null 2>&1
if shows 10 '^ +[0-9]+ alpha +run +([2-9][0-9]|1[0-9][0-9])\.[0-9]'; then
	pass "CPU% rises while the guest burns CPU"
else
	fail "CPU% rises" "$(row alpha)"
fi
# Resident memory rises when the guest touches memory.
before=$(row beta | awk '{ print $6 }')
( echo "touch 40"; sleep 0.5 ) | lodge console beta >/dev/null 2>&1
rss_rose() {
	after=$(row beta | awk '{ print $6 }')
	[ -n "$before" ] && [ -n "$after" ] && [ "$after" -ge $((before + 30)) ]
}
if wait_until 10 rss_rose; then
	pass "resident memory rises when the guest touches 40 MiB ($before -> $after MiB)"
else
	fail "resident memory rises" "$before -> $after: $(row beta)"
fi

# Sort by CPU puts the busy one first; filter shows only matches.
press P
if wait_until 5 first_row alpha; then pass "P sorts by CPU"; else fail "P sorts by CPU" "$(screen | sed -n 4,7p)"; fi
# M sorts by resident memory (beta touched 40 MiB); < and > move the sort
# column one either way; I inverts.
press M
if shows 5 'sort RSS' && wait_until 5 first_row beta; then
	pass "M sorts by resident memory"
else
	fail "M sorts by memory" "$(screen | sed -n 2,7p)"
fi
press '>'
if shows 5 'sort VCPUS'; then pass "> moves the sort to the next column"; else fail "> sort column" "$(screen | sed -n 2p)"; fi
press '<' '<'
if shows 5 'sort MEM( |$)'; then pass "< moves the sort to the previous column"; else fail "< sort column" "$(screen | sed -n 2p)"; fi
press M I
if shows 5 'sort RSS \(rev\)' && wait_until 5 first_row alpha; then
	pass "I inverts the sort"
else
	fail "I inverts the sort" "$(screen | sed -n 2,7p)"
fi
press I /
type_text beta
press Enter
if hides 5 ' alpha ' && has ' beta '; then pass "/ filters by name"; else fail "/ filter" "$(screen | sed -n 4,7p)"; fi
press / Escape
shows 5 ' alpha ' || true

# Help overlay, then back.
press '?'
if shows 5 'Lodge dashboard keys' && has 'Ctrl-\]'; then pass "? shows the help overlay"; else fail "help overlay" "$(screen | head -5)"; fi
press x
if hides 5 'Lodge dashboard keys'; then pass "any key closes the help"; else fail "help closes" "still shown"; fi

# select NAME: filter down to it and move onto its row.
select_dom() { press / Escape /; type_text "$1"; press Enter Home Down; }
select_dom beta
press p
if shows 5 'PAUSE' && lodge list -o tsv | grep -q $'\tpaused\t'; then pass "p pauses the selected domain"; else fail "pause from the keyboard" "$(screen | sed -n 4,7p)"; fi
# Sort by state: running before paused (as xentop and htop put the live
# first), not the words' alphabet: alpha (running) above beta (paused).
press /
shows 5 'filter: ' && press Escape && hides 5 'filter( /|: )'
press M '<' '<' '<'
if shows 5 'sort STATE' && shows 5 ' beta +PAUSE' &&
   [ "$(screen | grep -Eo '^ +[0-9]+ (alpha|beta) ' | awk '{ print $2 }' | paste -sd,)" = alpha,beta ]; then
	pass "sort by state puts the running above the paused"
else
	fail "sort by state" "$(screen | sed -n 2,7p)"
fi
press '<' '<'
select_dom beta
press p
if shows 5 'unpause .*: done' && ! lodge list -o tsv | grep -q $'\tpaused\t'; then pass "p again unpauses it"; else fail "unpause from the keyboard" "$(screen | tail -2)"; fi

# Detail view: per-vCPU line and console tail; Esc returns.
press Enter
if shows 5 'vcpu0' && shows 5 'console \(last lines\)' && screen | grep -q 'minios>'; then
	pass "Enter shows the detail view with vCPUs and the console's last lines"
else
	fail "detail view" "$(screen | head -12)"
fi
if has 'vcpu0 +\[.*\] +[0-9.]+%  wait +[0-9.]+%' && has 'weight 256, cap none, wait'; then
	pass "the detail view shows each vCPU's wait% and the domain's weight and cap"
else
	fail "detail view wait%" "$(screen | sed -n 1,8p)"
fi
press Escape

# Console attach and return, the screen restored.
press c
if shows 5 'Ctrl-\] returns' ; then
	press Enter
	if shows 5 'minios> '; then pass "c attaches the console"; else fail "console attach" "$(screen | tail -3)"; fi
	press C-]
	if shows 5 'ID +NAME' && shows 5 'back from the console'; then pass "Ctrl-] returns to the dashboard, restored"; else fail "console return" "$(screen | head -5)"; fi
else
	fail "console attach" "$(screen | tail -3)"
fi

# Shutdown with confirmation: 'n' cancels, 'y' does it.
victim=beta
select_dom beta
press s
if shows 3 'Shut down .*\(y/n\)'; then pass "shutdown asks for confirmation"; else fail "shutdown confirmation" "$(screen | tail -2)"; fi
press n s y
if shows 15 "shutdown $victim: done" && wait_until 15 eval '! listed "$victim"'; then
	pass "shutdown from the keyboard powers the guest off"
else
	fail "shutdown from the keyboard" "$(lodge list -o tsv)"
fi

# Destroy with confirmation.
select_dom alpha
press D y
no_domains() { [ -z "$(lodge list -o tsv | awk -F'\t' 'NR > 1')" ]; }
if wait_until 10 no_domains; then pass "D destroys the selected domain"; else fail "destroy from the keyboard" "$(lodge list -o tsv)"; fi

# The create form: invalid input creates nothing; valid input creates a
# guest with a new file-backed disk and a bridged vif.
"$LODGE" bridge-create "lodgetui$$" >/dev/null
press / Escape                                           # no filter: all domains
press n
if shows 5 'Create a domain'; then pass "n opens the create form"; else fail "create form" "$(screen | head -3)"; fi
# Its default guest, and why: Mini-OS on PVM; Debian on hardware KVM where
# share/debian/ has built it.
minios_default=1
if [ "$(kvm_backend)" = pvm ]; then
	if screen | sed -n 2p | grep -q "Mini-OS: this host's KVM is PVM" && screen | grep -q '^Command line *$'; then
		pass "on this PVM host the form offers Mini-OS and says why"
	else
		fail "form default guest on PVM" "$(screen | sed -n 1,7p)"
	fi
elif [ -f "$BUILD/debian/vmlinuz" ] && [ -f "$BUILD/debian/initrd.img" ]; then
	minios_default=0
	if screen | sed -n 2p | grep -q 'Debian guest: this host has hardware KVM' &&
	   screen | grep -q 'Command line .*console=ttyS0 root=/dev/vda'; then
		pass "on this hardware KVM host the form offers the Debian guest and says why"
	else
		fail "form default guest on hardware KVM" "$(screen | sed -n 1,9p)"
	fi
else
	if screen | sed -n 2p | grep -q 'Mini-OS: hardware KVM, but no Debian guest'; then
		pass "hardware KVM without the Debian guest built: the form offers Mini-OS and says why"
	else
		fail "form default guest" "$(screen | sed -n 1,7p)"
	fi
fi
press Escape
hides 5 'Create a domain' || true
press n
shows 5 'Create a domain' || true
press Down BSpace BSpace BSpace 0 Enter                        # memory 0 (was 128), name left empty
# Each field shows the message lodge check gives for its key (cut to fit).
if shows 5 '^Name +! missing: every domain' && shows 5 '^Memory \(MiB\) +0 +! 0 MiB is out of range'; then
	pass "the form's fields show lodge check's messages (name missing, memory out of range)"
else
	fail "the form's messages" "$(screen | sed -n 3,5p)"
fi
press Down Down Down Down Down Down Down Down Enter     # to [ Create ]
if shows 5 'nothing created' && ! ls "$ROOT/etc/lodge/domains" | grep -q '^\.cfg'; then
	pass "invalid form input shows the error and creates nothing"
else
	fail "invalid form input" "$(screen | head -16)"
fi
press Escape
hides 5 'Create a domain' || true
press n
shows 5 'Create a domain' || true
type_text gamma                                           # name
shows 5 '^Name +gamma( |$)' || true
press Down Down Down Down Down Down                       # to Disk
type_text new:8
shows 5 '^Disk +new:8( |$)' || true
press Down Down
type_text "lodgetui$$"
shows 5 "^Bridge +lodgetui$$"'( |$)' || true
press Down Down Enter
if shows 15 'created gamma' && shows 10 ' gamma ' && [ -f "$ROOT/etc/lodge/domains/gamma.cfg" ] &&
   [ -f "$ROOT/var/lib/lodge/images/gamma-vda.img" ] && ip link show | grep -q "master lodgetui$$"; then
	pass "the form creates a guest with a new disk and a bridged vif, and it is listed"
else
	fail "create from the form" "$(screen | tail -4)"
fi
# The guest it made boots: its console reaches the Mini-OS prompt.
if [ $minios_default = 1 ]; then
	if wait_until 15 booted gamma; then
		pass "the guest made by the form boots to the Mini-OS prompt"
	else
		fail "the form's guest boots" "$(lodge console --log gamma 2>&1 | tail -5 | tr '\n' '|')"
	fi
fi
# Its detail view: the new disk with its size, mode and kind, the vif.
press /; type_text gam; press Enter Down Enter
if shows 5 'disk vda +rw file +8M read' && shows 5 "vif vif-gamma.0 on lodgetui$$"; then
	pass "the detail view shows the disk (size, mode, rates) and the vif"
else
	fail "detail view of the new guest" "$(screen | sed -n 1,16p)"
fi
press Escape / Escape

# TERM=vt100 without colour, resize, quit.
start vt100
if shows 10 'Domain-0' && shows 5 ' gamma '; then pass "works with TERM=vt100"; else fail "TERM=vt100" "$(screen | head -5)"; fi
press '?'
if shows 5 'Lodge dashboard keys'; then pass "help overlay on vt100"; else fail "vt100 help" "$(screen | head -5)"; fi
press x
tmux resize-window -t "$TMUX_SESSION" -x 100 -y 30 2>/dev/null || tmux resize-pane -t "$TMUX_SESSION" -x 100 -y 30
wide() { screen | sed -n 3p | grep -q 'FREE(M).*NETRX.*NETTX.*DSKRD.*DSKWR' && [ "$(screen | wc -l)" -ge 30 ]; }
if wait_until 10 wide; then pass "resizes live (100x30 shows more columns)"; else fail "resize" "$(screen | sed -n 3p)"; fi
# FREE(M): the guest's own free memory, from its balloon driver's stats.
free_shown() { row gamma | awk '{ exit !($9 ~ /^[0-9]+$/ && $9 > 0 && $9 <= $5) }'; }
if wait_until 5 free_shown; then
	pass "FREE(M) shows the guest's own free memory ($(row gamma | awk '{ print $9 }') of $(row gamma | awk '{ print $5 }') MiB)"
else
	fail "FREE(M) column" "$(row gamma)"
fi
# The detail view of a domain whose lodge-hyp stops (SIGSTOP to the
# supervisor and its child, so nothing of it answers): the dashboard keeps
# answering keys, says the figures are stale rather than wait for them,
# and catches up after SIGCONT.
# hyp_pids NAME: the domain's lodge-hyp, its child (as lodge list has it)
# and the supervisor above it.
hyp_pids() {
	local p pp
	p=$(lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $9 }')
	[ -n "$p" ] || return 1
	echo "$p"
	pp=$(ps -o ppid= -p "$p" | tr -d ' ')
	if [ -n "$pp" ] && [ "$(ps -o comm= -p "$pp")" = lodge-hyp ]; then echo "$pp"; fi
}
# answers SECONDS KEY PATTERN: send one key; the screen shows PATTERN within SECONDS
answers() { press "$2"; shows "$1" "$3"; }
select_dom gamma
press Enter
mapfile -t gpids < <(hyp_pids gamma)
if shows 10 '^console \(last lines\):' && shows 5 'vif vif-gamma\.0 on' && [ ${#gpids[@]} -gt 0 ]; then
	kill -STOP "${gpids[@]}"
	if shows 10 '^stale: gamma has not answered for [0-9]+ s' &&
	   shows 5 '^console \(last lines, stale: from [0-9]+ s ago, its reply awaited\)'; then
		pass "a stopped domain's detail view says its figures are stale and its console's reply awaited"
	else
		fail "stale detail view" "$(screen | head -20 | tr '\n' '|')"
	fi
	if answers 3 '?' 'Lodge dashboard keys' && answers 3 x '^stale: gamma' &&
	   answers 3 Up '^Domain-0: the host' && answers 3 Down '^gamma \(id [0-9]+'; then
		pass "while it does not answer, keys answer at once (help, moving the selection)"
	else
		fail "keys while a domain is stopped" "$(screen | head -5 | tr '\n' '|')"
	fi
	if answers 3 Escape '^ +[0-9]+ gamma +late '; then
		pass "the table marks the stopped domain late"
	else
		fail "late row" "$(row gamma)"
	fi
	# Its console is asked for without waiting: keys work meanwhile (a
	# second c is told the console is still awaited, which the dashboard
	# says only while that request is pending: the keys before it were
	# answered meanwhile too), and the status line says when it did not
	# answer.
	if answers 10 c 'opening the console of gamma\.\.\.' && answers 10 '?' 'Lodge dashboard keys' &&
	   answers 10 x '^ +[0-9]+ gamma ' && answers 10 c 'console: still waiting for gamma to answer' &&
	   shows 15 'gamma did not open its console in 5 s'; then
		pass "c on the stopped domain holds neither screen nor keys while it waits, and times out in 5 s"
	else
		fail "console of a stopped domain" "$(screen | tail -3 | tr '\n' '|')"
	fi
	press Enter
	up1=$(screen | grep -oE '^gamma \(id.* up [0-9:]+' | grep -oE '[0-9:]+$')
	kill -CONT "${gpids[@]}"
	if hides 10 '^stale:' && shows 10 '^console \(last lines\):' &&
	   up2=$(screen | grep -oE '^gamma \(id.* up [0-9:]+' | grep -oE '[0-9:]+$') && [ "$up1" != "$up2" ]; then
		pass "after SIGCONT the detail view catches up (up $up1 -> $up2, console fresh)"
	else
		fail "catching up after SIGCONT" "$(screen | head -20 | tr '\n' '|')"
	fi
	press Escape
else
	fail "detail view before the stop" "pids '${gpids[*]}'; $(screen | head -20 | tr '\n' '|')"
fi
# A domain that stops answering (its lodge-hyp frozen with SIGSTOP) keeps
# its row, and the screen keeps refreshing: the clock moves, keys work.
# clock: the time the header shows; clock_moved: not $c1 any more.
clock() { screen | head -1 | awk '{ print $2 }'; }
clock_moved() { [ "$(clock)" != "$c1" ]; }
gpid=$(lodge list -o tsv | awk -F'\t' '$1 == "gamma" { print $9 }')
kill -STOP "$gpid"
c1=$(clock)
wait_until 10 clock_moved
c2=$(clock)
if [ -n "$gpid" ] && [ "$c1" != "$c2" ] && row gamma >/dev/null; then
	pass "a domain that stops answering keeps its row; the screen does not wait for it ($c1 -> $c2)"
else
	fail "slow domain" "clock $c1 -> $c2; $(screen | sed -n 3,6p | tr '\n' '|')"
fi
# An action on it does not hold the screen either: "pausing gamma..." at
# once, the clock moves and other keys work while it has not answered, and
# after 5 s the status line says it did not.
select_dom gamma
press p
c1=$(clock)
if shows 2 'pausing gamma\.\.\.'; then pass "p on a frozen domain shows 'pausing gamma...'"; else fail "pausing status" "$(screen | tail -2)"; fi
wait_until 3 clock_moved
c2=$(clock)
press '?'
if [ -n "$c1" ] && [ "$c1" != "$c2" ] && shows 1 'Lodge dashboard keys'; then
	pass "while the frozen domain has not answered, the screen refreshes ($c1 -> $c2) and keys work"
else
	fail "an action on a frozen domain holds the screen" "clock $c1 -> $c2; $(screen | sed -n 1,3p | tr '\n' '|')"
fi
press x
if shows 10 'gamma did not answer pause in 5 s'; then
	pass "the status line says when the domain did not answer in 5 s"
else
	fail "action timeout" "$(screen | tail -2)"
fi
kill -CONT "$gpid"
# It may still act on the queued request once it runs again: undo that.
gamma_paused() { lodge list -o tsv | grep -q $'^gamma\t.*\tpaused\t'; }
wait_until 5 gamma_paused
lodge unpause gamma >/dev/null 2>&1
press / Escape q
quit_to_sleep() { [ "$(pane pane_current_command)" = sleep ]; }
if wait_until 5 quit_to_sleep && lodge list -o tsv | grep -q '^gamma'; then
	pass "q quits and the domains keep running"
else
	fail "quit" "$(screen | head -3)"
fi

# TERM=linux: the table and the help overlay.
start linux
if shows 10 'Domain-0' && shows 5 ' gamma ' && screen | sed -n 3p | grep -q 'ID.*NAME'; then
	pass "works with TERM=linux"
else
	fail "TERM=linux" "$(screen | head -5)"
fi
press '?'
if shows 5 'Lodge dashboard keys'; then pass "help overlay on TERM=linux"; else fail "TERM=linux help" "$(screen | head -5)"; fi
press x q

# Signals.  The dashboard runs from a shell in the pane, under sh -c so
# that bash does not repair the terminal itself (it does for a job killed
# by a signal): what the prompt finds is what the dashboard left.
shell() {
	tmux_open dashboard 80 24 "env PS1='tui-test\$ ' bash --norc --noprofile"
	shows 10 'tui-test\$' || true
	type_text "sh -c 'TERM=xterm $LODGE --root $ROOT -d 0.5; echo dashboard-ended-\$?'"
	press Enter
	shows 10 'Domain-0'
}
gone() { ! kill -0 "$1" 2>/dev/null; }
dashboard_pid() {   # the lodge under sh under the pane's bash
	local sh_pid
	sh_pid=$(pgrep -P "$(pane pane_pid)" | head -1)
	[ -n "$sh_pid" ] && pgrep -P "$sh_pid" | head -1
}
# restored LABEL SIGNAL: the pane is back at the prompt, out of the
# alternate screen, with echo and canonical input on.
restored() {
	if ! shows 10 "dashboard-ended-$((128 + $2))"; then
		fail "$1" "no prompt after the signal: $(screen | tail -3 | tr '\n' '|')"
		return
	fi
	type_text "stty -a | grep -qwE -- '-echo|-icanon' && echo TTY-RAW || echo TTY-SANE; echo o''k"
	press Enter
	if shows 5 '^ok$' && shows 2 '^TTY-SANE$' && [ "$(pane alternate_on)" = 0 ]; then
		pass "$1"
	else
		fail "$1" "alternate screen $(pane alternate_on); $(screen | tail -4 | tr '\n' '|')"
	fi
}
if shell; then
	press n                                              # a blocking read: the create form
	shows 5 'Create a domain' || true
	dpid=$(dashboard_pid)
	[ -n "$dpid" ] && kill -TERM "$dpid"
	restored "SIGTERM (in the create form) restores the terminal: prompt, normal screen, echo on" 15
	if lodge list -o tsv | grep -q '^gamma'$'\t'; then pass "the domains keep running after SIGTERM"; else fail "domains after SIGTERM" "$(lodge list -o tsv)"; fi
else
	fail "dashboard from a shell" "$(screen | head -3)"
fi
if shell; then
	dpid=$(dashboard_pid)
	[ -n "$dpid" ] && kill -HUP "$dpid"
	restored "SIGHUP (a dropped session) restores the terminal" 1
else
	fail "dashboard from a shell" "$(screen | head -3)"
fi
# Its pane closed under it (tmux hangs up the terminal, as a dropped ssh
# session does): the dashboard ends rather than spin on a dead terminal.
if shell; then
	dpid=$(dashboard_pid)
	tmux kill-session -t "$TMUX_SESSION"
	if [ -n "$dpid" ] && wait_until 5 gone "$dpid"; then
		pass "a dashboard whose terminal hangs up ends"
	else
		fail "hung-up terminal" "dashboard ${dpid:-not found} still running"
		[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	fi
else
	fail "dashboard from a shell" "$(screen | head -3)"
fi
# SIGKILL cannot be caught, but takes no domain with it: not one made
# before, nor one this dashboard made from its form; neither does the
# pane going away (tmux hangs it up, as a dropped ssh session would).
if shell; then
	press n
	type_text delta
	press Down Down Down Down Down Down Down Down Down Down Enter    # to [ Create ]
	shows 15 ' delta ' || true
	dpid=$(dashboard_pid)
	pane_shell=$(pane pane_pid)
	[ -n "$dpid" ] && kill -KILL "$dpid" && wait_until 5 gone "$dpid"
	tmux kill-session -t "$TMUX_SESSION"
	# The pane's shell ends on the hang-up: what it did to the domains is done.
	wait_until 5 gone "$pane_shell"
	if [ -n "$dpid" ] && gone "$dpid" && lodge list -o tsv | grep -q '^gamma'$'\t' &&
	   lodge list -o tsv | grep -q '^delta'$'\t'; then
		pass "SIGKILL of the dashboard, then its pane closed, leaves the domains running (the one it made too)"
	else
		fail "domains after SIGKILL" "pid ${dpid:-none}; $(lodge list -o tsv | tr '\n' '|')"
	fi
else
	fail "dashboard from a shell" "$(screen | head -3)"
fi
