#!/bin/bash
# Lodge Mini-OS under lodge-hyp: SMP bring-up from our MADT, the three ways
# a domain ends told apart by exit status, and the serial console's input.
. "$(dirname "$0")/../lib.sh"

integ_begin "Mini-OS boot" kvm
if [ ! -f "$MINIOS" ]; then fail "Mini-OS boot" "$MINIOS not built"; exit 0; fi

# boot NAME VCPUS CMDS: run Mini-OS with run="CMDS"; sets $out and $rc.
boot() {
	out=$T/$1.out
	timeout 60 "$HYP" --kernel "$MINIOS" --memory 64 --vcpus "$2" --cmdline "run=\"$3\"" \
		</dev/null >"$out" 2>&1
	rc=$?
}

for n in 1 2 4; do
	boot "smp$n" "$n" "cpus; poweroff"
	if grep -q "smp: $n of $n CPUs up" "$out" && grep -q "cpus: $n up" "$out" && [ $rc -eq 0 ]; then
		pass "Mini-OS with $n vCPUs reports $n CPUs up"
	else
		fail "Mini-OS with $n vCPUs" "status $rc: $(grep -E 'smp|cpus|error' "$out" | head -3)"
	fi
done

boot acpi 2 "acpi; poweroff"
if grep -q 'acpi: RSDP XSDT FACP APIC DSDT' "$out" && grep -q 'acpi: 2 CPUs in the MADT' "$out"; then
	pass "Mini-OS finds our RSDP, XSDT, FADT, MADT and DSDT"
else
	fail "Mini-OS finds our ACPI tables" "$(grep acpi "$out" | head -3)"
fi

boot poweroff 2 "poweroff"
if [ $rc -eq 0 ] && grep -q 'guest powered off (ACPI S5)' "$out"; then
	pass "poweroff through the FADT and \\_S5: exit status 0"
else
	fail "poweroff exit status" "status $rc: $(tail -2 "$out")"
fi
boot reboot 2 "reboot"
if [ $rc -eq 2 ] && grep -q 'guest rebooted (ACPI reset register)' "$out"; then
	pass "reboot through the ACPI reset register: exit status 2"
else
	fail "reboot exit status" "status $rc: $(tail -2 "$out")"
fi
boot kbd 1 "reboot kbd"
if [ $rc -eq 2 ] && grep -q 'guest rebooted (i8042 reset pulse)' "$out"; then
	pass "reboot through the i8042 reset line: exit status 2"
else
	fail "i8042 reboot exit status" "status $rc: $(tail -2 "$out")"
fi
boot crash 2 "crash"
if [ $rc -eq 3 ] && grep -Eq 'triple fault|KVM internal error' "$out" && grep -q 'vcpu0: rip' "$out"; then
	pass "triple fault: exit status 3 with the vCPU's registers logged"
else
	fail "triple fault exit status" "status $rc: $(tail -2 "$out")"
fi

# A line typed on the console is read by the guest and echoed back.
fifo=$T/in
mkfifo "$fifo"
timeout 60 "$HYP" --kernel "$MINIOS" --memory 64 <"$fifo" >"$T/echo.out" 2>&1 &
hyp=$!
exec 9>"$fifo"
if wait_for "$T/echo.out" 'minios> ' 30; then
	echo "echo lodge-echo-test" >&9
	if wait_for "$T/echo.out" '^lodge-echo-test' 30; then
		pass "a line typed on the console is echoed by the guest"
	else
		fail "console echo" "$(tail -3 "$T/echo.out")"
	fi
	echo "poweroff" >&9
else
	fail "console echo" "no prompt: $(tail -3 "$T/echo.out")"
fi
exec 9>&-
wait $hyp
rc=$?
if [ $rc -eq 0 ]; then pass "poweroff typed on the console ends the domain"; else fail "typed poweroff" "status $rc"; fi

# SIGTERM stops a running domain from the host: exit status 4.
timeout 60 "$HYP" --kernel "$MINIOS" --memory 64 </dev/null >"$T/term.out" 2>&1 &
hyp=$!
wait_for "$T/term.out" 'minios> ' 30
kill -TERM $hyp
wait $hyp
rc=$?
if [ $rc -eq 4 ] && grep -q 'stopped by signal' "$T/term.out"; then
	pass "SIGTERM stops the domain: exit status 4"
else
	fail "SIGTERM exit status" "status $rc"
fi

# --probe names the backend in one sentence.
if "$HYP" --probe | grep -Eq '^KVM backend: (PVM|hardware|unknown)'; then
	pass "--probe says which KVM backend the host has"
else
	fail "--probe" "$("$HYP" --probe 2>&1)"
fi
