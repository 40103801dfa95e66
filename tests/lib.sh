# shellcheck shell=bash
# Shared helpers for Lodge's shell tests.  Every test reports one line per
# case on stdout:  "PASS: name", "FAIL: name: why" or "SKIP: name: why";
# tests/run.sh counts them.
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
HYP=${HYP:-$BUILD/lodge-hyp}
LODGE=${LODGE:-$BUILD/lodge}
MINIOS=${MINIOS:-$BUILD/minios/minios.elf}

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
skip() { echo "SKIP: $1: $2"; }

# need_kvm NAME: skip NAME (and return 1) when /dev/kvm cannot be used.
need_kvm() {
	if [ ! -c /dev/kvm ]; then skip "$1" "no /dev/kvm on this host"; return 1; fi
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then skip "$1" "no permission on /dev/kvm"; return 1; fi
	return 0
}
need_root() {
	if [ "$(id -u)" -ne 0 ]; then skip "$1" "needs root"; return 1; fi
	return 0
}
# kvm_backend: prints "pvm" when /dev/kvm is the PVM software backend, else "hw".
kvm_backend() {
	if [ -d /sys/module/kvm_pvm ]; then
		echo pvm
	else
		echo hw
	fi
}
# need_hw_kvm NAME [WHY]: skip NAME (and return 1) on a PVM host, saying
# WHY it needs hardware KVM (default: the time a whole boot takes there).
need_hw_kvm() {
	need_kvm "$1" || return 1
	if [ "$(kvm_backend)" = pvm ]; then
		local why="it boots a stock kernel the whole way to user space, which works on this host's PVM but takes 10 minutes or more of emulated kernel code, too long for make check (Debian's own kernel to its shell on PVM: tests/linux/debian-shell.sh, make check-linux)"
		skip "$1" "needs hardware KVM: ${2:-$why}"
		return 1
	fi
	return 0
}

# Debian's cloud kernel (share/debian/build-kernel.sh: fetched once, cached
# in $DEB).  debian_kernel_ready NAME: 0, or NAME skipped with why it could
# not be had (no network, no package) and 1.
DEB=$BUILD/debian
debian_kernel_ready() {
	"$TOP/share/debian/build-kernel.sh" "$DEB" >"$T/build.log" 2>&1 && return 0
	skip "$1" "cannot get Debian's kernel: $(tail -1 "$T/build.log")"
	return 1
}

# wait_until SECONDS CMD...: retry CMD every 0.1 s until it succeeds, for
# at most SECONDS of wall time (however long each try of CMD takes).
now_us() { echo "${EPOCHREALTIME/./}"; }
wait_until() {
	local end=$(($(now_us) + $1 * 1000000))
	shift
	while :; do
		"$@" && return 0
		[ "$(now_us)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# wait_for FILE PATTERN SECONDS: wait until FILE contains PATTERN (grep -E).
wait_for() {
	local file=$1 pat=$2 secs=$3 i=0
	while [ $i -lt $((secs * 10)) ]; do
		grep -Eq -- "$pat" "$file" 2>/dev/null && return 0
		sleep 0.1; i=$((i + 1))
	done
	return 1
}

# ---- the start and the end of an integration test ---------------------------
# tests/README.md shows them in use.  A test begins with
#     integ_begin LABEL [NEED...]
# and from then on has, besides $TMPDIR_TEST (also $T) and $LODGE:
#     ROOT RUN DOMS   a --root of its own ($T/root), its runtime directory
#                     and its domains/ directory (made, empty)
#     lodge ARGS      $LODGE --root $ROOT ARGS, in $NS if the test made it,
#                     under a timeout of $LODGE_TIMEOUT seconds (default 30)
# At exit, whatever way the test ends, in this order: the processes the
# test started and that still run (its children and theirs) get SIGTERM,
# and SIGKILL 10 s later; every domain of $ROOT and of each integ_root is
# destroyed; the processes given to track_pid, if still the same ones, get
# SIGKILL; the at_exit commands run, in the order given; the namespaces of
# integ_netns and netns_add are deleted; $TMPDIR_TEST is removed.
TMPDIR_TEST=$(mktemp -d /tmp/lodge-test.XXXXXX)
T=$TMPDIR_TEST
INTEG_LABEL= INTEG_NS=
INTEG_ROOTS=() INTEG_ROOT_NS=() INTEG_NETNS=() INTEG_TRACKED=() INTEG_AT_EXIT=()

# integ_begin LABEL [NEED...]: check each NEED in turn; at the first one
# missing, print "SKIP: LABEL: why" and exit 0.  NEEDs:
#   kvm            /dev/kvm usable          root     running as root
#   minios         Mini-OS built ($MINIOS)
#   cmd:NAME[:WHAT]  NAME on the PATH ("NAME (WHAT) not installed" if not)
#   netns          a network namespace of its own: integ_netns
integ_begin() {
	local need c what
	INTEG_LABEL=$1
	shift
	for need; do
		case $need in
		kvm) need_kvm "$INTEG_LABEL" || exit 0 ;;
		root) need_root "$INTEG_LABEL" || exit 0 ;;
		minios) [ -f "$MINIOS" ] || { skip "$INTEG_LABEL" "Mini-OS not built"; exit 0; } ;;
		cmd:*)
			c=${need#cmd:} what=
			case $c in *:*) what=" (${c#*:})" c=${c%%:*} ;; esac
			command -v "$c" >/dev/null || { skip "$INTEG_LABEL" "$c$what not installed"; exit 0; }
			;;
		netns) integ_netns ;;
		*) fail "$INTEG_LABEL" "integ_begin: unknown need '$need'"; exit 1 ;;
		esac
	done
	ROOT=$T/root
	RUN=$ROOT/run/lodge
	DOMS=$ROOT/etc/lodge/domains
	mkdir -p "$DOMS"
}

