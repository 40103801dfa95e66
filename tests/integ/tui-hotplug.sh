#!/bin/bash
# Hot-plug from the dashboard's detail view, in tmux as a user drives it:
# a attaches a disk (the guest probes it, the detail view lists it); x
# detaches it after a y/n; while a detach waits for a guest that ignores
# ejects the dashboard answers keys (a second x is told what it waits
# for), then says the guest did not eject it; a vif on a bridge that does
# not exist is refused in the status line.  Every step waits for what the
# screen shows.
. "$(dirname "$0")/../lib.sh"

integ_begin "dashboard hot-plug" kvm root minios cmd:tmux
tmux_begin "lodge-tuihp-$$"
conlog() { lodge console --log th 2>/dev/null | tr -d '\r'; }
guest_shows() { conlog | grep -Eq -- "$1"; }
guest() { lodge console th <<<"$1" >/dev/null 2>&1; }
listed() { lodge block-list th 2>/dev/null | tail -n +2 | awk '{ print $1 }' | tr '\n' ' '; }

STORE=$T/store
mkdir -p "$STORE"
truncate -s 4M "$STORE/data.img"
printf 'name = "th"\nmemory = 64\nvcpus = 1\nkernel = "%s"\n' "$MINIOS" >"$DOMS/th.cfg"
if ! lodge create th >/dev/null 2>&1 || ! wait_until 30 guest_shows 'hotplug: PCI hot-plug on GPE 1'; then
	fail "dashboard hot-plug" "the guest did not boot: $(conlog | tail -3)"
	exit 0
fi
track_pid "$(field th 9)" $(pgrep -P "$(field th 9)")
tmux_open dashboard 120 30 "TERM=xterm $LODGE --root $ROOT -d 0.5; sleep 120"
if ! shows 10 'Domain-0' || ! { press Down; shows 5 ' th +run'; }; then
	fail "dashboard hot-plug" "no table: $(screen | head -5)"
fi
press Enter
shows 10 'th \(id [0-9]+' || fail "detail view" "$(screen | head -5)"

# ---- a: attach a disk ---------------------------------------------------------
press a
shows 5 'attach a disk \(PATH,VDEV' && type_text "$STORE/data.img,vdb" && press Enter
if shows 15 'block-attach th: done' && wait_until 10 guest_shows 'blk: vd. added' && [ "$(listed)" = "vdb " ] &&
	shows 10 "$STORE/data.img"; then
	pass "a in the detail view attaches a disk: the guest probes it, the view lists it"
else
	fail "dashboard block-attach" "disks $(listed); $(screen | tail -4)"
fi

# ---- x: a detach the guest ignores; the dashboard answers meanwhile ------------------
guest "hotplug-ignore on"
wait_until 10 guest_shows 'eject requests are ignored'
press x
shows 5 'detach \(a disk' && type_text vdb && press Enter
if shows 5 'Detach disk vdb from th .*\(y/n\)'; then
	pass "x asks before it detaches (y/n)"
else
	fail "detach confirmation" "$(screen | tail -3)"
fi
press y
t0=$(date +%s%N)
shows 5 'block-detach th vdb\.\.\.'
# The second x is answered while the first detach still waits: the status
# line names the request it waits for (the dashboard writes it only while
# that request is pending), and the guest has ignored the eject by then.
press x
shows 5 'detach \(a disk' && type_text vdb && press Enter
shows 5 '\(y/n\)' && press y
if shows 15 'still waiting for th to answer block-detach' && guest_shows 'eject request ignored'; then
	pass "while the detach waits for the guest, keys are answered ($((($(date +%s%N) - t0) / 1000000)) ms in)"
else
	fail "keys during a detach" "$(screen | tail -3)"
fi
if shows 20 'block-detach th: .*did not eject' && [ "$(listed)" = "vdb " ]; then
	pass "the guest ignores the eject: the status line says so, the disk stays"
else
	fail "dashboard detach timeout" "disks $(listed); $(screen | tail -3)"
fi
guest "hotplug-ignore off"
wait_until 10 guest_shows 'eject requests are served'
press x
shows 5 'detach \(a disk' && type_text vdb && press Enter
shows 5 '\(y/n\)' && press y
if shows 15 'block-detach th: done' && [ "$(listed)" = "" ] && flock -n -x "$STORE/data.img" true; then
	pass "x, y: the guest ejects the disk, the lock is free"
else
	fail "dashboard block-detach" "disks $(listed); $(screen | tail -3)"
fi

# ---- v: a vif on no bridge is refused in one line ---------------------------
press v
shows 5 'attach a vif' && type_text "bridge=nosuchbr9" && press Enter
if shows 15 'network-attach th: .*nosuchbr9' && [ -z "$(lodge network-list th 2>/dev/null | tail -n +2)" ]; then
	pass "v with a bridge that does not exist: refused in the status line ($(screen | grep -o 'network-attach th: .*' | head -1))"
