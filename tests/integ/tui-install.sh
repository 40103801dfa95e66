#!/bin/bash
# Debian installs from the dashboard's create form (issue 20), in tmux as
# a user drives it: the form's guest choice, its Debian fields at 80x24;
# an install into a new 2 GiB file shows `installing N%` in the table and
# then a stopped domain, its config (bootloader = "lodge") and disk
# there; an install into a partition of a loop device picked in the
# picker (too small ones marked and refused); bad input (a size below the
# template's, a mounted partition, a private key that only the library's
# check refuses) shown whole, nothing left; a cancel mid-install (k on its
# row, confirmed) leaves no disk, seed or config; quitting while an
# install runs asks first, and a confirmed quit cancels it; S starts an
# installed guest.  Every step waits for what the screen shows.  The
# template is built once and kept under build/cache (template_cached).
. "$(dirname "$0")/../lib.sh"

integ_begin "dashboard installs" root cmd:tmux cmd:mmdebstrap cmd:sfdisk cmd:partx cmd:mtype:mtools cmd:ssh-keygen:openssh-client
if ! template_cached bookworm; then
	skip "dashboard installs" "no bookworm template: $TEMPLATE_WHY"
	exit 0
fi
# The dashboard in a network namespace of the test's own, where the
# default bridge the installed configs name exists.
integ_netns
lodge bridge-create lodgebr0 >/dev/null
# An install with the bridge field empty joins the default network, made by the first.
at_exit 'lodge network-delete default >/dev/null 2>&1'
IMAGES=$ROOT/var/lib/lodge/images
tmux_begin "lodge-tui-install-$$"

