#!/bin/bash
# Linux's own drivers on Lodge's devices, from the kernel's own log: the
# Lodge test kernel (share/linux/build-test-kernel.sh, built from Debian's
# linux-source-6.1) booted ONCE, as a domain with a disk, a vif, a balloon
# and PCI hot-plug, and taken through the whole sequence while it boots and
# after: saved in the middle of its boot and restored (the restored guest
# prints the rest), live-migrated to a second host root (the other side
# prints the rest), virtio-blk sees vda with its size, virtio-net its MAC
# (the kernel's IP autoconfiguration prints it), the boot reaches /init, the
# balloon driver gives back what mem-set asks, a disk hot-plugged with
# block-attach is found by acpiphp and probed by virtio-blk, and block-detach
# ends because the kernel ejected it.  /init spins in user mode without a
# system call (share/linux/init-spin.c), so the kernel stays up and serves
# hot-plug from its workqueues with no user space in the way (user-space.sh
# and smp.sh are the tests of the guest's system calls).
# Each step's time from create is printed (README, "Linux on PVM hosts").
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/linux-guest.sh"

integ_begin "Lodge test kernel" kvm root netns
if [ ! -x "$LODGE" ] || [ ! -x "$HYP" ]; then fail "Lodge test kernel" "lodge or lodge-hyp not built"; exit 0; fi
linux_kernel_ready || exit 0
pass "Lodge test kernel built ($(tail -1 "$T/build.log"))"

# On PVM (every machine here) each kernel instruction is emulated: minutes.
# STEP: the longest one step of the boot may take before it counts as stuck.
STEP=${LINUX_STEP_TIMEOUT:-600}
MAC=02:4c:00:00:32:04
STORE=$T/store
mkdir -p "$STORE"
VDA_MIB=64 VDB_MIB=32
truncate -s ${VDA_MIB}M "$STORE/vda.img"
truncate -s ${VDB_MIB}M "$STORE/vdb.img"
NSB=lodge-linux-b-$$
netns_add "$NSB"
RB=$T/hostb
mkdir -p "$RB/etc/lodge/domains"
integ_root "$RB" "$NSB"
lodge bridge-create lbr0 >/dev/null || { fail "bridge on host A" "lodge bridge-create lbr0 failed"; exit 0; }
lodge_at "$RB" "$NSB" bridge-create lbr0 >/dev/null || { fail "bridge on host B" "lodge bridge-create lbr0 failed"; exit 0; }
# The same config on both hosts: host B lends what its own config names.
for r in "$ROOT" "$RB"; do
	cat >"$r/etc/lodge/domains/lx.cfg" <<CFG
name = "lx"
memory = 128
vcpus = 1
kernel = "$KDIR/vmlinux"
ramdisk = "$KDIR/initramfs.img"
cmdline = "console=ttyS0 ip=10.79.32.2:::255.255.255.0:lx:eth0:off carrier_timeout=30"
disk = [ "$STORE/vda.img,raw,vda,rw" ]
vif = [ "bridge=lbr0,mac=$MAC" ]
on_reboot = "destroy"
on_crash = "preserve"
CFG
done

a() { lodge "$@"; }
b() { lodge_at "$RB" "$NSB" "$@"; }
klog_a() { a console --log lx 2>/dev/null | tr -d '\r'; }
klog_b() { b console --log lx 2>/dev/null | tr -d '\r'; }
seen_a() { klog_a | grep -Eq -- "$1"; }
seen_b() { klog_b | grep -Eq -- "$1"; }
state_at() { "$1" list -o tsv 2>/dev/null | awk -F'\t' '$1 == "lx" { print $5 }'; }
last_line() { "$1" | grep -v '^\s*$' | tail -1 | cut -c1-160; }
# The kernel's own timestamp of the last line on stdin: how far its boot had got.
ktime() { grep -Eo '^\[ *[0-9]+\.[0-9]+\]' | tail -1 | tr -d '[] '; }
t0=$SECONDS
at() { echo "$((SECONDS - t0)) s"; }
# stuck WHERE: why a step did not come (state, last line, lodge-hyp's log)
stuck() { echo "$(state_at "$1") after $(at); last line: $(last_line "$2")"; }

# ---- create, the banner -------------------------------------------------------
if ! out=$(a create lx 2>&1); then fail "create the Linux domain" "$out"; exit 0; fi
if wait_until "$STEP" seen_a 'Linux version 6\.1\.'; then
	pass "the kernel prints its banner ($(at) from create)"
