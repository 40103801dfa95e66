#!/bin/bash
# The Linux boot protocols, proven with Debian's own cloud kernel
# (share/debian/build-kernel.sh), booted both as a bzImage (x86 boot
# protocol, boot_params) and as a PVH ELF (vmlinux, hvm_start_info): it
# prints its banner and our command line, takes our e820 map, finds our
# ACPI tables (OEM "LODGE") and its CPU count in our MADT.
# On PVM hosts the whole boot works too (lodge-hyp completes what PVM's
# emulator cannot; tests/linux/debian-shell.sh, make check-linux, takes it
# to the initramfs's shell) but takes 10 minutes or more, so this test
# stops lodge-hyp as soon as every line is seen.  Measured on PVM (2 cores,
# both boots side by side): the ELF prints them all within ~25 s; the
# bzImage first spends ~120 s in its own decompressor (emulated kernel
# code), all seen at ~130 s.
# On hardware KVM: the whole way to the initramfs and a clean poweroff.
. "$(dirname "$0")/../lib.sh"

integ_begin "Debian kernel early boot" kvm
if [ ! -x "$HYP" ]; then fail "Debian kernel early boot" "$HYP not built"; exit 0; fi
debian_kernel_ready "Debian kernel early boot" || exit 0
version=$(cat "$DEB/kernel-version")
MEM=256      # MiB: below the PCI hole, so RAM is 0-0x9FC00 and 1 MiB-256 MiB
VCPUS=2
marker=lodge-test-$$-$RANDOM
last_ram=$(printf '%016x' $((MEM * 1024 * 1024 - 1)))
declare -A pid deadline status done_at
t0=$SECONDS

# boot KIND FILE SECONDS: lodge-hyp in the background, console in $T/KIND.out
boot() {
	"$HYP" --kernel "$2" --memory $MEM --vcpus $VCPUS \
		--cmdline "console=ttyS0 earlyprintk=serial,ttyS0,115200 lodge.test=$marker" \
		</dev/null >"$T/$1.out" 2>&1 &
	pid[$1]=$!
	deadline[$1]=$((SECONDS + $3))
}

# The lines, in the order the kernel prints them: case name, then pattern
# (grep -E).  BIOS-e820 is the kernel's name for the map it was handed on
# either path.  The e820 reserved ranges differ by path: lodge-hyp reserves
# 0x9FC00-0xA0000 (EBDA) and 0xE0000-1 MiB (ACPI, src/hyp/platform.h); a PVH
# kernel adds the ISA hole 0xA0000-1 MiB itself and merges the three.
E='BIOS-e820: \[mem 0x'
cases=(
	"banner"                       "Linux version ${version//./\\.} "
	"our command line"             "Command line: .*lodge\\.test=$marker([[:space:]]|\$)"
	"e820: RAM below the EBDA"     "${E}0000000000000000-0x000000000009fbff\\] usable"
	"e820: RAM from 1 MiB to $MEM MiB" "${E}0000000000100000-0x$last_ram\\] usable"
	"ACPI: our RSDP at 0xE0000"    "ACPI: RSDP 0x00000000000E0000 [0-9A-F]+ \\(v02 LODGE"
	"ACPI: our FADT"               "ACPI: FACP 0x[0-9A-F]+ [0-9A-F]+ \\(v[0-9]+ LODGE "
	"ACPI: our MADT"               "ACPI: APIC 0x[0-9A-F]+ [0-9A-F]+ \\(v[0-9]+ LODGE "
	"SMP configuration from our MADT" "ACPI: Using ACPI \\(MADT\\) for SMP configuration information"
	"$VCPUS CPUs from our MADT"    "smpboot: Allowing $VCPUS CPUs, 0 hotplug CPUs"
)
reserved_bzimage=("${E}000000000009fc00-0x000000000009ffff\\] reserved" "${E}00000000000e0000-0x00000000000fffff\\] reserved")
reserved_elf=("${E}000000000009fc00-0x00000000000fffff\\] reserved")

