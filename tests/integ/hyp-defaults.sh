#!/bin/bash
# lodge-hyp's defaults are the schema's (src/common/schema.h): what
# `lodge-hyp --help` prints and what lodge-hyp(8) says are the numbers the
# schema defines; and `lodge sched --help`'s weight.
. "$(dirname "$0")/../lib.sh"

integ_begin "hyp-defaults"
SCHEMA=$TOP/src/common/schema.h
MAN=$TOP/man/lodge-hyp.8
HYP=$BUILD/lodge-hyp
if [ ! -x "$HYP" ]; then skip "hyp-defaults" "$HYP not built"; exit 0; fi
help=$("$HYP" --help)

schema_value() {   # MACRO: its number in schema.h
	awk -v m="$1" '$1 == "#define" && $2 == m { print $3; exit }' "$SCHEMA"
}
# The man page as one line, with the roff escape \- read as -.
man_text=$(sed 's/\\-/-/g' "$MAN" | tr '\n' ' ')

# OPTION MACRO: --help's "Defaults:" and the man page's "default N" of the
# option are the schema's number.
check() {
	local opt=$1 macro=$2 want got_help got_man
	want=$(schema_value "$macro")
	if [ -z "$want" ]; then fail "hyp-defaults $opt" "$macro not in schema.h"; return; fi
	got_help=$(sed -n '/^Defaults:/,/^Ctrl/p' <<<"$help" | tr '\n' ' ' |
		grep -o -- "$opt [0-9]*" | awk '{ print $2 }')
	# The first "default N" within a sentence's reach of the option's name.
	got_man=$(grep -oP -- "\\Q$opt\\E\\b.{0,80}?default \\K[0-9]+" <<<"$man_text" | head -1)
	if [ "$got_help" = "$want" ] && [ "$got_man" = "$want" ]; then
		pass "hyp-defaults $opt: --help and lodge-hyp(8) say the schema's $want"
	else
		fail "hyp-defaults $opt" "schema.h $macro=$want, --help '$got_help', lodge-hyp(8) '$got_man'"
	fi
}

check --memory DOMAIN_MEMORY_DEFAULT_MIB
check --vcpus DOMAIN_VCPUS_DEFAULT
check --console-log-size HOST_CONSOLE_LOG_DEFAULT_KIB
check --cpu-weight DOMAIN_CPU_WEIGHT_DEFAULT

# The lodge command's help for the same numbers.
want=$(schema_value DOMAIN_CPU_WEIGHT_DEFAULT)
got=$("$LODGE" sched --help | grep -oP -- '--weight W +credit weight \(default \K[0-9]+')
[ "$got" = "$want" ] && pass "hyp-defaults: lodge sched --help's weight default is the schema's $want" ||
	fail "hyp-defaults lodge sched --weight" "schema.h $want, lodge sched --help '$got'"
integ_exit