else
	fail "banner" "$(stuck a klog_a)"; exit 0
fi

# ---- save in the middle of the boot, restore: the restored guest goes on ---------
# The line the restored guest must print is the next milestone the saved one
# had not reached: the first of these not in its log at save time.
LATER=('ACPI: Interpreter enabled' 'ACPI: PCI Root Bridge' 'virtio_blk virtio[0-9]+: \[vda\]' \
       'IP-Config: Complete' 'Run /init as init process')
# Paused while its log is read, so what it printed before the save is known.
a pause lx
saved_log=$(klog_a)
if ! out=$(LODGE_TIMEOUT=120 a save lx "$T/lx.sav" 2>&1); then fail "save the booting guest" "$out"; exit 0; fi
pass "the booting guest saved at kernel time $(ktime <<<"$saved_log") s ($(at))"
next=
for p in "${LATER[@]}"; do grep -Eq -- "$p" <<<"$saved_log" || { next=$p; break; }; done
if ! out=$(LODGE_TIMEOUT=120 a restore "$T/lx.sav" 2>&1); then fail "restore the booting guest" "$out"; exit 0; fi
[ "$(state_at a)" != paused ] || a unpause lx
restored_at=$SECONDS
if [ -z "$next" ]; then
	fail "the restored guest goes on with its boot" "the saved guest had printed every milestone already"
elif wait_until "$STEP" seen_a "$next"; then
	pass "the restored guest goes on with its boot: '$next' printed after the restore ($((SECONDS - restored_at)) s later, $(at))"
else
	fail "the restored guest goes on with its boot" "no '$next': $(stuck a klog_a)"; exit 0
fi

# ---- live migration to host B in the middle of the boot ------------------------
b migrate-receive --once --listen "$T/mig.sock" >"$T/recv.out" 2>&1 &
wait_until 10 test -S "$T/mig.sock"
a pause lx
before_log=$(klog_a)
running_b() { [ "$(state_at b)" = running ] || { [ "$(state_at b)" = paused ] && b unpause lx >/dev/null; return 1; }; }
if out=$(LODGE_TIMEOUT=300 a migrate lx "$T/mig.sock" 2>&1) && wait_until 30 running_b; then
	pass "the booting guest migrates to host B ($(tail -1 <<<"$out" | grep -o 'downtime.*'), $(at))"
else
	fail "live migration of the booting guest" "$out; $(cat "$T/recv.out")"; exit 0
fi
next=
for p in "${LATER[@]}"; do grep -Eq -- "$p" <<<"$before_log" || { next=$p; break; }; done
if [ -z "$next" ]; then
	fail "the migrated guest goes on with its boot" "the source had printed every milestone already"
elif wait_until "$STEP" seen_b "$next"; then
	pass "the migrated guest goes on with its boot on host B: '$next' printed there ($(at))"
else
	fail "the migrated guest goes on with its boot" "no '$next': $(stuck b klog_b)"; exit 0
fi

# ---- the devices, as the kernel's drivers found them ----------------------------
# Each line is in the log of one host or the other, printed once.
klog_all() { printf '%s\n' "$before_log"; klog_b; }
seen_all() { klog_all | grep -Eq -- "$1"; }
blocks=$((VDA_MIB * 2048))
if wait_until "$STEP" seen_all 'virtio_blk virtio[0-9]+: \[vda\]'; then
	line=$(klog_all | grep -Eo 'virtio_blk virtio[0-9]+: \[vda\].*' | head -1)
	if grep -Eq "\\[vda\\] $blocks 512-byte logical blocks" <<<"$line"; then
		pass "virtio-blk sees vda with its size: $line ($(at))"
	else
		fail "virtio-blk: vda's size" "expected $blocks blocks: $line"
	fi
else
	fail "virtio-blk sees vda" "$(stuck b klog_b)"
fi
if wait_until "$STEP" seen_all 'device=eth0, hwaddr='; then
	line=$(klog_all | grep -Eo 'device=eth0, hwaddr=[0-9a-f:]+' | head -1)
	if [ "$line" = "device=eth0, hwaddr=$MAC" ]; then
		pass "virtio-net has the config's MAC: IP-Config says $line ($(at))"
	else
		fail "virtio-net's MAC" "config mac=$MAC, the kernel: $line"
	fi
else
	fail "virtio-net's MAC" "no IP-Config line: $(stuck b klog_b)"
