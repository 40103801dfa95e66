#!/bin/bash
# The dashboard at 80x24 (and wider), as a user reads it in tmux: nothing
# cut.  The help overlay shows every key of the key table whole; a long
# error is whole in the create form, wrapped, and in the message history
# (m); the header's filter and FROZEN marks show together; domains whose
# names differ only at the end stay apart at 80, 120 and 200 columns; the
# detail view's memory line is whole; the create form's new:SIZE disk
# works on a fresh --root (no /var/lib/lodge/images yet) and says in one
# message why when it cannot.  Every step waits for what the screen shows.
. "$(dirname "$0")/../lib.sh"

integ_begin "dashboard at 80 columns" kvm minios cmd:tmux
tmux_begin "lodge-tui80-$$"
# squeezed: the screen (or stdin) without any blank, so that text wrapped
# at any width compares with the text itself.
squeezed() { tr -d ' \n\t'; }
# start ROOT COLS ROWS: the dashboard alone in a pane of that size.
start() {
	tmux_open dashboard "$2" "$3" "TERM=xterm $LODGE --root $1 -d 0.5; sleep 120"
	shows 10 'Domain-0'
}
# names: the NAME column of the domains' rows, in the order shown.
names() { screen | awk '/^ +[0-9]+ [^ ]/ && $2 != "Domain-0" { print $2 }'; }

LONG1=customer-database-replica-eu-west-node-01
LONG2=customer-database-replica-eu-west-node-02
for n in webserver-prod-01 webserver-prod-02 $LONG1 $LONG2; do
	printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' "$n" "$MINIOS" >"$DOMS/$n.cfg"
	lodge create "$n" >/dev/null || { fail "dashboard at 80 columns" "could not create $n"; exit 0; }
done

# --- Names: apart at every width -------------------------------------------
# At 80 the NAME column takes the spare width (19 wide): the 17-character
# names are whole; longer ones keep their start and end about a '~'.
for cols in 80 120 200; do
	start "$ROOT" $cols 24 || { fail "dashboard at $cols columns" "$(screen | head -5)"; continue; }
	shows 10 "$LONG1|customer.*~.*-01" || true
	got=$(names | sort | tr '\n' ' ')
	distinct=$(names | sort -u | wc -l)
	if names | grep -qx webserver-prod-01 && names | grep -qx webserver-prod-02 && [ "$distinct" = 4 ] &&
	   names | grep -q -- '-01$' && [ "$(names | grep -c -- '-02$')" = 2 ]; then
		pass "at ${cols}x24 webserver-prod-01 and -02 show whole, and the 41-character names apart: $got"
	else
		fail "names at $cols columns" "$got"
	fi
done
if names | grep -qx "$LONG1" && names | grep -qx "$LONG2"; then
	pass "at 200 columns the 41-character names show whole"
else
	fail "long names at 200 columns" "$(names | tr '\n' ' ')"
fi

start "$ROOT" 80 24 || { fail "dashboard at 80x24" "$(screen | head -5)"; exit 0; }

