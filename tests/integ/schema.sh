#!/bin/bash
# One schema beneath every face that takes a domain config: a table of
# configs, good and bad, each run through `lodge check`, `lodge create` and
# the dashboard's create form (test-lib-form drives the library form the
# dashboard's fields call, field by field and then whole, as its Create
# does).  All three must give the same verdict and the same message, the
# one the table expects; the good configs are created and destroyed as
# Mini-OS domains, and a refused create leaves nothing behind.
. "$(dirname "$0")/../lib.sh"

integ_begin "schema" kvm root minios
FORM=$BUILD/tests/test-lib-form
if [ ! -x "$FORM" ]; then skip "schema" "$FORM not built (make $FORM)"; exit 0; fi
CFG=$TMPDIR_TEST/cfg
BR=lodgesch$$
mkdir -p "$CFG"
at_exit '"$LODGE" bridge-delete "$BR" >/dev/null 2>&1'
if ! "$LODGE" bridge-create "$BR" >/dev/null; then fail "schema" "cannot create bridge $BR"; exit 0; fi
IMG=$TMPDIR_TEST/disk.img
truncate -s 8M "$IMG"
# In range (at most 4 TiB) but more than this host has available.
big=$(awk '/^MemAvailable:/ { m = int($2 / 1024) + 4096; print (m > 4194304 ? 4194304 : m) }' /proc/meminfo)

# The file the form's fields make, as the library's form writes them
# (config-form.c): one key a field, the disk as the guest's vda, bridge and
# MAC as one vif; an empty field leaves its key out.  HEAD and TAIL are
# lines the form has no field for.
write_cfg() {   # FILE HEAD TAIL FIELD=VALUE...
	local file=$1 head=$2 tail=$3 kv k v bridge="" mac=""
	shift 3
	{
		[ -n "$head" ] && printf '%s\n' "$head"
		for kv in "$@"; do
			k=${kv%%=*} v=${kv#*=}
			[ -n "$v" ] || continue
			case $k in
			disk) printf 'disk = [ "%s,vda,w" ]\n' "$v" ;;
			bridge) bridge=$v ;;
			mac) mac=$v ;;
			*) printf '%s = "%s"\n' "$k" "$v" ;;
			esac
		done
		if [ -n "$bridge" ]; then
			printf 'vif = [ "bridge=%s%s" ]\n' "$bridge" "${mac:+,mac=$mac}"
		fi
		[ -n "$tail" ] && printf '%s\n' "$tail"
	} >"$file"
}

# What this host has available changes from one reading to the next.
same() { sed -E 's/available \([0-9]+ MiB\)/available (N MiB)/' <<<"$1"; }
running() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n && ($5 == "running" || $5 == "blocked") { f = 1 } END { exit !f }'; }
listed() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $3 " MiB, " $4 " vCPUs" }'; }
gone() { [ ! -e "$RUN/$1" ]; }

