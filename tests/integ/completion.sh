#!/bin/bash
# Bash completion as bash drives it: share/bash-completion/lodge sourced
# into a bash, `complete -p lodge` names its function, and _lodge run with
# COMP_WORDS and COMP_CWORD set as bash sets them completes command names
# (the same as lodge --help lists), each command's options and option
# values, a running domain's name after `lodge destroy`, a config's name
# and files after `lodge create`, a bridge after `lodge bridge-delete`,
# a network after `--network`, and a domain's disks after
# `lodge block-detach DOMAIN` (issue 35).
. "$(dirname "$0")/../lib.sh"

integ_begin "completion" kvm root minios
integ_netns
BR=cbr$$
BR=${BR:0:15}
COMPLETION=$TOP/share/bash-completion/lodge
in_ns "$LODGE" bridge-create "$BR" >/dev/null
truncate -s 1M "$T/crun-disk.img"
printf 'name = "crun"\nmemory = 32\nkernel = "%s"\ndisk = [ "%s,raw,xvdb,rw" ]\n' "$MINIOS" "$T/crun-disk.img" \
	>"$DOMS/crun.cfg"
# A network's config is enough for its name to be offered (not started).
mkdir -p "$ROOT/etc/lodge/networks"
printf 'mode = "isolated"\nbridge = "lbr-cnet"\nsubnet = "10.251.7.0/24"\n' >"$ROOT/etc/lodge/networks/cnet.cfg"
printf 'name = "cidle"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$DOMS/cidle.cfg"
if ! lodge create crun >"$T/create" 2>&1; then
	fail "completion" "create crun: $(tail -2 "$T/create")"
	exit 0
fi
mkdir "$T/files" && touch "$T/files/web.cfg"

# comp WORD...: what _lodge offers for the last WORD of
# "lodge --root ROOT WORD...", one a line, sorted.
comp() {
	in_ns bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _lodge; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$COMPLETION" "$LODGE" --root "$ROOT" "$@" | sort
}
# has WORD LINES: WORD is one of LINES.
has() { grep -qx -- "$1" <<<"$2"; }

out=$(bash -c '. "$1"; complete -p lodge' _ "$COMPLETION")
if [ "$out" = "complete -F _lodge lodge" ]; then
	pass "complete -p lodge: $out"
else
	fail "complete -p lodge" "$out"
fi
commands=$("$LODGE" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ && on { on = 0 }' | sort)
got=$(comp "")
if [ -n "$commands" ] && [ "$got" = "$commands" ] && [ "$(wc -l <<<"$got")" -ge 20 ]; then
	pass "lodge <TAB>: every command of lodge --help ($(wc -l <<<"$got")), and nothing else"
else
	fail "command names" "$(diff <(echo "$commands") <(echo "$got") | tr '\n' ' ')"
fi
if [ "$(comp de)" = destroy ] && [ "$(comp mem-s)" = mem-set ]; then
	pass "lodge de<TAB> is destroy, mem-s<TAB> mem-set"
else
	fail "command prefix" "$(comp de | tr '\n' ' ')"
fi
got=$(comp destroy "")
if [ "$got" = crun ]; then
	pass "lodge destroy <TAB>: the running domain, not the config that is not running"
else
	fail "destroy <TAB>" "$(tr '\n' ' ' <<<"$got")"
fi
got=$(comp create "")
if has crun "$got" && has cidle "$got"; then
	pass "lodge create <TAB>: the configs' names"
else
	fail "create <TAB>" "$(tr '\n' ' ' <<<"$got")"
fi
got=$(comp create "$T/files/w")
if [ "$got" = "$T/files/web.cfg" ]; then
	pass "lodge create DIR/w<TAB>: the config file"
else
	fail "create file <TAB>" "$(tr '\n' ' ' <<<"$got")"
fi
got=$(comp bridge-delete "")
if has "$BR" "$got"; then
	pass "lodge bridge-delete <TAB>: the bridge $BR"
else
	fail "bridge-delete <TAB>" "$(tr '\n' ' ' <<<"$got")"
fi
got=$(comp list --)
if [ "$(tr '\n' ' ' <<<"$got")" = "--all --header --help --long --output --pool " ]; then
	pass "lodge list --<TAB>: list's options"
else
	fail "list --<TAB>" "$(tr '\n' ' ' <<<"$got")"
fi
if [ "$(comp list -o "" | tr '\n' ' ')" = "json text tsv " ] && [ "$(comp shutdown --ti)" = --timeout ] &&
   [ "$(comp list -l "" )" = crun ]; then
	pass "option values (-o: json text tsv), a long option's name, operands after a flag"
else
	fail "option completion" "$(comp list -o "" | tr '\n' ' '); $(comp shutdown --ti); $(comp list -l "")"
fi
got=$(comp install --network "")
if [ "$got" = cnet ] && [ "$(comp install -N c)" = cnet ]; then
	pass "lodge install --network <TAB>: the networks (cnet)"
else
	fail "install --network <TAB>" "$(tr '\n' ' ' <<<"$got")"
fi
got=$(comp block-detach crun "")
if [ "$got" = xvdb ] && [ "$(comp block-detach nosuch "")" = "" ]; then
	pass "lodge block-detach crun <TAB>: its disk xvdb"
else
	fail "block-detach crun <TAB>" "$(tr '\n' ' ' <<<"$got")"
fi
if [ "$(comp trigger crun "" | tr '\n' ' ')" = "nmi power reset " ] && [ "$(comp trigger crun r)" = reset ]; then
	pass "lodge trigger crun <TAB>: nmi power reset"
else
	fail "trigger crun <TAB>" "$(comp trigger crun "" | tr '\n' ' ')"
fi
if [ "$(comp help mem-s)" = mem-set ]; then
	pass "lodge help mem-s<TAB>: a command"
else
	fail "help <TAB>" "$(comp help mem-s)"
fi
