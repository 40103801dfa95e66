#!/bin/bash
# Bad input to lodge-hyp: one clear line naming what is wrong, exit status 1,
# never a crash or a hang.
. "$(dirname "$0")/../lib.sh"

# expect_error NAME PATTERN ARGS...: lodge-hyp must exit 1 with PATTERN on stderr.
expect_error() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$(timeout 20 "${WRAP[@]}" "$HYP" "$@" </dev/null 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 1 ]; then
		fail "$name" "exit status $rc, wanted 1 (output: $out)"
	elif ! grep -Eq -- "$pat" <<<"$out"; then
		fail "$name" "message '$out' does not match '$pat'"
	elif [ "$(wc -l <<<"$out")" -ne 1 ]; then
		fail "$name" "more than one line: $out"
	else
		pass "$name"
	fi
}

integ_begin "lodge-hyp bad input" kvm
WRAP=()
: >"$T/empty"
printf 'this is not a kernel\n' >"$T/text"
head -c 65536 /dev/urandom >"$T/random"
# A static executable is an ELF64 x86-64 ET_EXEC with no PVH note.
printf 'int main(void){return 0;}\n' >"$T/a.c"
cc -static -no-pie -o "$T/static-elf" "$T/a.c" 2>/dev/null
head -c $((8 << 20)) /dev/zero >"$T/big-initrd"

expect_error "no kernel given" "no kernel given" --memory 64
expect_error "missing kernel" "cannot open kernel $T/nope: No such file" --kernel "$T/nope"
expect_error "kernel is a directory" "kernel $T is not a non-empty regular file" --kernel "$T"
expect_error "empty kernel" "kernel $T/empty is not a non-empty regular file" --kernel "$T/empty"
expect_error "text file as kernel" "not a Linux bzImage nor an ELF64 kernel with a PVH entry note" --kernel "$T/text"
expect_error "random bytes as kernel" "not a Linux bzImage nor an ELF64 kernel with a PVH entry note" --kernel "$T/random"
if [ -f "$T/static-elf" ]; then
	expect_error "ELF without PVH note" "ELF kernel without a PVH entry note" --kernel "$T/static-elf"
else
	skip "ELF without PVH note" "no C compiler with static libc to make the sample"
fi
# A FIFO: opening it to read would wait for a writer; it is refused at once.
mkfifo "$T/fifo"
expect_error "kernel is a FIFO" "kernel $T/fifo is not a non-empty regular file" --kernel "$T/fifo"
expect_error "initrd is a FIFO" "initrd $T/fifo is not a non-empty regular file" --kernel "$MINIOS" --initrd "$T/fifo"
expect_error "missing initrd" "cannot open initrd $T/nope" --kernel "$MINIOS" --initrd "$T/nope"
expect_error "memory too small for kernel and initrd" "memory too small for the kernel and initrd" \
	--kernel "$MINIOS" --initrd "$T/big-initrd" --memory 8
expect_error "memory below minimum" "--memory 1 is out of range \\(4 to" --kernel "$MINIOS" --memory 1
expect_error "memory beyond the host" "more than this host has" --kernel "$MINIOS" --memory 4194304
expect_error "memory not a number" "--memory must be a whole number" --kernel "$MINIOS" --memory lots
expect_error "maxmem below memory" "--maxmem 32 MiB is below --memory \(64 MiB\)" --kernel "$MINIOS" --memory 64 --maxmem 32
expect_error "maxmem beyond the host" "--maxmem 4194304 MiB is more than this host has" --kernel "$MINIOS" --maxmem 4194304
expect_error "maxmem not a number" "--maxmem must be a whole number" --kernel "$MINIOS" --maxmem lots
expect_error "zero vcpus" "--vcpus 0 is out of range" --kernel "$MINIOS" --vcpus 0
expect_error "too many vcpus" "--vcpus 1000 is out of range" --kernel "$MINIOS" --vcpus 1000
expect_error "unknown option" "unknown option .--frobnicate." --kernel "$MINIOS" --frobnicate
expect_error "a core on poweroff" "coredump-destroy and coredump-restart are for --on-crash only" \
	--kernel "$MINIOS" --on-poweroff coredump-destroy
expect_error "a core with nowhere to go" "--on-crash coredump-restart needs --crash-dir" \
	--kernel "$MINIOS" --on-crash coredump-restart
expect_error "a relative crash directory" "--crash-dir 'crash' must be an absolute path, with --runtime-dir" \
	--kernel "$MINIOS" --runtime-dir "$T/run" --name x --crash-dir crash

WRAP=()
# No /dev/kvm: a private mount namespace with an empty /dev.
if need_root "no /dev/kvm"; then
	WRAP=(unshare -m sh -c 'mount -t tmpfs none /dev && exec "$0" "$@"')
	expect_error "no /dev/kvm" "cannot open /dev/kvm: No such file or directory" --kernel "$MINIOS"
fi
# No permission on /dev/kvm: run as nobody (the device is root's, mode 0600).
if need_root "no permission on /dev/kvm" && [ "$(stat -c %a /dev/kvm)" = 600 ]; then
	WRAP=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	expect_error "no permission on /dev/kvm" "cannot open /dev/kvm: permission denied" --kernel "$MINIOS"
fi
# An unreadable kernel: lodge-hyp runs as root, whose CAP_DAC_OVERRIDE reads
# any file, so drop that capability (and DAC_READ_SEARCH) and keep uid 0, which
# still owns /dev/kvm; a root-owned kernel with mode 000 then cannot be opened.
if need_root "unreadable kernel"; then
	cp "$MINIOS" "$T/unreadable.elf" && chmod 000 "$T/unreadable.elf"
	# shellcheck disable=SC2054 # setpriv's own comma lists
	WRAP=(setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search)
	if "${WRAP[@]}" true 2>/dev/null; then
		expect_error "unreadable kernel" "cannot open kernel $T/unreadable.elf: Permission denied" \
			--kernel "$T/unreadable.elf"
	else
		skip "unreadable kernel" "setpriv cannot drop capabilities here"
	fi
fi
