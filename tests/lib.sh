# Shared helpers for Lodge's shell tests.  Every test reports one line per
# case on stdout:  "PASS: name", "FAIL: name: why" or "SKIP: name: why";
# tests/run.sh counts them.
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
HYP=${HYP:-$BUILD/lodge-hyp}
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
need_hw_kvm() {
	need_kvm "$1" || return 1
	if [ "$(kvm_backend)" = pvm ]; then
		skip "$1" "needs hardware KVM (this host's /dev/kvm is PVM, which emulates guest kernel code and cannot boot a stock kernel to userspace)"
		return 1
	fi
	return 0
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

TMPDIR_TEST=$(mktemp -d /tmp/lodge-test.XXXXXX)
cleanup_tmp() { rm -rf "$TMPDIR_TEST"; }
trap cleanup_tmp EXIT
