#!/bin/bash
# The Linux boot protocol, proven with Debian's own cloud kernel: booted as
# a bzImage (x86 boot protocol) and as a PVH ELF (vmlinux), it prints its
# banner, our command line, our e820 map, finds our ACPI tables and takes
# its CPU count from our MADT.  On PVM hosts that is as far as a stock
# kernel gets (it then dies in emulation, which is expected): the test
# stops it once the lines are seen.  A full boot is for hardware KVM.
. "$(dirname "$0")/../lib.sh"

need_kvm "Debian kernel early boot" || exit 0
T=$TMPDIR_TEST
DEB=$BUILD/debian
if ! "$TOP/share/debian/build-kernel.sh" "$DEB" >"$T/build.log" 2>&1; then
	skip "Debian kernel early boot" "cannot get Debian's kernel: $(tail -1 "$T/build.log")"
	exit 0
fi
marker=lodge-test-$$

# boot KIND FILE SECONDS: run it in the background, output to $T/KIND.out
boot() {
	timeout "$3" "$HYP" --kernel "$2" --memory 256 --vcpus 2 \
		--cmdline "console=ttyS0 earlyprintk=serial,ttyS0,115200 ignore_loglevel lodge.test=$marker" \
		</dev/null >"$T/$1.out" 2>&1 &
	eval "pid_$1=\$!"
}
# The early-boot lines, in the order the kernel prints them.
patterns=(
	"Linux version 6\\."
	"Command line: .*lodge.test=$marker"
	"(BIOS-e820|user): \\[mem 0x0000000000000000-0x000000000009fbff\\] usable"
	"(BIOS-e820|user): \\[mem 0x0000000000100000-0x000000000fffffff\\] usable"
	"ACPI: RSDP 0x00000000000E0000 .*LODGE"
	"ACPI: FACP 0x[0-9A-F]+ .*LODGE"
	"ACPI: APIC 0x[0-9A-F]+ .*LODGE"
	"ACPI: Using ACPI \\(MADT\\) for SMP configuration information"
	"smpboot: Allowing 2 CPUs"
)
names=("banner" "our command line" "e820: low RAM as we gave it" "e820: RAM from 1 MiB to 256 MiB"
       "our RSDP at 0xE0000" "our FADT" "our MADT" "SMP configuration from our MADT" "2 CPUs from our MADT")

# A bzImage spends its first minutes decompressing itself in emulated
# kernel mode on PVM; the ELF is already decompressed.
boot bzimage "$DEB/vmlinuz" 360
boot elf "$DEB/vmlinux" 240
for kind in bzimage elf; do
	eval "pid=\$pid_$kind"
	last=${patterns[${#patterns[@]}-1]}
	while kill -0 "$pid" 2>/dev/null && ! grep -Eq -- "$last" "$T/$kind.out"; do sleep 1; done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	for i in "${!patterns[@]}"; do
		if grep -Eq -- "${patterns[$i]}" "$T/$kind.out"; then
			pass "Debian kernel ($kind): ${names[$i]}"
		else
			fail "Debian kernel ($kind): ${names[$i]}" "not printed; last lines: $(tail -2 "$T/$kind.out" | tr '\n' ' ')"
		fi
	done
done

# Hardware KVM: the whole way to the initramfs, its modules and a clean poweroff.
if need_hw_kvm "Debian kernel full boot to the initramfs"; then
	"$TOP/share/debian/build-initramfs.sh" "$DEB" >/dev/null
	mkfifo "$T/in"
	timeout 60 "$HYP" --kernel "$DEB/vmlinuz" --initrd "$DEB/initrd.img" --memory 512 --vcpus 2 \
		--cmdline "console=ttyS0" <"$T/in" >"$T/full.out" 2>&1 &
	pid=$!
	exec 9>"$T/in"
	if wait_for "$T/full.out" 'lodge-initramfs: modules loaded' 60; then
		pass "Debian kernel boots to the initramfs and loads its virtio modules"
		echo "poweroff -f" >&9
		wait $pid
		[ $? -eq 0 ] && pass "Debian guest powers off cleanly" || fail "Debian guest poweroff" "status $?"
	else
		fail "Debian kernel full boot" "$(tail -5 "$T/full.out")"
	fi
	exec 9>&-
fi