fi
if wait_until "$STEP" seen_all 'Run /init as init process'; then
	pass "the kernel boots to 'Run /init as init process' ($(at))"
else
	fail "boot to /init" "$(stuck b klog_b)"; exit 0
fi

slots=$(klog_all | grep -Eo 'acpiphp: Slot \[[0-9]+\] registered' | sort -u | wc -l)
if [ "$slots" -gt 0 ]; then
	pass "acpiphp registers $slots hot-plug slots from Lodge's ACPI tables"
else
	fail "acpiphp's slots" "no 'acpiphp: Slot [N] registered' in the log"
fi
if klog_all | grep -q 'Unpacking initramfs' && ! klog_all | grep -Eq 'Failed to execute /init|No working init|Kernel panic'; then
	pass "the kernel unpacks our initramfs and runs its /init, which stays up (no panic)"
else
	fail "initramfs and /init" "$(klog_all | grep -Em2 'initramfs|Failed to execute|No working init|Kernel panic')"
fi

# ---- the balloon: mem-set, the driver gives the pages back ------------------------
# lodge list -l's balloon column (11) is the driver's `actual`, in MiB.
balloon_is() { [ "$(b list -o tsv 2>/dev/null | awk -F'\t' '$1 == "lx" { print $11 }')" = "$1" ]; }
if out=$(b mem-set lx 96 2>&1) && wait_until "$STEP" balloon_is 32; then
	pass "mem-set 96: Linux's virtio_balloon inflates to its target, 32 MiB given back ($(at))"
else
	fail "balloon target" "mem-set: $out; balloon $(b list -o tsv | awk -F'\t' '$1 == "lx" { print $11 }') MiB, wanted 32"
fi
if out=$(b mem-set lx 128 2>&1) && wait_until "$STEP" balloon_is 0; then
	pass "mem-set 128: the driver deflates, all of it back to the guest ($(at))"
else
	fail "balloon deflate" "mem-set: $out; balloon $(b list -o tsv | awk -F'\t' '$1 == "lx" { print $11 }') MiB, wanted 0"
fi

# ---- PCI hot-plug: acpiphp finds the disk, virtio-blk probes it; detach ejects it ---
n_pci=$(klog_b | grep -Ec 'pci 0000:00:[0-9a-f.]+: \[1af4:')
new_pci() { [ "$(klog_b | grep -Ec 'pci 0000:00:[0-9a-f.]+: \[1af4:')" -gt "$n_pci" ]; }
blocks=$((VDB_MIB * 2048))
if out=$(b block-attach lx "$STORE/vdb.img,raw,vdb,rw" 2>&1) &&
   wait_until "$STEP" seen_b "virtio_blk virtio[0-9]+: \\[vd[b-z]\\] $blocks 512-byte logical blocks" && new_pci; then
	pass "block-attach: acpiphp finds the new device ($(klog_b | grep -Eo 'pci 0000:00:[0-9a-f.]+: \[1af4:[0-9a-f]+\]' | tail -1)) and virtio-blk probes it: $(klog_b | grep -Eo "\\[vd[b-z]\\] $blocks 512-byte logical blocks" | tail -1) ($(at))"
else
	fail "hot-plugged disk seen by the kernel" "block-attach: $out; $(stuck b klog_b)"
fi
# block-detach returns once the guest has ejected the device (_EJ0), which
# is what acpiphp does when it has removed it; without that it times out.
# Its own wait (10 s by default) is too short for an emulated kernel on a
# loaded host: it gets STEP.
if out=$(LODGE_TIMEOUT=$((STEP + 30)) b block-detach -t "$STEP" lx vdb 2>&1) && ! b block-list lx 2>/dev/null | grep -q vdb; then
	pass "block-detach: the kernel's acpiphp ejects the disk and it is gone ($out, $(at))"
else
	fail "hot-unplug seen by the kernel" "block-detach: $out; $(b block-list lx 2>&1 | tr '\n' ' ')"
fi

# ---- still alive, nothing went wrong ---------------------------------------------
if [ "$(state_at b)" = running ] && ! klog_all | grep -Eq 'Kernel panic|BUG:|Oops|segfault'; then
	pass "the guest runs on after all of it, no panic, oops or fault in its log ($(at))"
else
	fail "the guest after the sequence" "state $(state_at b); $(klog_all | grep -Em2 'Kernel panic|BUG:|Oops|segfault')"
fi
b destroy lx >/dev/null 2>&1