# --- The help overlay: every key of the table whole ----------------------
# The descriptions and the closing text, from the one key table.
mapfile -t descs < <(perl -0ne 'print "$1\n" while /\bk_\w+,\s*"([^"]*)"/g' "$TOP/src/tui/keys.c")
foot=$(perl -0ne 'print join "", $1 =~ /"([^"]*)"/g if /help_foot =\s*((?:"[^"]*"\s*)+);/s' "$TOP/src/tui/keys.c")
press '?'
if shows 5 'Lodge dashboard keys'; then
	missing=()
	for d in "${descs[@]}"; do has_text "$d" || missing+=("$d"); done
	if [ "${#descs[@]}" -ge 20 ] && [ ${#missing[@]} = 0 ]; then
		pass "the help at 80x24 shows all ${#descs[@]} keys' descriptions of the key table whole"
	else
		fail "help descriptions at 80x24" "${#descs[@]} read; cut or missing: ${missing[*]}"
	fi
	if [ -n "$foot" ] && screen | sed 's/^ *x//; s/x *$//' | squeezed | grep -qF -- "$(printf %s "$foot" | squeezed)"; then
		pass "the help's closing text shows whole"
	else
		fail "help closing text" "$(screen | tail -6 | tr '\n' '|')"
	fi
	if screen | grep -qE 'm F2 +message history, whole'; then pass "the help names m (F2): the message history"; else fail "help: m" "$(screen | grep -F ' m ')"; fi
else
	fail "help overlay" "$(screen | head -5)"
fi
press x
hides 5 'Lodge dashboard keys' || fail "help closes" "still shown"
if screen | tail -1 | grep -q 'mMsgs.*qQuit'; then pass "the key bar at 80 shows m for the messages, and Quit"; else fail "key bar" "$(screen | tail -1)"; fi

# --- The header: sort, a 31-character filter and FROZEN together ----------
FILTER=customer-database-replica-eu-we
press Z
press I
press /
type_text "$FILTER"
press Enter
if shows 5 "filter /$FILTER" && shows 5 'FROZEN' &&
   screen | sed -n 2p | grep -qF -- "sort ID (rev)  filter /$FILTER  FROZEN"; then
	pass "at 80 columns the header shows the sort, the 31-character filter and FROZEN together: $(screen | sed -n 2p)"
else
	fail "header marks at 80 columns" "$(screen | sed -n 2p)"
fi
press Z
hides 5 'FROZEN' || true
press I
hides 5 '\(rev\)' || true
press /
press Escape
hides 5 'filter /' || fail "filter clears" "$(screen | sed -n 2p)"

# --- The detail view's memory line, whole at 80 --------------------------
press /
type_text webserver-prod-01
press Enter
shows 5 'filter /webserver-prod-01' || true
press Home
press Down
press Enter
mem_whole() {
	has '^memory +target [0-9]+ MiB of maxmem [0-9]+, balloon [0-9]+ MiB$' &&
	has '^ +guest: FREE\(M\) [0-9]+  AVAIL\(M\) [0-9]+  TOTAL\(M\) [0-9]+$'
}
if shows 10 '^webserver-prod-01 \(id' && wait_until 20 mem_whole; then
	pass "the detail view at 80 shows the memory line whole, the guest's figures on a line of their own"
else
	fail "detail memory line at 80" "$(screen | sed -n 1,6p | tr '\n' '|')"
fi
press Escape
shows 5 'ID +NAME' || true
press /
press Escape
hides 5 'filter /' || true

# --- The create form on a fresh --root (no image directory; a domain that
# ran may have made var/lib/lodge/crash): new:SIZE makes the image -------
# create_form NAME: fill the form's name and a new 8 MiB disk, then Create.
create_form() {
	press n
	shows 5 'Create a domain' || return 1
	type_text "$1"
	shows 5 "^Name +$1( |$)" || return 1
	press Down Down Down Down Down Down
	type_text new:8
	shows 5 '^Disk +new:8( |$)' || return 1
	press Down Down Down Down Enter
}
if [ ! -e "$ROOT/var/lib/lodge/images" ] && create_form fresh &&
   shows 30 'created fresh|did not start|cannot' && [ -f "$ROOT/var/lib/lodge/images/fresh-vda.img" ] &&
   [ "$(stat -c %s "$ROOT/var/lib/lodge/images/fresh-vda.img")" = $((8 << 20)) ] &&
   [ "$(stat -c %a "$ROOT/var/lib/lodge/images")" = 755 ] && has 'created fresh'; then
	pass "on a --root without var/lib the form's new:8 makes var/lib/lodge/images (0755) and the 8 MiB image"
else
	fail "new:SIZE on a fresh root" "$(ls -ld "$ROOT/var/lib/lodge/images" 2>&1); $(screen | tail -5 | tr '\n' '|')"
fi
press Escape

# --- A long error: whole in the form, in the status line as far as it
# goes, whole in the history ----------------------------------------------
# A --root whose var/lib is a file: the image directory cannot be made.
LR=$T/r-$(printf 'long%.0s' $(seq 22))
integ_root "$LR"
mkdir -p "$LR/etc/lodge/domains" "$LR/var"
: >"$LR/var/lib"
msg="error: cannot make the image directory $LR/var/lib/lodge/images (at $LR/var/lib/lodge): Not a directory"
start "$LR" 80 24 || fail "dashboard on the second root" "$(screen | head -3)"
# A field's message, cut to fit beside it, shows whole under the form.
press n
shows 5 'Create a domain' || true
press Down BSpace BSpace BSpace BSpace BSpace
type_text 0
if shows 5 '^Memory \(MiB\) +0 +! ' && shows 5 '^! '; then
	beside=$(screen | sed -n 's/^Memory (MiB) *0 *! //p' | squeezed)
	whole=$(screen | sed -n '/^! /,/^Fix the fields/p' | sed '$d; s/^! //' | squeezed)
	if [ ${#whole} -gt ${#beside} ] && [ "${whole#"$beside"}" != "$whole" ]; then
		pass "the form shows the field's message whole under it (beside it: ${#beside} of ${#whole} characters)"
	else
		fail "the field's message whole" "beside '$beside', under '$whole'"
	fi
else
	fail "the field's message" "$(screen | sed -n 3,20p | tr '\n' '|')"
fi
press Escape
hides 5 'Create a domain' || true
if [ ${#msg} -ge 200 ] && create_form gamma && shows 10 '^error: cannot make the image directory'; then
	if screen | squeezed | grep -qF -- "$(printf %s "$msg" | squeezed)"; then
		pass "a ${#msg}-character error shows whole in the create form, wrapped at 80 columns"
	else
		fail "long error in the form" "$(screen | tail -8 | tr '\n' '|')"
	fi
	if [ ! -e "$LR/etc/lodge/domains/gamma.cfg" ] && [ -z "$(find "$LR/var" -mindepth 1 -not -name lib)" ]; then
		pass "nothing is made when the image directory cannot be"
	else
		fail "nothing made" "$(find "$LR" | tr '\n' ' ')"
	fi
else
	fail "long error from the form" "${#msg} characters; $(screen | tail -8 | tr '\n' '|')"
fi
press Escape
if shows 5 'ID +NAME' && shows 5 '^error: cannot make the image directory' && has 'm: all of it$'; then
	pass "back in the table the status line wraps it onto three lines and says m has all of it"
else
	fail "long error in the status line" "$(screen | tail -5 | tr '\n' '|')"
fi
press m
if shows 5 '^Messages, the newest last' && screen | squeezed | grep -qF -- "$(printf %s "$msg" | squeezed)"; then
	pass "m shows the message history with the whole ${#msg}-character error"
else
	fail "message history" "$(screen | head -10 | tr '\n' '|')"
fi
press m
shows 5 'ID +NAME' || fail "m returns to the table" "$(screen | head -3)"
if has '^error: cannot make'; then
	press Escape
	if hides 5 '^error: cannot make'; then pass "Esc clears the status line"; else fail "Esc clears the status line" "$(screen | tail -3)"; fi
else
	fail "Esc clears the status line" "no error in the status line to clear: $(screen | tail -3 | tr '\n' '|')"
fi
press m
if shows 5 '^Messages, the newest last' && has 'error: cannot make the image directory'; then
	pass "the history keeps the message after the status line is cleared"
else
	fail "history after Esc" "$(screen | head -6 | tr '\n' '|')"
fi
press q

# --- Smaller than 80x24: the help wraps and scrolls rather than cut -------
start "$ROOT" 60 20 || fail "dashboard at 60x20" "$(screen | head -3)"
press '?'
if shows 5 'Up and Down scroll' && has 'move the selection' && lacks 'return\.'; then
	press Down Down Down Down Down Down Down Down Down Down Down Down Down Down
	if shows 5 'return\.' && lacks 'move the selection' && has 'quit \(domains run on\)'; then
		pass "at 60x20 the help is taller than the screen: Down scrolls it to its end, nothing cut"
	else
		fail "help scrolls at 60x20" "$(screen | tr '\n' '|')"
	fi
else
	fail "help at 60x20" "$(screen | tr '\n' '|')"
fi
press x
hides 5 'Up and Down scroll' || fail "help closes at 60x20" "still shown"
