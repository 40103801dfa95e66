# shellcheck shell=bash
# The Lodge test kernel's guests in tests/linux/, sourced after lib.sh:
# the kernel (and an initramfs of share/linux/init-NAME.c) built or found
# cached in $KDIR, and what a test asks of its one domain while it boots:
# its console (klog, seen), its state, the time since it was created (at)
# and, when a step does not come, where it stopped (stuck).
KDIR=$BUILD/linux

# linux_kernel_ready [INIT]: 0, or a failure reported and 1.
linux_kernel_ready() {
	if ! "$TOP/share/linux/build-test-kernel.sh" "$KDIR" >"$T/build.log" 2>&1 ||
	   { [ -n "${1:-}" ] && ! "$TOP/share/linux/build-init.sh" "$1" "$KDIR" >>"$T/build.log" 2>&1; }; then
		fail "Lodge test kernel${1:+ and its $1 initramfs} build" "$(tail -1 "$T/build.log")"
		return 1
	fi
}

# linux_guest NAME: the domain the helpers below watch; at's clock starts.
linux_guest() { LINUX_GUEST=$1; LINUX_T0=$SECONDS; }
klog() { lodge console --log "$LINUX_GUEST" 2>/dev/null | tr -d '\r'; }
seen() { klog | grep -Eq -- "$1"; }
state() { field "$LINUX_GUEST" 5; }
at() { echo "$((SECONDS - LINUX_T0)) s"; }
stuck() { echo "state $(state) after $(at); last line: $(klog | grep -v '^\s*$' | tail -1 | cut -c1-160)"; }

# linux_hello_domain NAME VCPUS ARGS: the config of a domain NAME of the
# test kernel with init-hello as /init (128 MiB; ARGS after console=ttyS0
# on its command line, init-hello's syscalls=, ticks=, lstar=), kept when
# it powers off or crashes so that its console can still be read; the
# helpers above watch it (linux_guest).
linux_hello_domain() {
	cat >"$DOMS/$1.cfg" <<CFG
name = "$1"
memory = 128
vcpus = $2
kernel = "$KDIR/vmlinux"
ramdisk = "$KDIR/initramfs-hello.img"
cmdline = "console=ttyS0 $3"
on_poweroff = "preserve"
on_crash = "preserve"
CFG
	linux_guest "$1"
}
# ended: the watched domain is neither running nor paused.
ended() { [ "$(state)" != running ] && [ "$(state)" != paused ]; }