n=0
forms=0
# row LABEL EXPECT HEAD TAIL FIELD=VALUE...: EXPECT is "ok" or the start of
# "KEY: what is wrong".
row() {
	local label=$1 expect=$2 head=$3 tail=$4 file name out rc cmsg crmsg fmsg line mem vcpus want why=""
	shift 4
	n=$((n + 1))
	file=$CFG/case$n.cfg
	last=$file
	write_cfg "$file" "$head" "$tail" "$@"
	name=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$file")

	# lodge check: "FILE: ok", or one line "FILE:LINE: KEY: what".
	out=$(lodge check "$file" 2>&1); rc=$?
	if [ $rc -eq 0 ] && [ "$out" = "$file: ok" ]; then
		cmsg=ok
	elif [ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && [[ $out =~ ^"$file":([0-9]+):\ (.*)$ ]]; then
		line=${BASH_REMATCH[1]} cmsg=${BASH_REMATCH[2]}
	else
		cmsg="(check: exit $rc: $out)"
	fi

	# lodge create: a running domain, destroyed again; or the same line
	# as an error and nothing left behind.
	out=$(lodge create "$file" 2>&1); rc=$?
	out=${out//$'\r'/}        # log lines end in \r\n: a terminal may be raw
	if [ $rc -eq 0 ]; then
		crmsg=ok
		mem=$(sed -n 's/^memory = "\(.*\)"$/\1/p' "$file") vcpus=$(sed -n 's/^vcpus = "\(.*\)"$/\1/p' "$file")
		want="${mem:-128} MiB, ${vcpus:-1} vCPUs"         # the defaults of lodge.conf(5)
		if ! wait_until 30 running "$name"; then
			why="created, but $name is not listed running: $(lodge list -o tsv | tr '\n' '|')"
		elif [ "$(listed "$name")" != "$want" ]; then
			why="created with $(listed "$name"), not $want"
		elif ! lodge destroy "$name" >/dev/null || ! wait_until 30 gone "$name"; then
			why="$name could not be destroyed"
		fi
	elif [[ $out =~ ^lodge:\ error:\ "$file:$line":\ (.*)$ ]] && [ "$(wc -l <<<"$out")" = 1 ]; then
		crmsg=${BASH_REMATCH[1]}
		gone "${name:-none}" || why="a refused create left $RUN/$name behind"
	else
		crmsg="(create: exit $rc: $out)"
	fi

	# The dashboard's form, when it has a field for every key of the case.
	if [ -z "$head$tail" ]; then
		fmsg=$("$FORM" --root "$ROOT" "$@" 2>&1)
		forms=$((forms + 1))
	else
		fmsg=$cmsg
	fi

	if [ "$(same "$cmsg")" != "$(same "$crmsg")" ] || [ "$(same "$cmsg")" != "$(same "$fmsg")" ]; then
		fail "$label" "check said '$cmsg', create '$crmsg', the form '$fmsg'"
	elif [ "$expect" = ok ] && [ "$cmsg" != ok ]; then
		fail "$label" "refused by all three, but it is good: $cmsg"
	elif [ "$expect" != ok ] && [ "${cmsg#"$expect"}" = "$cmsg" ]; then
		fail "$label" "all three said '$cmsg', not '$expect...'"
	elif [ -n "$why" ]; then
		fail "$label" "$why"
	elif [ -n "$head$tail" ]; then
		pass "$label: check and create both say '$cmsg' (the form has no field for it)"
	else
		pass "$label: check, create and the form all say '$cmsg'"
	fi
}

K=$MINIOS
# Good: created, listed running, destroyed.
row "a minimal domain" ok "" "" name=sch-min "kernel=$K" memory=32
row "every field of the form" ok "" "" name=sch-full memory=32 vcpus=2 "kernel=$K" cmdline=console=ttyS0 \
	"disk=$IMG" "bridge=$BR" mac=02:4c:00:00:5c:01
row "defaults: 128 MiB, one vCPU" ok "" "" name=sch-def "kernel=$K"
# Bad, each with one fault, through all three.
row "memory below the minimum" "memory: 3 MiB is out of range (4 to 4194304 MiB, default 128 MiB)" "" "" \
	name=bad "kernel=$K" memory=3
row "memory above what the host has available" "memory: $big MiB is more than this host has available (" "" "" \
	name=bad "kernel=$K" "memory=$big"
row "memory above the maximum" "memory: 4194305 MiB is out of range (4 to 4194304 MiB" "" "" \
	name=bad "kernel=$K" memory=4194305
row "memory not a number" "memory: not a number" "" "" name=bad "kernel=$K" memory=lots
row "vcpus 0" "vcpus: 0 is out of range (1 to 64, default 1)" "" "" name=bad "kernel=$K" vcpus=0
row "vcpus 65" "vcpus: 65 is out of range (1 to 64, default 1)" "" "" name=bad "kernel=$K" vcpus=65
row "vcpus 1.5" "vcpus: not a number" "" "" name=bad "kernel=$K" vcpus=1.5
row "a name with a space" "name: 'web server' is not a name: 1 to 63 characters" "" "" "name=web server" "kernel=$K"
row "the host's name, Domain-0" "name: 'Domain-0' is the host's name" "" "" name=Domain-0 "kernel=$K"
row "Domain-0 in capitals" "name: 'DOMAIN-0' is the host's name" "" "" name=DOMAIN-0 "kernel=$K"
row "no name" "name: missing: every domain needs a name" "" "" name= "kernel=$K"
row "no kernel" "kernel: missing: nothing to boot" "" "" name=bad kernel=
row "a kernel that is not there" "kernel: cannot read '/nonexistent/vmlinuz': No such file or directory" "" "" \
	name=bad kernel=/nonexistent/vmlinuz
row "a kernel that is a directory" "kernel: '$TMPDIR_TEST' is a directory" "" "" name=bad "kernel=$TMPDIR_TEST"
row "a ramdisk that is not there" "ramdisk: cannot read '/nonexistent/initrd'" "" "" \
	name=bad "kernel=$K" ramdisk=/nonexistent/initrd
row "a disk that is not there" "disk: /nonexistent/disk.img: No such file or directory" "" "" \
	name=bad "kernel=$K" disk=/nonexistent/disk.img
row "a bridge that is not there" "vif: bridge 'lodge-nosuch0' does not exist (lodge bridge-create lodge-nosuch0)" \
	"" "" name=bad "kernel=$K" bridge=lodge-nosuch0
row "a multicast MAC" "vif: mac '01:00:5e:00:00:01' is a multicast address" "" "" \
	name=bad "kernel=$K" "bridge=$BR" mac=01:00:5e:00:00:01
row "a MAC that is not hex" "vif: mac '02:4c:zz:00:00:01' is not six hex pairs" "" "" \
	name=bad "kernel=$K" "bridge=$BR" mac=02:4c:zz:00:00:01
# Bad in keys the form has no field for: check and create.
row "two disks on one vdev" "disk: two disks are xvda (disks 1 and 2)" "" \
	"disk = [ '$IMG,xvda,w', '$IMG,xvda,r' ]" name=bad "kernel=$K"
row "an action Lodge does not know" \
	"on_crash: unknown action 'reboot' (destroy, restart, preserve, coredump-destroy, coredump-restart)" "" \
	"on_crash = 'reboot'" name=bad "kernel=$K"
row "a core dump on anything but a crash" "on_poweroff: 'coredump-destroy' is for on_crash only" "" \
	"on_poweroff = 'coredump-destroy'" name=bad "kernel=$K"
row "an xl action Lodge does not support" "on_reboot: 'rename-restart' is not supported by Lodge" "" \
	"on_reboot = 'rename-restart'" name=bad "kernel=$K"
row "an unknown key" "colour: unknown key (see lodge.conf(5))" "" "colour = 'blue'" name=bad "kernel=$K"
row "a Xen key Lodge does not implement, first in the file" \
	"builder: a Xen key Lodge does not implement (see lodge.conf(5))" "builder = 'hvm'" "" name=bad "kernel=$K"
xl_first=$last
row "a cap above what the vCPUs can use" "cap: 150% is more than 1 vCPU can use (0 to 100)" "" "cap = 150" \
	name=bad "kernel=$K" vcpus=1
row "maxmem below memory" "maxmem: 16 MiB is below memory (32 MiB)" "" "maxmem = 16" name=bad "kernel=$K" memory=32
row "a file that is no config: nothing of it quoted" "not a Lodge config (no known key" \
	"password = 'hunter2'" "" name=bad "kernel=$K"
not_config=$last

# The xl key on line 1 is named there, from Lodge's table: the rest of the
# file is not quoted.
out=$(lodge check "$xl_first" 2>&1)
if [ "$out" = "$xl_first:1: builder: a Xen key Lodge does not implement (see lodge.conf(5))" ]; then
	pass "an xl key on line 1: FILE:1: builder:, not 'not a Lodge config'"
else
	fail "an xl key on line 1" "$out"
fi
out=$(lodge check "$not_config" 2>&1)
if [ "$out" = "$not_config:1: not a Lodge config (no known key = value statement before this line; see lodge.conf(5))" ]; then
	pass "a file that is no config: FILE:1: not a Lodge config, nothing of it quoted"
else
	fail "a file that is no config is not quoted" "$out"
fi
if [ $n -ge 15 ] && [ $forms -ge 15 ]; then
	pass "$n configs through check and create, $forms of them through the form too"
else
	fail "the table" "only $n configs, $forms through the form"
fi