# squeezed: the screen (or stdin) without blanks: text wrapped at any width compares whole.
squeezed() { tr -d ' \n\t'; }
cursor_y() { pane cursor_y; }
# on_field LABEL: the form's cursor is on the field's line.
on_field() { [ "$(screen | grep -n -m1 -E "^$1( |$)" | cut -d: -f1)" = "$(($(cursor_y) + 1))" ]; }
# goto_field LABEL: Down until the cursor is on it.
cursor_off() { [ "$(cursor_y)" != "$1" ]; }
goto_field() {
	local i y
	for i in $(seq 20); do
		on_field "$1" && return 0
		y=$(cursor_y)
		press Down
		wait_until 2 cursor_off "$y"
	done
	on_field "$1"
}
# set_field LABEL TEXT: replace the field's value with TEXT.
set_field() {
	local v
	goto_field "$1" || return 1
	v=$(screen | sed -n -E "s/^$1 +([^ ]*).*/\1/p" | head -1)
	for _ in $(seq ${#v}); do press BSpace; done
	hides 5 "^$1 +[^ !]" || return 1
	type_text "$2"
	shows 5 "^$1 +$(printf '%s' "$2" | sed 's/[][\.*^$/]/\\&/g')( |$)"
}
dashboard_pid() { pgrep -P "$(pane pane_pid)" -x lodge | head -1; }
install_pid() { pgrep -P "$(dashboard_pid)" -x lodge-install | head -1; }
# shellcheck disable=SC2153 # DOMS is lib.sh's (integ_begin), not a misspelt doms
nothing_left() { [ ! -e "$DOMS/$1.cfg" ] && [ ! -e "$IMAGES/$1.img" ] && [ ! -e "$IMAGES/$1-seed.img" ]; }
start() {
	tmux_open dashboard 80 24 "TERM=xterm ip netns exec $NS $LODGE --root $ROOT -d 0.5; sleep 120"
	shows 10 'Domain-0'
}
# debian_form KIND: the form open, its guest set to KIND (file or
# partition), the cursor on Name.
debian_form() {
	press n
	shows 5 'Create a domain' || return 1
	press Up
	wait_until 3 on_field Guest || return 1
	press Space
	shows 5 '^Guest +install Debian, new disk file' || return 1
	if [ "$1" = partition ]; then
		press Space
		shows 5 '^Guest +install Debian, a partition' || return 1
	fi
	press Down
	wait_until 3 on_field Name
}
select_dom() { press /; press Escape; press /; type_text "$1"; press Enter; shows 5 "filter /$1" && press Home Down; }

ssh-keygen -q -t ed25519 -N '' -C "tui-key-$$" -f "$T/key" >/dev/null 2>&1
printf 'sesame-%s\n' "$$" >"$T/password"

start || { fail "dashboard installs" "the dashboard did not start: $(screen | head -3)"; exit 0; }

# ---- the form at 80x24 ---------------------------------------------------------------------
if debian_form file; then
	missing=
	for l in Name 'Memory \(MiB\) +512' vCPUs 'Distribution +bookworm' 'Disk size +2G' Bridge Packages 'SSH key file' \
		 'Password file' '\[ Install \]'; do
		has "^$l( |$)" || missing+=" '$l'"
	done
	if [ -z "$missing" ] && [ "$(screen | wc -L)" -le 80 ] && has '^Debian bookworm from its template \([0-9]+ MiB, kernel' &&
	   lacks '^Kernel ' && lacks '^MAC ' && [ "$(screen | grep -n '^\[ Install \]' | cut -d: -f1)" -lt 20 ]; then
		pass "80x24: the form's Debian guest asks name, memory (512), vCPUs, distribution, size (2G), bridge, packages, ssh key, password, and says which template"
	else
		fail "the Debian form at 80x24" "missing:${missing:- none}; $(screen | tr '\n' '|')"
	fi
else
	fail "the form's guest choice" "$(screen | tr '\n' '|')"
fi

# ---- bad input: a size below the template's ----------------------------------------------------
set_field "Disk size" 512M
if shows 5 '^! 512 MiB is below the bookworm template.s [0-9]+ MiB$'; then
	pass "a size below the template's is marked, its message whole under the form: $(screen | grep '^! ')"
else
	fail "a size below the template's" "$(screen | sed -n 2,20p | tr '\n' '|')"
fi
set_field Name tiny
goto_field '\[ Install \]' && press Enter
if shows 5 'nothing installed: fix the fields marked !' && nothing_left tiny && [ -z "$(ls -A "$IMAGES" 2>/dev/null)" ]; then
	pass "Install with it refuses, nothing made"
else
	fail "a size below the template's" "$(screen | tail -6 | tr '\n' '|'); $(ls "$DOMS" "$IMAGES" 2>&1)"
fi
press Escape
hides 5 'Create a domain'

# ---- bad input only the library finds: its message whole in the form ---------------------------
# What lodge install says of it on the command line, to compare.
cli_msg=$(lodge install priv -k "$T/key" 2>&1 | head -1 | sed 's/^lodge: //; s/^error: //')
debian_form file && set_field Name priv && set_field "SSH key file" "$T/key" && goto_field '\[ Install \]' && press Enter
if [ -n "$cli_msg" ] && shows 10 '^error: nothing installed: ' && has 'Create a domain' &&
   screen | squeezed | grep -qF -- "$(printf %s "$cli_msg" | squeezed)" && nothing_left priv; then
	pass "a private key, refused by lodge install's own check, shows whole in the form ($cli_msg); nothing made"
else
	fail "the library's refusal in the form" "cli: $cli_msg; $(screen | sed -n 12,24p | tr '\n' '|'); $(ls "$DOMS" "$IMAGES" 2>&1)"
fi
press Escape
hides 5 'Create a domain'

# ---- an install into a new 2 GiB file ---------------------------------------------------------
debian_form file && set_field Name web && set_field Packages htop && set_field "SSH key file" "$T/key.pub" &&
	set_field "Password file" "$T/password" && goto_field '\[ Install \]' && press Enter
# seen_done NAME: note the percentage its row shows; true once it shows
# the domain stopped (the install done) or the row is gone.
seen_done() {
	local row
	row=$(screen | grep -E "^ +- $1 ")
	[[ $row =~ installing\ ([0-9]+)% ]] && echo "${BASH_REMATCH[1]} ${row#*%}" >>"$T/seen-$1"
	[ -z "$row" ] || [[ $row =~ ^\ +-\ $1\ +shut\  ]]
}
# moved NAME: its row showed a percentage between 0 and 100 (exclusive) with a phase.
moved() { awk '$1 > 0 && $1 < 100 && NF > 1 { ok = 1 } END { exit !ok }' "$T/seen-$1" 2>/dev/null; }
if shows 15 '^ +- web +installing [0-9]+%'; then
	pass "the table shows the install at once: $(screen | grep -E '^ +- web ' | sed 's/  */ /g')"
else
	fail "the install's row" "$(screen | tr '\n' '|')"
fi
wait_until 120 seen_done web
if moved web; then
	pass "its row moves on: $(awk '$1 > 0 && $1 < 100' "$T/seen-web" | sort -un | head -3 | sed 's/  */ /g' | paste -sd ';')"
else
	fail "the install's progress" "percentages seen: $(cut -d' ' -f1 "$T/seen-web" 2>/dev/null | sort -un | tr '\n' ' ')"
fi
if shows 5 '^ +- web +shut ' && screen | squeezed | grep -q 'installedweb:Debianbookwormon.*/web\.img(2\.0GiB)' &&
   grep -q '^bootloader = "lodge"' "$DOMS/web.cfg" && [ "$(stat -c %s "$IMAGES/web.img")" = 2147483648 ] &&
   lodge check web >/dev/null 2>&1; then
	pass "then a stopped domain: its config (bootloader = \"lodge\") loads, its 2 GiB disk is there"
else
	fail "the install from the form" "$(screen | grep ' web '); $(lodge check web 2>&1); $(ls -l "$IMAGES")"
fi
mtype -i "$IMAGES/web-seed.img" ::user-data >"$T/user-data" 2>/dev/null
if grep -qF "tui-key-$$" "$T/user-data" && grep -q '"htop"' "$T/user-data" && grep -q 'hashed_passwd: "\$y\$' "$T/user-data"; then
	pass "its seed holds the form's key, package and password hash"
else
	fail "the seed from the form" "$(head -c 300 "$T/user-data" | tr '\n' '|')"
fi

# S on its row starts it (lodge create): a running domain's row then.
if [ ! -c /dev/kvm ]; then
	skip "S starts the installed guest" "no /dev/kvm"
else
	select_dom web
	press S
	if shows 30 'started web|did not start' && has 'started web' && shows 10 '^ +[1-9][0-9]* web +'; then
		pass "S starts the installed guest: its row is a running domain's ($(screen | grep -E '^ +[0-9]+ web ' | sed 's/  */ /g'))"
	else
		fail "S starts the installed guest" "$(screen | tail -5 | tr '\n' '|')"
	fi
	lodge destroy web >/dev/null 2>&1
	press /
	press Escape
fi

# ---- into a partition picked in the picker -----------------------------------------------------
truncate -s 6G "$T/disk.img"
printf 'label: gpt\n,2600M,L\n,512M,L\n,2600M,L\n' | sfdisk -q "$T/disk.img" >/dev/null 2>&1
loop_attach LOOP "$T/disk.img" -P || LOOP=
[ -z "$LOOP" ] || [ -b "${LOOP}p3" ] || partx -a "$LOOP" 2>/dev/null
if [ -z "$LOOP" ] || ! wait_until 10 test -b "${LOOP}p3"; then
	skip "installs into partitions" "no loop device with partitions"
else
	P1=${LOOP}p1 P2=${LOOP}p2 P3=${LOOP}p3
	debian_form partition && set_field Name part && goto_field Partition && press C-b
	if shows 5 '^Block devices' && shows 5 "^  $P2 +512 MiB +too small for the bookworm template"; then
		pass "the picker marks the 512 MiB partition too small for the template"
	else
		fail "the picker's marks" "$(screen | tr '\n' '|')"
	fi
	# pick DEV: move the picker's selection onto DEV (its rows are sorted) and press Enter.
	pick() {
		local k
		k=$(screen | grep -E '^  /dev/' | awk '{ print $1 }' | grep -nxF "$1" | cut -d: -f1)
		[ -n "$k" ] || return 1
		for _ in $(seq $((k - 1))); do press Down; done
		press Enter
	}
	pick "$P2"
	if shows 5 "^refused: $P2: too small for the bookworm template"; then
		pass "Enter on it is refused, the picker stays"
	else
		fail "a too small partition picked" "$(screen | tail -4 | tr '\n' '|')"
	fi
	press Escape
	shows 5 'Create a domain'
	press C-b
	shows 5 '^Block devices'
	pick "$P1"
	if shows 5 "^Partition +$P1( |$)" && lacks '^Partition .* ! '; then
		pass "the picker puts $P1 in the form"
	else
		fail "picking $P1" "$(screen | sed -n 2,14p | tr '\n' '|')"
	fi
	goto_field '\[ Install \]' && press Enter
	if shows 120 '^ +- part +shut ' && grep -qF "\"phy:$P1,vda,w\"" "$DOMS/part.cfg" &&
	   grep -q '^bootloader = "lodge"' "$DOMS/part.cfg" && [ "$(blkid -o value -s TYPE "$P1")" = ext4 ]; then
		pass "installed into $P1 from the form: a stopped domain, its config names phy:$P1"
	else
		fail "install into $P1" "$(screen | tail -6 | tr '\n' '|'); $(cat "$DOMS/part.cfg" 2>&1)"
	fi
	# A mounted partition, typed in: refused whole, nothing written.
	mkdir -p "$T/mnt"
	if mkfs.ext4 -q "$P3" && mount "$P3" "$T/mnt"; then
		at_exit 'umount "$T/mnt" 2>/dev/null'
		before=$(head -c 1M "$P3" | sha256sum)
		debian_form partition && set_field Name mounted && set_field Partition "$P3"
		if shows 5 "^! (mounted on the host|in use on the host \(a mounted filesystem)" &&
		   why=$(screen | sed -n '/^! /,/^Fix the fields/p' | sed '$d' | tr -s ' \n' ' ') && goto_field '\[ Install \]' && press Enter &&
		   shows 5 'nothing installed: fix the fields marked !' && nothing_left mounted &&
		   mountpoint -q "$T/mnt" && [ "$(head -c 1M "$P3" | sha256sum)" = "$before" ]; then
			pass "a mounted partition is refused in the form (${why% }), nothing written"
		else
			fail "a mounted partition" "$(screen | sed -n 2,24p | tr '\n' '|')"
		fi
		press Escape
		hides 5 'Create a domain'
		umount "$T/mnt"
	else
		skip "a mounted partition" "cannot mount $P3"
	fi
fi

# ---- cancel mid-install -------------------------------------------------------------------------
# The install is held (SIGSTOP) once its row shows, so that the cancel
# lands mid-install however fast the machine; SIGCONT after the confirm.
debian_form file && set_field Name cc && goto_field '\[ Install \]' && press Enter
shows 15 '^ +- cc +installing' && pid=$(install_pid) && kill -STOP "$pid"
if [ -z "$pid" ] || has '^ +- cc +shut'; then
	skip "cancel mid-install" "the install finished before it could be held"
else
	select_dom cc
	# Its detail view: the install's phase, disk and key.
	press Enter
	if shows 5 '^cc: Debian bookworm, 512 MiB, 1 vCPUs: installing [0-9]+%' && has '^phase +[a-z]' &&
	   has "^disk +$IMAGES/cc.img" && has '^keys +D cancels it'; then
		pass "Enter on an installing row: its phase, disk and how to cancel ($(screen | grep '^phase' | sed 's/  */ /g'))"
	else
		fail "an install's detail view" "$(screen | head -6 | tr '\n' '|')"
	fi
	press Escape
	shows 5 'ID +NAME'
	press D
	if shows 5 'Cancel the install of cc \(nothing of it is left\)\? \(y/n\)'; then
		press y
		shows 5 '^ +- cc +cancelling'
		kill -CONT "$pid"
		if shows 30 'install cc: cancelled: no disk or config left' && hides 5 '^ +- cc ' && nothing_left cc &&
		   ! kill -0 "$pid" 2>/dev/null; then
			pass "D on the installing row, confirmed, cancels it: its row goes, no disk, seed or config left"
		else
			fail "cancel mid-install" "$(screen | tail -6 | tr '\n' '|'); $(ls "$DOMS" "$IMAGES")"
		fi
	else
		kill -CONT "$pid"
		fail "cancel asks first" "$(screen | tail -3 | tr '\n' '|')"
	fi
fi
press /
press Escape

# ---- an error mid-install: whole in the status line, nothing left --------------------------------
# A config of its name appears while it clones (held there as above):
# lodge install refuses to write over it, and undoes the rest.
debian_form file && set_field Name late && goto_field '\[ Install \]' && press Enter
shows 15 '^ +- late +installing [0-9]+% +(cloning|growing|writing the seed)' && pid=$(install_pid) && kill -STOP "$pid"
if [ -z "$pid" ] || has '^ +- late +shut'; then
	skip "an error mid-install" "the install finished before it could be held"
else
	printf 'name = "late"\nmemory = 32\nkernel = "/nonexistent"\n' >"$DOMS/late.cfg"
	cp "$DOMS/late.cfg" "$T/late.cfg"
	kill -CONT "$pid"
	doms=$(printf %s "$DOMS" | squeezed)
	# The other config is a defined domain: its row, off, replaces the install's.
	if shows 30 '^error: install late: ' && hides 5 '^ +- late +(installing|shut)' && shows 5 '^ +- late +off ' &&
	   screen | squeezed | grep -Eq "installlate:(cannotwrite$doms/late\.cfg:aconfigofthatnameappearedmeanwhile|domainlatehasaconfigalready\($doms/late\.cfg\))" &&
	   [ ! -e "$IMAGES/late.img" ] && [ ! -e "$IMAGES/late-seed.img" ] && cmp -s "$DOMS/late.cfg" "$T/late.cfg"; then
		pass "an error mid-install shows whole in the status line ($(screen | grep -A2 '^error: install late' | tr -s ' \n' ' ')), its install row goes (the other config's shows off), its disk and seed are removed, the other config kept"
	else
		fail "an error mid-install" "$(screen | tail -6 | tr '\n' '|'); $(ls "$IMAGES")"
	fi
	rm -f "$DOMS/late.cfg"
fi

# ---- quitting while an install runs ------------------------------------------------------------
debian_form file && set_field Name qq && goto_field '\[ Install \]' && press Enter
shows 15 '^ +- qq +installing' && pid=$(install_pid) && kill -STOP "$pid"
if [ -z "$pid" ] || has '^ +- qq +shut'; then
	skip "quit while installing" "the install finished before it could be held"
else
	dpid=$(dashboard_pid)
	press q
	if shows 5 'an install is under way: quit and cancel it' && press n && shows 5 'quit cancelled: the installs go on' &&
	   kill -0 "$dpid"; then
		pass "q while an install runs asks first; n keeps the dashboard and the install"
	else
		fail "quit asks first" "$(screen | tail -3 | tr '\n' '|')"
	fi
	press q
	shows 5 'quit and cancel it'
	press y
	kill -CONT "$pid"
	if wait_until 30 eval '! kill -0 "$dpid" 2>/dev/null' && ! kill -0 "$pid" 2>/dev/null && nothing_left qq; then
		pass "y quits, and the install is cancelled first: nothing of it left"
	else
		fail "quit cancels the install" "dashboard $(kill -0 "$dpid" 2>&1 && echo runs); $(ls "$DOMS" "$IMAGES")"
	fi
fi