# all_seen KIND: has KIND's console every line yet?
all_seen() {
	local i
	for ((i = 1; i < ${#cases[@]}; i += 2)); do
		grep -Eq -- "${cases[$i]}" "$T/$1.out" || return 1
	done
}

# Both at once (the host has 2 cores; each early boot uses one vCPU).
boot bzimage "$DEB/vmlinuz" 240
boot elf "$DEB/vmlinux" 120
running=(bzimage elf)
while [ ${#running[@]} -gt 0 ]; do
	sleep 0.5
	left=()
	for k in "${running[@]}"; do
		if all_seen "$k" || [ "$SECONDS" -ge "${deadline[$k]}" ]; then
			kill "${pid[$k]}" 2>/dev/null
			wait "${pid[$k]}" 2>/dev/null
			status[$k]=stopped
		elif ! kill -0 "${pid[$k]}" 2>/dev/null; then
			wait "${pid[$k]}"
			status[$k]="exited with status $?"
		else
			left+=("$k")
			continue
		fi
		done_at[$k]=$((SECONDS - t0))
	done
	running=("${left[@]}")
done

for k in bzimage elf; do
	out=$T/$k.out
	why="not printed (lodge-hyp ${status[$k]} after ${done_at[$k]} s; last line: $(grep -v '^\s*$' "$out" | tail -1 | cut -c1-120))"
	for ((i = 0; i < ${#cases[@]}; i += 2)); do
		if grep -Eq -- "${cases[$i+1]}" "$out"; then
			pass "Debian kernel ($k): ${cases[$i]}"
		else
			fail "Debian kernel ($k): ${cases[$i]}" "$why"
		fi
	done
	# Nothing usable but the two ranges lodge-hyp gives.
	usable=$(grep -Eo "${E}[0-9a-fx-]+\\] usable" "$out" | sed 's/.*\[mem //; s/\].*//' | tr '\n' ' ')
	if [ "$usable" = "0x0000000000000000-0x000000000009fbff 0x0000000000100000-0x$last_ram " ]; then
		pass "Debian kernel ($k): e820: no other usable RAM"
	else
		fail "Debian kernel ($k): e820: no other usable RAM" "usable ranges: ${usable:-none}"
	fi
	declare -n res=reserved_$k
	ok=1
	for r in "${res[@]}"; do grep -Eq -- "$r" "$out" || ok=0; done
	if [ $ok = 1 ]; then
		pass "Debian kernel ($k): e820: EBDA and ACPI area reserved"
	else
		fail "Debian kernel ($k): e820: EBDA and ACPI area reserved" \
			"got: $(grep -Eo "${E}[0-9a-fx-]+\\] reserved" "$out" | sed 's/.*\[mem //; s/\].*//' | tr '\n' ' ')"
	fi
done

# Hardware KVM: the whole way to the initramfs's shell, and "poweroff -f"
# typed on the console ends the domain with status 0.
# On PVM it works too (README, Linux on PVM hosts: the shell after 683 s,
# poweroff -f, status 0), but too slowly for make check: make check-linux
# runs it there (tests/linux/debian-shell.sh).
if need_hw_kvm "Debian kernel full boot to the initramfs" \
	"on this host's PVM it reaches the shell and powers off with status 0 (README, Linux on PVM hosts; tests/linux/debian-shell.sh in make check-linux), but after 11 minutes (17 to Run /init alone on a loaded machine), too long for make check"; then
	if ! "$TOP/share/debian/build-initramfs.sh" "$DEB" >"$T/build.log" 2>&1; then
		fail "Debian kernel full boot to the initramfs" "build-initramfs: $(tail -1 "$T/build.log")"
		exit 0
	fi
	mkfifo "$T/in"
	exec 9<>"$T/in"
	timeout 60 "$HYP" --kernel "$DEB/vmlinuz" --initrd "$DEB/initrd.img" --memory 512 --vcpus $VCPUS \
		--cmdline "console=ttyS0" <&9 >"$T/full.out" 2>&1 &
	full=$!
	if wait_for "$T/full.out" 'lodge-initramfs: shell on the console' 60; then
		if grep -q 'lodge-initramfs: modules loaded: [0-9]*$' "$T/full.out"; then
			pass "Debian kernel boots to the initramfs and loads its virtio modules"
		else
			fail "Debian kernel loads the initramfs's modules" "$(grep 'modules loaded' "$T/full.out")"
		fi
		sleep 0.5
		echo "poweroff -f" >&9
		wait $full
		rc=$?
		if [ $rc -eq 0 ]; then
			pass "Debian guest: poweroff -f on the console, exit status 0"
		else
			fail "Debian guest: poweroff -f on the console" "exit status $rc: $(tail -2 "$T/full.out" | tr '\n' ' ')"
		fi
	else
		kill $full 2>/dev/null
		wait $full 2>/dev/null
		fail "Debian kernel full boot to the initramfs" "$(grep -v '^\s*$' "$T/full.out" | tail -3 | tr '\n' ' ')"
	fi
	exec 9>&-
fi