lodge() { lodge_at "$ROOT" "$INTEG_NS" "$@"; }
# lodge_at ROOT NETNS ARGS...: lodge on another --root, in NETNS unless "".
lodge_at() {
	local root=$1 ns=$2
	shift 2
	if [ -n "$ns" ]; then
		ip netns exec "$ns" timeout "${LODGE_TIMEOUT:-30}" "$LODGE" --root "$root" "$@"
	else
		timeout "${LODGE_TIMEOUT:-30}" "$LODGE" --root "$root" "$@"
	fi
}
in_ns() { ip netns exec "$NS" "$@"; }

# ---- domains of a test --------------------------------------------------------
# domain_cfg NAME [EXTRA LINE...]: $DOMS/NAME.cfg, a 1-vCPU, 32 MiB Mini-OS
# domain, with the extra config lines given.
domain_cfg() {  # NAME [EXTRA LINE...]: a 1-vCPU, 32 MiB Mini-OS domain
	local n=$1
	shift
	{
		printf 'name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' "$n" "$MINIOS"
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$DOMS/$n.cfg"
}
# field NAME COLUMN: that column of NAME's row in lodge list -o tsv.
field() { lodge list -o tsv 2>/dev/null | awk -F'\t' -v n="$1" -v c="$2" '$1 == n { print $c }'; }
# console_log NAME: what NAME's guest printed so far (CR stripped).
console_log() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
# booted NAME: NAME's Mini-OS has shown its prompt.
booted() { console_log "$1" | grep -q 'minios> '; }

# integ_netns: the test's own network namespace, lodge-SCRIPT-PID in $NS;
# lodge runs in it from now on.  netns_add NAME...: more namespaces.  Both
# skip the test when a namespace cannot be made; all go at exit, after the
# domains.
integ_netns() {
	NS=lodge-$(basename "$0" .sh)-$$
	netns_add "$NS"
	INTEG_NS=$NS
}
netns_add() {
	local n
	for n; do
		ip netns add "$n" 2>/dev/null || { skip "$INTEG_LABEL" "cannot create network namespaces"; exit 0; }
		INTEG_NETNS+=("$n")
		# A new namespace takes the host's IPv4 forwarding (a Docker or
		# router host has it on): start from a fresh host's, off.
		ip netns exec "$n" sh -c 'echo 0 >/proc/sys/net/ipv4/ip_forward' 2>/dev/null
	done
}
# integ_root DIR [NETNS]: another --root whose domains go at exit (their
# lodge destroy run in NETNS).
integ_root() { INTEG_ROOTS+=("$1"); INTEG_ROOT_NS+=("${2:-}"); }
# at_exit COMMAND...: a step of the test's own cleanup, a command line run
# at exit (so it sees variables set later: quote them, at_exit 'rm "$F"').
at_exit() { INTEG_AT_EXIT+=("$*"); }
# track_pid PID...: processes the test did not start itself (a domain's
# lodge-hyp) to be killed at exit if still running.  Each is known by its
# pid and start time: by then the pid may be another process's.
track_pid() {
	local p s
	for p; do s=$(proc_start "$p") && INTEG_TRACKED+=("$p:$s"); done
}
proc_start() {   # PID: when it started (clock ticks since boot); fails if gone
	local line f
	{ read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
	read -ra f <<<"${line##*) }"   # the fields after the command name
	echo "${f[19]}"
}

# own_processes: sets OWN to the live processes this shell started, its
# children and theirs, from the parent links in /proc at this moment; a
# pid saved earlier may have been reaped and reused by anyone since.
own_processes() {
	local stat line rest state ppid q c
	local -A kids=()
	OWN=()
	for stat in /proc/[0-9]*/stat; do
		{ read -r line <"$stat"; } 2>/dev/null || continue
		rest=${line##*) }          # the command name may hold anything
		state=${rest%% *}
		rest=${rest#* }
		ppid=${rest%% *}
		case $state:$ppid in [ZX]:*|*:*[!0-9]*|*:) continue ;; esac
		kids[$ppid]+=" ${line%% *}"
	done
	q=("$BASHPID")
	while [ ${#q[@]} -gt 0 ]; do
		for c in ${kids[${q[0]}]:-}; do OWN+=("$c"); q+=("$c"); done
		q=("${q[@]:1}")
	done
}
no_own_processes() { own_processes; [ ${#OWN[@]} -eq 0 ]; }

# loop_attach VAR FILE [-P]: a loop device over FILE (-P: with its
# partitions), put in VAR; fails if none can be had.  `losetup -f --show`
# run by two tests at once may print a device the other one got
# (util-linux 2.38 here), so the device is checked to be over FILE, and
# asked again if not.  Every device attached is detached at exit if it is
# still over FILE: never another test's.
INTEG_LOOPS=()
loop_backs() {   # DEV FILE: DEV is a loop device over FILE
	[ -n "$1" ] && [ "$(losetup -nO BACK-FILE "$1" 2>/dev/null | sed 's/ (deleted)$//')" = "$(realpath -m "$2")" ]
}
loop_attach() {
	local var=$1 file=$2 dev tries
	shift 2
	for tries in 1 2 3 4 5 6 7 8; do
		dev=$(losetup -f --show "$@" "$file" 2>/dev/null) || return 1
		if loop_backs "$dev" "$file"; then
			INTEG_LOOPS+=("$dev=$file")
			printf -v "$var" '%s' "$dev"
			return 0
		fi
	done
	return 1
}
# loop_detach DEV: detach DEV if it is still one this test attached.
loop_detach() {
	local i
	for i in "${!INTEG_LOOPS[@]}"; do
		[ "${INTEG_LOOPS[$i]%%=*}" = "$1" ] || continue
		loop_backs "$1" "${INTEG_LOOPS[$i]#*=}" && losetup -d "$1" 2>/dev/null
		unset 'INTEG_LOOPS[i]'
	done
}
# At exit: every loop device over a file this test attached, found by the
# file (losetup -j), so one a racing losetup set up unseen goes too.
loop_detach_all() {
	local l dev
	for l in "${INTEG_LOOPS[@]}"; do
		for dev in $(losetup -nO NAME -j "${l#*=}" 2>/dev/null) "${l%%=*}"; do
			loop_backs "$dev" "${l#*=}" && losetup -d "$dev" 2>/dev/null
		done
	done
	INTEG_LOOPS=()
}

# template_cached DIST: DIST's Debian template (lodge template-update),
# built once and kept under $BUILD/cache/template-root for every later test
# and run, then copied into $ROOT.  Its key is the mmdebstrap command line
# a build runs (packages, apt sources): a change of them builds anew, the
# downloaded packages reused.  Fails with the reason in TEMPLATE_WHY (the
# Debian mirror unreachable, the build's error); TEMPLATE_BUILT_S is how
# long the build took if this call built it, else empty.
template_cached() {
	local dist=$1 croot=$BUILD/cache/template-root key lockfd t0 rc=0
	TEMPLATE_BUILT_S= TEMPLATE_WHY=
	mkdir -p "$croot" "$ROOT/var/lib/lodge/templates" || { TEMPLATE_WHY="cannot make $croot"; return 1; }
	key=$("$LODGE" --root "$croot" template-update --dry-run "$dist" 2>&1 | grep -vF -- "$croot" | sha256sum | cut -c1-16)
	exec {lockfd}>"$BUILD/cache/template.lock"
	flock "$lockfd"
	if [ "$(cat "$croot/key-$dist" 2>/dev/null)" != "$key" ] ||
	   ! compgen -G "$croot/var/lib/lodge/templates/$dist-*.img" >/dev/null; then
		if ! timeout 20 curl -fsS -o /dev/null "http://deb.debian.org/debian/dists/$dist/InRelease" 2>/dev/null; then
			TEMPLATE_WHY="the Debian mirror (deb.debian.org) is unreachable"
			exec {lockfd}>&-
			return 1
		fi
		t0=$SECONDS
		if ! timeout 3600 "$LODGE" --root "$croot" template-update "$dist" >"$T/template-$dist.log" 2>&1; then
			TEMPLATE_WHY="lodge template-update $dist: $(tail -1 "$T/template-$dist.log")"
			exec {lockfd}>&-
			return 1
		fi
		TEMPLATE_BUILT_S=$((SECONDS - t0))
		echo "$key" >"$croot/key-$dist"
	fi
	cp --sparse=always "$croot/var/lib/lodge/templates/$dist"-*.img \
		"$croot/var/lib/lodge/templates/$dist"-*.info "$ROOT/var/lib/lodge/templates/" ||
		{ TEMPLATE_WHY="cannot copy the cached template"; rc=1; }
	exec {lockfd}>&-
	return $rc
}

# fnv1a64w FILE OFFSET LENGTH: the FNV-1a sum over little-endian 64-bit
# words that Mini-OS's blk-sum prints, of LENGTH bytes of FILE at OFFSET.
fnv1a64w() {
	python3 - "$@" <<'PY'
import struct, sys
f, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, 'rb') as fh:
    fh.seek(off)
    data = fh.read(n)
h = 0xcbf29ce484222325
for (w,) in struct.iter_unpack('<Q', data):
    h = ((h ^ w) * 0x100000001b3) & 0xffffffffffffffff
print("0x%016x" % h)
PY
}

integ_exit() {
	local i p d step
	own_processes
	if [ ${#OWN[@]} -gt 0 ]; then
		kill -TERM "${OWN[@]}" 2>/dev/null
		wait_until 10 no_own_processes || { own_processes; kill -KILL "${OWN[@]}" 2>/dev/null; }
		wait 2>/dev/null
	fi
	pool_hosts_local   # tests/pool-lib.sh: a pool host's destroy would go through the pool
	[ -n "${ROOT:-}" ] && INTEG_ROOTS=("$ROOT" "${INTEG_ROOTS[@]}") INTEG_ROOT_NS=("$INTEG_NS" "${INTEG_ROOT_NS[@]}")
	for i in "${!INTEG_ROOTS[@]}"; do
		for d in "${INTEG_ROOTS[$i]}"/run/lodge/*/; do
			[ -d "$d" ] && lodge_at "${INTEG_ROOTS[$i]}" "${INTEG_ROOT_NS[$i]}" destroy "$(basename "$d")" >/dev/null 2>&1
		done
	done
	for p in "${INTEG_TRACKED[@]}"; do
		[ "$(proc_start "${p%%:*}")" = "${p#*:}" ] && kill -KILL "${p%%:*}" 2>/dev/null
	done
	for step in "${INTEG_AT_EXIT[@]}"; do eval "$step"; done
	loop_detach_all
	for p in "${INTEG_NETNS[@]}"; do ip netns del "$p" 2>/dev/null; done
	rm -rf "$TMPDIR_TEST"
}
trap integ_exit EXIT
# For a script that still sets its own EXIT trap (and so replaces integ_exit).
cleanup_tmp() { rm -rf "$TMPDIR_TEST"; }
# The pool's fixture (etcd cluster): tests/pool-lib.sh.
. "$TOP/tests/pool-lib.sh"
# The dashboard in tmux (screen, has, shows, press...): tests/tmux.sh.
. "$TOP/tests/tmux.sh"
