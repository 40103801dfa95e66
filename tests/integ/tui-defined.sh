#!/bin/bash
# The dashboard and the defined domains (issue 35, points 1 and 4), in
# tmux as a user drives it at 80x24: a config of domains_dir that is not
# running has a row, off (off* when it autostarts); S starts it; e edits
# its config in $EDITOR, a config the loader refuses shown with FILE:LINE
# and the edit offered again; A turns autostart on and off; D on an off
# row deletes its config, asking twice (the disks kept on n).  Point 4:
# the create form outlives its device picker (Ctrl-B, then Esc) with its
# fields; j and k move the selection as J and K do, k destroys nothing,
# D asks before it destroys; the memory hint's default is the number in
# the field; the Networks view has no stray line at 80 columns.
. "$(dirname "$0")/../lib.sh"

integ_begin "dashboard: defined domains and keys" kvm minios cmd:tmux
tmux_begin "lodge-tui-defined-$$"
mkdir -p "$ROOT/var/lib/lodge/images"
IMAGES=$ROOT/var/lib/lodge/images

running() { lodge list -o tsv 2>/dev/null | awk -F'\t' -v n="$1" '$1 == n' | grep -q .; }
# The editor the dashboard runs: each call does what the next line of
# $T/edits says to the file (a sed script), as a user would in vi.
cat >"$T/editor" <<ED
#!/bin/bash
n=\$(cat "$T/edit-count" 2>/dev/null || echo 0)
n=\$((n + 1)); echo \$n >"$T/edit-count"
sed -i -e "\$(sed -n "\${n}p" "$T/edits")" "\$1"
ED
chmod +x "$T/editor"
start() {
	tmux_open dashboard 80 24 "TERM=xterm EDITOR=$T/editor $LODGE --root $ROOT -d 0.5; sleep 120"
	shows 10 'Domain-0'
}
rows() { screen | awk '$1 ~ /^([0-9]+|-)$/ && $2 != "Domain-0" { print $2 }' | tr '\n' ' '; }
select_dom() { press /; press Escape; press /; type_text "$1"; press Enter; shows 5 "filter /$1" && press Home Down; }
# detail_of: the name the detail view shows for the selection (Enter, read, Esc).
# rows: the table's domain names, top down (Domain-0 aside).
detail_of() {
	press Enter
	wait_until 5 has '^[a-z0-9-]+( \(id [0-9]+|: defined)' || return 1
	screen | sed -n 1p | grep -Eo '^[a-z0-9-]+'
	press Escape
	wait_until 5 has 'ID +NAME'
}

truncate -s 4M "$IMAGES/d1-vda.img"
printf 'name = "d1"\nmemory = 48\nvcpus = 2\nkernel = "%s"\ndisk = [ "%s,raw,vda,rw" ]\n' "$MINIOS" \
	"$IMAGES/d1-vda.img" >"$DOMS/d1.cfg"
printf 'name = "d2"\nmemory = 32\nkernel = "%s"\nautostart = true\n' "$MINIOS" >"$DOMS/d2.cfg"
start || { fail "dashboard: defined domains" "the dashboard did not start: $(screen | head -3)"; exit 0; }

# ---- point 1: the rows, S, e, A, D ---------------------------------------------------------
if shows 10 '^ +- d1 +off +- +48 +- +2 ' && has '^ +- d2 +off\* +- +32 '; then
	pass "defined domains that are not running have rows: d1 off (48 MiB, 2 vCPUs), d2 off* (autostart)"
else
	fail "defined domains in the table" "$(screen | sed -n 3,8p | tr '\n' '|')"
fi

select_dom d1
printf '%s\n' 's/^memory = 48$/memory = lots/' 's/^memory = lots$/memory = 40/' >"$T/edits"
press e
if shows 10 'd1\.cfg:2: memory' && shows 5 'edit again'; then
	pass "e: a config the loader refuses is shown with FILE:LINE and the edit offered again"
else
	fail "e refused" "$(screen | tr '\n' '|')"
fi
if grep -q '^memory = 48$' "$DOMS/d1.cfg"; then
	pass "e: the refused config left the file as it was"
else
	fail "e refused left the file" "$(cat "$DOMS/d1.cfg")"
fi
press y
if shows 10 'saved the config of d1' && grep -q '^memory = 40$' "$DOMS/d1.cfg" && shows 5 '^ +- d1 +off +- +40 '; then
	pass "e again: the fixed config is saved, the row shows its 40 MiB"
else
	fail "e saved" "$(screen | tail -4 | tr '\n' '|'); $(grep memory "$DOMS/d1.cfg")"
fi

press A
if shows 5 'autostart of d1: on' && grep -q '^autostart = true$' "$DOMS/d1.cfg" && shows 5 '^ +- d1 +off\* '; then
	pass "A turns autostart on: the config says so, the row shows off*"
else
	fail "A on" "$(screen | tail -3 | tr '\n' '|'); $(cat "$DOMS/d1.cfg")"