else
	fail "dashboard vif refusal" "$(screen | tail -3)"
fi
# ---- a, then empty: the block-device picker, its rules, a pick --------------------
truncate -s 8M "$STORE/part.img"
if loop_attach PICKDEV "$STORE/part.img"; then
	press a
	shows 5 'attach a disk' && press Enter
	if shows 5 'Block devices \(Enter picks'; then
		# Down to the loop device's row (rows start on the screen's second line).
		row=$(screen | grep -n -- " $PICKDEV " | head -1 | cut -d: -f1)
		for _ in $(seq $((row - 2))); do press Down; done
		press Enter
		if shows 5 'as which disk of the guest' && { type_text vdc; press Enter; } &&
		   shows 15 'block-attach th: done' && [ "$(listed)" = "vdc " ]; then
			pass "a, Enter: the block-device picker lists $PICKDEV; picked as vdc, the guest has it"
		else
			fail "dashboard disk picker" "row $row; disks $(listed); $(screen | tail -3)"
		fi
	else
		fail "dashboard disk picker" "no picker: $(screen | tail -3)"
	fi
else
	skip "the dashboard's block-device picker" "no loop device"
fi

# ---- v, then empty: the bridge and network picker ------------------------------
BR=thp$$
if lodge bridge-create "$BR" >/dev/null 2>&1; then
	at_exit "lodge bridge-delete $BR >/dev/null 2>&1"
	press v
	shows 5 'attach a vif' && press Enter
	if shows 5 'Networks and bridges \(Enter picks' && has "bridge +$BR "; then
		row=$(screen | grep -n -- "bridge  *$BR " | head -1 | cut -d: -f1)
		for _ in $(seq $((row - 2))); do press Down; done
		press Enter
		if shows 15 'network-attach th: done' && wait_until 10 eval 'lodge network-list th 2>/dev/null | grep -q " $BR "'; then
			pass "v, Enter: the picker lists bridge $BR; picked, the domain has a vif on it"
		else
			fail "dashboard vif picker" "$(lodge network-list th 2>&1 | tail -2); $(screen | tail -3)"
		fi
	else
		fail "dashboard vif picker" "no picker with $BR: $(screen | head -8)"
	fi
else
	skip "the dashboard's bridge picker" "cannot make bridge $BR"
fi

# ---- a hot-plug past its deadline: ended and reaped, never a zombie --------------
# A lodge-hyp stopped with its control socket's queue full (connections it
# never accepted) holds the attach's job in connect() past the dashboard's
# deadline (LODGE_DETACH_TIMEOUT_MS + 5 s); once lodge-hyp runs again that
# job could end at any time.  The dashboard must have ended and reaped it:
# no child of the dashboard is left, running or a zombie.
hyp=$(field th 9)
dash=$(pgrep -P "$(pane pane_pid)" -x lodge)
dash_children() { ps -o pid=,stat= --ppid "$dash" 2>/dev/null; }
children_settled() { ! dash_children | grep -qv ' Z'; }
press a
shows 5 'attach a disk \(PATH,VDEV' && type_text "$STORE/late.img,vdd"
kill -STOP "$hyp"
python3 -c '
import signal, socket, sys
held = []
while True:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except BlockingIOError:
        break
    held.append(s)
print(len(held), flush=True)
signal.pause()' "$RUN/th/control" >"$T/held" &
holder=$!
at_exit "kill $holder 2>/dev/null; kill -CONT $hyp 2>/dev/null"
wait_until 10 test -s "$T/held"
press Enter
t0=$(date +%s)
if ! shows 5 'block-attach th .*late\.img'; then
	fail "a late hot-plug" "not started: $(screen | tail -2)"
elif ! shows 40 'th did not answer block-attach in [0-9]+ s'; then
	fail "a late hot-plug" "no deadline in 40 s: $(screen | tail -2)"
else
	late=$(($(date +%s) - t0))
	kill -CONT "$hyp"
	kill "$holder"
	# Running again, lodge-hyp answers what was queued: a child still
	# there ends now.  Then none may be left, not even a zombie.
	wait_until 20 children_settled
	if [ -z "$(dash_children)" ]; then
		pass "a hot-plug past its deadline (${late} s, $(cat "$T/held") connections held): ended and reaped, no zombie left"
	else
		fail "a late hot-plug" "children of the dashboard ($dash): $(dash_children | tr '\n' ' ')"
	fi
fi
kill -CONT "$hyp" 2>/dev/null
kill "$holder" 2>/dev/null

lodge destroy th >/dev/null 2>&1
