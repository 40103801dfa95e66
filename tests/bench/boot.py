#!/usr/bin/env python3
"""Boot benchmark: lodge-hyp against QEMU on the same Mini-OS ELF (PVH).

For each VMM, RUNS times: wall time from spawn to Mini-OS's first serial line,
and from spawn to the process's exit after the guest powers itself off
(run=poweroff on the guest command line).  Then the VMM's resident memory
outside guest RAM while the guest idles at its prompt, also RUNS times.  Prints a Markdown
table with min/median/max and the ratios against QEMU microvm's median.
"""
import os
import select
import statistics
import subprocess
import sys
import time

RUNS = int(os.environ.get("RUNS", "20"))
MEM_MIB = 256
BANNER = b"Lodge Mini-OS"
PROMPT = b"minios> "


def vmms(hyp, minios):
    qemu = ["qemu-system-x86_64", "-accel", "kvm", "-cpu", "host,-arch-capabilities",
            "-m", str(MEM_MIB), "-smp", "1", "-nographic", "-nodefaults",
            "-serial", "stdio", "-no-reboot", "-kernel", minios]
    return [
        ("lodge-hyp", lambda cmd: [hyp, "--kernel", minios, "--memory", str(MEM_MIB),
                                   "--vcpus", "1", "--cmdline", cmd]),
        ("qemu microvm", lambda cmd: qemu[:1] + ["-M", "microvm"] + qemu[1:] + ["-append", cmd]),
        ("qemu pc", lambda cmd: qemu[:1] + ["-M", "pc"] + qemu[1:] + ["-append", cmd]),
    ]


def read_until(proc, pattern, deadline):
    """Read the process's stdout until pattern appears; return the time it did."""
    buf = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        if not r:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        if pattern in buf:
            return time.monotonic()
    raise RuntimeError("pattern %r not seen; output: %r" % (pattern, buf[-300:]))


def boot_once(argv):
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        t_line = read_until(proc, BANNER, t0 + 30)
        # Drain until exit so a full pipe cannot stall the guest.
        while proc.stdout.read(65536):
            pass
        proc.wait(timeout=30)
        t_end = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return (t_line - t0) * 1000, (t_end - t0) * 1000


def resident_outside_guest(argv):
    """Rss of the VMM minus the Rss of its guest-RAM mapping, in KiB."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        read_until(proc, PROMPT, time.monotonic() + 30)
        time.sleep(0.5)
        total = guest = 0
        size = None
        with open("/proc/%d/smaps" % proc.pid) as f:
            for line in f:
                if line.startswith("Size:"):
                    size = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
                    total += rss
                    if size == MEM_MIB * 1024:
                        guest += rss
        return total - guest, total
    finally:
        proc.kill()
        proc.wait()


def stats(values):
    return min(values), statistics.median(values), max(values)


def main():
    hyp, minios = sys.argv[1], sys.argv[2]
    results = {}
    for name, argv_for in vmms(hyp, minios):
        firsts, ends, rss = [], [], []
        for _ in range(RUNS):
            first, end = boot_once(argv_for("run=poweroff"))
            firsts.append(first)
            ends.append(end)
        for _ in range(RUNS):
            rss.append(resident_outside_guest(argv_for(""))[0] / 1024)
        results[name] = (stats(firsts), stats(ends), stats(rss))

    base = results["qemu microvm"]
    print("Boot of Lodge Mini-OS (%d MiB, 1 vCPU), %d runs each; min / median / max; "
          "ratio = median / QEMU microvm's median\n" % (MEM_MIB, RUNS))
    print("| VMM | start to first serial line (ms) | ratio | start to poweroff (ms) | ratio "
          "| resident outside guest RAM (MiB) |")
    print("|---|---|---|---|---|---|")
    for name, (first, end, rss) in results.items():
        print("| %s | %.1f / %.1f / %.1f | %.2f | %.1f / %.1f / %.1f | %.2f | %.2f / %.2f / %.2f |" % (
            name, *first, first[1] / base[0][1], *end, end[1] / base[1][1], *rss))
    lodge = results["lodge-hyp"]
    print("\nTargets: first line at most 0.5 x QEMU microvm: %.2f x (%s); "
          "resident outside guest RAM under 3 MiB: %.2f MiB (%s)" % (
              lodge[0][1] / base[0][1], "met" if lodge[0][1] <= 0.5 * base[0][1] else "NOT met",
              lodge[2][1], "met" if lodge[2][1] < 3 else "NOT met"))


if __name__ == "__main__":
    main()