fi
press A
if shows 5 'autostart of d1: off' && grep -q '^autostart = false$' "$DOMS/d1.cfg"; then
	pass "A again turns it off"
else
	fail "A off" "$(screen | tail -3 | tr '\n' '|')"
fi

press S
if shows 15 'started d1' && wait_until 10 running d1 && shows 10 '^ +[0-9]+ d1 +run '; then
	pass "S starts the off domain: its row runs"
else
	fail "S" "$(screen | tail -3 | tr '\n' '|'); $(lodge list 2>&1 | tr '\n' '|')"
fi

# ---- point 4: j and k move, k destroys nothing, D asks -------------------------------------
press /; press Escape
shows 5 'ID +NAME'
press Home
press j
first=$(detail_of)
press j
second=$(detail_of)
press k
again=$(detail_of)
order=$(rows)
if [ "$first $second " = "$order" ] && [ "$again" = "$first" ] && running d1; then
	pass "j moves the selection down, k up ($first, $second, $again), and k destroyed nothing"
else
	fail "j/k" "rows '$order'; first '$first', second '$second', again '$again'; $(lodge list 2>&1 | tr '\n' '|')"
fi
select_dom d1
press D
if shows 5 'Destroy d1\? \(y/n\)'; then
	press n
	if shows 5 'Destroy cancelled' && running d1; then
		pass "D asks before it destroys; n keeps the domain"
	else
		fail "D n" "$(screen | tail -3 | tr '\n' '|')"
	fi
else
	fail "D asks" "$(screen | tail -3 | tr '\n' '|')"
fi
press D
shows 5 'Destroy d1\? \(y/n\)' && press y
if wait_until 15 sh -c "! $LODGE --root $ROOT list -o tsv 2>/dev/null | grep -q '^d1'" && shows 10 '^ +- d1 +off '; then
	pass "D, y destroys d1: its row is off again"
else
	fail "D y" "$(screen | sed -n 3,8p | tr '\n' '|')"
fi

# D on an off row: delete, asked twice; n to the disks keeps them.
select_dom d1
press D
if shows 5 'Delete the config of d1 \(its disks are kept\)\? \(y/n\)'; then
	press y
	if shows 5 'Also delete the disks of d1'; then
		press n
		if shows 5 'deleted the config of d1' && [ ! -e "$DOMS/d1.cfg" ] && [ -e "$IMAGES/d1-vda.img" ] &&
		   hides 5 '^ +- d1 '; then
			pass "D on an off row: delete asked twice; y, n: the config gone, its disk kept, the row gone"
		else
			fail "D delete" "$(screen | tail -3 | tr '\n' '|'); $(ls "$DOMS" "$IMAGES")"
		fi
	else
		fail "D delete disks question" "$(screen | tail -3 | tr '\n' '|')"
	fi
else
	fail "D delete question" "$(screen | tail -3 | tr '\n' '|')"
fi
press /; press Escape

# ---- point 4: the create form outlives its picker; the memory hint -------------------------
press n
if shows 5 'Create a domain'; then
	mem=$(screen | sed -n -E 's/^Memory \(MiB\) +([0-9]+).*/\1/p')
	press Down
	shows 5 '^guest RAM.*default [0-9]+'           # the field's hint, under the form
	hint=$(screen | grep -Eo 'default [0-9]+' | head -1)
	if [ -n "$mem" ] && [ "$hint" = "default $mem" ]; then
		pass "the memory field shows $mem and its hint says '$hint'"
	else
		fail "memory hint" "field '$mem', hint '$hint': $(screen | tr '\n' '|')"
	fi
	press Up
	type_text keepme
	shows 5 '^Name +keepme'
	for _ in 1 2 3 4 5 6; do press Down; done
	shows 5 'Ctrl-B: pick a device'
	press C-b
	if shows 5 'Block devices|no block devices found'; then
		press Escape
		shows 5 'Create a domain'
		# The refresh interval is 0.5 s: on main the form closed within it.
		# Its absence can only be waited for: four intervals.
		sleep 2
		type_text x
		if has 'Create a domain' && shows 5 '^Name +keepme( |$)'; then
			pass "the create form outlives the device picker (Ctrl-B, Esc) by four refreshes, its name kept"
		else
			fail "the form after the picker" "$(screen | head -6 | tr '\n' '|')"
		fi
	else
		fail "Ctrl-B picker" "$(screen | head -4 | tr '\n' '|')"
	fi
	press Escape
	hides 5 'Create a domain'
else
	fail "create form" "$(screen | head -3 | tr '\n' '|')"
fi

# ---- point 4: the Networks view at 80 columns ----------------------------------------------
press N
if shows 5 '^Network +Mode' && [ "$(screen | wc -L)" -le 80 ] &&
   [ "$(screen | sed -n 4p | sed 's/ *$//')" = none ] && lacks '^ *0 +0 *$'; then
	pass "the Networks view fits 80 columns: no header tail on the next line, none alone"
else
	fail "Networks view" "$(screen | head -6 | tr '\n' '|')"
fi
press N
