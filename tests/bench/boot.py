#!/usr/bin/env python3
"""Boot benchmark: lodge-hyp against QEMU on the same Mini-OS ELF (PVH),
then lodge-hyp's own start-to-exit cost on a guest that triple-faults at
once, beside a bare-KVM floor (kvm-floor.c: the same ELF and memory size,
what any VMM must do to run it), with and without its sandbox.  With
OLD_HYP="LABEL=PATH:..." (older trees' lodge-hyp): only that comparison,
with each older lodge-hyp beside, side by side.

For each VMM, RUNS times: wall time from spawn to Mini-OS's first serial line,
and from spawn to the process's exit after the guest powers itself off
(run=poweroff on the guest command line).  Then the VMM's memory outside
guest RAM while the guest idles at its prompt, also RUNS times.  Prints a Markdown
table with min/median/max and the ratios against QEMU microvm's median.

A VMM is every process it runs: lodge-hyp is two (the supervisor that was
spawned, and the sandboxed domain process it forks, which holds guest RAM),
QEMU one.  Two figures, both outside guest RAM:
  resident: the pages resident in any of its processes, each counted once
            (from /proc/PID/pagemap; a page the two share is one page);
  own:      the pages that no process but the VMM's maps (/proc/kpagecount):
            what a guest's end gives back, the cost of one more guest.
Resident includes shared libraries' pages that every process on the host
shares (libc).  Each process's Rss and private pages (smaps) are shown too.
"""
import collections
import os
import select
import struct
import statistics
import subprocess
import sys
import time

RUNS = int(os.environ.get("RUNS", "20"))
MEM_MIB = 256
BANNER = b"Lodge Mini-OS"
PROMPT = b"minios> "
FRAMES_HIDDEN = []     # not empty once pagemap was found to hide page frames


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


def processes(pid):
    """pid and every descendant of it."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    stat = f.read()
            except OSError:
                continue
            parent[int(entry)] = int(stat[stat.rfind(")") + 2:].split()[1])
    found = [pid]
    for p in found:
        found += sorted(c for c, pp in parent.items() if pp == p)
    return found


def mappings(pid):
    """(start, end, path or "", {field: KiB}) of each mapping in /proc/PID/smaps."""
    out = []
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            word = line.split(None, 1)[0]
            if not word.endswith(":"):
                lo, hi = (int(x, 16) for x in word.split("-"))
                out.append((lo, hi, " ".join(line.split()[5:]), {}))
            elif line.split()[1].isdigit():
                out[-1][3][word[:-1]] = int(line.split()[1])
    return out


def frames(pid, lo, hi):
    """The page frames of the resident pages of [lo, hi), or None where the
    kernel hides them (they read as 0 without CAP_SYS_ADMIN)."""
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/%d/pagemap" % pid, "rb") as f:
        f.seek(lo // page * 8)
        data = f.read((hi - lo) // page * 8)
    found = []
    for (entry,) in struct.iter_unpack("<Q", data):
        if entry >> 63:
            if not entry & ((1 << 55) - 1):
                return None
            found.append(entry & ((1 << 55) - 1))
    return found


def per_frame(table, pfns):
    """Each page frame's 64-bit word in /proc/kpagecount or /proc/kpageflags."""
    words = {}
    with open(table, "rb") as f:
        for pfn in pfns:
            f.seek(pfn * 8)
            words[pfn] = struct.unpack("<Q", f.read(8))[0]
    return words


def memory_outside_guest(pids):
    """Per process (Rss, private) and, over all of them, (resident, own)
    outside the guest-RAM mapping, in KiB.  Own: the pages that no process
    but these maps and that are no file's cached pages: what goes with the
    guest, including what a fork left shared between its processes
    (relocated libraries, the supervisor's heap), neither's private."""
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    each, mapped, hidden = [], collections.Counter(), False
    of_files = set()
    for pid in pids:
        rss = private = 0
        for lo, hi, name, f in mappings(pid):
            if f.get("Size") == MEM_MIB * 1024 or not f.get("Rss"):
                continue
            rss += f["Rss"]
            private += f.get("Private_Clean", 0) + f.get("Private_Dirty", 0)
            if not hidden:
                got = frames(pid, lo, hi)
                hidden = got is None
                mapped.update(got or [])
                if name.startswith("/") and not name.startswith(("/memfd:", "/dev/")):
                    of_files.update(got or [])
        each.append((rss, private))
    if hidden:
        # Without the frames: the sum of the processes' Rss, counting twice
        # what they share, and of their private pages, missing what they share.
        if not FRAMES_HIDDEN:
            FRAMES_HIDDEN.append(True)
            print("boot.py: /proc/PID/pagemap hides page frames from this user: resident is the "
                  "sum of the processes' Rss, own the sum of their private pages", file=sys.stderr)
        return each, (sum(r for r, _ in each), sum(p for _, p in each))
    counts = per_frame("/proc/kpagecount", mapped)
    flags = per_frame("/proc/kpageflags", mapped)
    KPF_ANON, KPF_ZERO_PAGE = 1 << 12, 1 << 24   # linux/kernel-page-flags.h
    own = sum(1 for pfn, n in mapped.items()
              if counts[pfn] <= n and not flags[pfn] & KPF_ZERO_PAGE
              and (pfn not in of_files or flags[pfn] & KPF_ANON))
    return each, (len(mapped) * page_kib, own * page_kib)


def resident_outside_guest(argv):
    """memory_outside_guest() of the VMM's processes while the guest idles."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        read_until(proc, PROMPT, time.monotonic() + 30)
        time.sleep(0.5)
        return memory_outside_guest(processes(proc.pid))
    finally:
        proc.kill()
        proc.wait()


# A guest that triple-faults at its first instruction: a PVH ELF whose
# entry is ud2 (no IDT yet).  Start to exit of lodge-hyp on it is the VMM's
# own start and teardown, nothing of a guest's boot.
TRIPLE_FAULT_S = """
	.section .note.Xen, "a"
	.align 4
	.long 4, 4, 18          # name size, desc size, XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.align 4
	.long _start
	.text
	.code32
	.globl _start
_start:
	ud2
"""
TRIPLE_FAULT_LD = """
ENTRY(_start)
PHDRS { text PT_LOAD FLAGS(5); note PT_NOTE FLAGS(4); }
SECTIONS { . = 0x100000; .text : { *(.text) } :text .note.Xen : { *(.note.Xen) } :text :note }
"""


def triple_fault(hyp, olds, tmp):
    """Start to exit on the triple-fault guest, side by side in one run:
    the bare-KVM floor (kvm-floor.c, the same ELF and memory size), the
    floor with the in-kernel irqchip and PIT lodge-hyp gives every guest
    (what the kernel costs for them, apart from lodge-hyp's own), this
    lodge-hyp and each older one in olds ([(label, path)]), each with its
    sandbox and with --no-sandbox; a round runs each once, the order
    turning by one each round so none always follows the same other.
    Wall time from spawn to reap; CPU time of the process and every
    descendant it reaped (wait4's rusage: lodge-hyp's domain process
    too).  Ratios pair by pair, each run against the floor's of its round."""
    with open(os.path.join(tmp, "tf.S"), "w") as f:
        f.write(TRIPLE_FAULT_S)
    with open(os.path.join(tmp, "tf.ld"), "w") as f:
        f.write(TRIPLE_FAULT_LD)
    elf, floor = os.path.join(tmp, "tf.elf"), os.path.join(tmp, "kvm-floor")
    subprocess.run(["as", "--64", "-o", elf + ".o", os.path.join(tmp, "tf.S")], check=True)
    subprocess.run(["ld", "-m", "elf_x86_64", "-T", os.path.join(tmp, "tf.ld"), "-o", elf, elf + ".o"], check=True)
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", floor,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "kvm-floor.c")], check=True)
    runs = {"floor (kvm-floor.c)": [floor, elf, str(MEM_MIB)],
            "floor with the in-kernel irqchip and PIT": [floor, elf, str(MEM_MIB), "irqchip"]}
    for label, path in [("this tree", hyp)] + olds:
        argv = [path, "--kernel", elf, "--memory", str(MEM_MIB)]
        runs["lodge-hyp of %s" % label] = argv
        runs["lodge-hyp of %s, --no-sandbox" % label] = argv + ["--no-sandbox"]
    names = list(runs)
    wall = {k: [] for k in names}
    cpu = {k: [] for k in names}
    for r in range(RUNS):
        for name in names[r % len(names):] + names[:r % len(names)]:
            argv = runs[name]
            t0 = time.monotonic()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            _, st, ru = os.wait4(proc.pid, 0)
            wall[name].append((time.monotonic() - t0) * 1000)
            cpu[name].append((ru.ru_utime + ru.ru_stime) * 1000)
            proc.returncode = os.waitstatus_to_exitcode(st)
            if proc.returncode != 3:
                sys.exit("%s: exit %d, not the crashed guest's 3" % (" ".join(argv), proc.returncode))
    base, platform = names[0], names[1]
    pair = lambda t, a, b: statistics.median(x / y for x, y in zip(t[a], t[b]) if y)
    print("Start to exit on a guest that triple-faults at once (%d MiB, 1 vCPU), %d rounds side by side; "
          "min / median / max; ratio = the median of each run over the floor's run of its round\n"
          % (MEM_MIB, RUNS))
    print("| | wall (ms) | ratio | CPU, all its processes (ms) | ratio |")
    print("|---|---|---|---|---|")
    for name in names:
        print("| %s | %.1f / %.1f / %.1f | %.2f | %.1f / %.1f / %.1f | %.2f |" % (
            name, *stats(wall[name]), pair(wall, name, base), *stats(cpu[name]), pair(cpu, name, base)))
    for label, _ in olds:
        old = "lodge-hyp of %s" % label
        print("\nThis tree against %s, pair by pair: wall %.2f, CPU %.2f; --no-sandbox: wall %.2f, CPU %.2f" % (
            label, pair(wall, "lodge-hyp of this tree", old), pair(cpu, "lodge-hyp of this tree", old),
            pair(wall, "lodge-hyp of this tree, --no-sandbox", old + ", --no-sandbox"),
            pair(cpu, "lodge-hyp of this tree, --no-sandbox", old + ", --no-sandbox")))
    ratio = pair(wall, "lodge-hyp of this tree", base)
    print("\nTarget: start to exit under 1.10 x the floor with the sandbox on: %.2f x (%s); "
          "against the floor with the in-kernel irqchip and PIT: %.2f x" % (
              ratio, "met" if ratio < 1.10 else "NOT met",
              pair(wall, "lodge-hyp of this tree", platform)))


def stats(values):
    return min(values), statistics.median(values), max(values)


def main():
    hyp, minios = sys.argv[1], sys.argv[2]
    results, each = {}, {}
    for name, argv_for in vmms(hyp, minios):
        firsts, ends, resident, private, per = [], [], [], [], []
        for _ in range(RUNS):
            first, end = boot_once(argv_for("run=poweroff"))
            firsts.append(first)
            ends.append(end)
        for _ in range(RUNS):
            procs, (res, priv) = resident_outside_guest(argv_for(""))
            resident.append(res / 1024)
            private.append(priv / 1024)
            per.append(procs)
        results[name] = (stats(firsts), stats(ends), stats(resident), stats(private))
        each[name] = per

    base = results["qemu microvm"]
    print("Boot of Lodge Mini-OS (%d MiB, 1 vCPU), %d runs each; min / median / max; "
          "ratio = median / QEMU microvm's median\n" % (MEM_MIB, RUNS))
    print("| VMM | start to first serial line (ms) | ratio | start to poweroff (ms) | ratio "
          "| resident outside guest RAM, all its processes (MiB) | its own outside guest RAM (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for name, (first, end, res, priv) in results.items():
        print("| %s | %.1f / %.1f / %.1f | %.2f | %.1f / %.1f / %.1f | %.2f | %.2f / %.2f / %.2f "
              "| %.2f / %.2f / %.2f |" % (
                  name, *first, first[1] / base[0][1], *end, end[1] / base[1][1], *res, *priv))
    print("\nEach process outside guest RAM, medians (MiB): Rss / private")
    for name, per in each.items():
        counts = {len(p) for p in per}
        if len(counts) != 1:
            print("- %s: %s processes in different runs" % (name, sorted(counts)))
            continue
        named = ["supervisor", "domain process"] if name == "lodge-hyp" else ["process"]
        print("- %s: %s" % (name, "; ".join(
            "%s %.2f / %.2f" % (named[i] if i < len(named) else "process %d" % (i + 1),
                                statistics.median(p[i][0] for p in per) / 1024,
                                statistics.median(p[i][1] for p in per) / 1024)
            for i in range(counts.pop()))))
    lodge = results["lodge-hyp"]
    print("\nTargets: first line at most 0.5 x QEMU microvm: %.2f x (%s); "
          "resident outside guest RAM under 3 MiB: %.2f MiB (%s)" % (
              lodge[0][1] / base[0][1], "met" if lodge[0][1] <= 0.5 * base[0][1] else "NOT met",
              lodge[2][1], "met" if lodge[2][1] < 3 else "NOT met"))


if __name__ == "__main__":
    import tempfile
    # OLD_HYP="LABEL=PATH:LABEL=PATH" (older trees' lodge-hyp, LABEL= may
    # be left out): only the triple-fault comparison, with those beside.
    olds = [(e.split("=", 1) if "=" in e else (e, e)) for e in os.environ.get("OLD_HYP", "").split(":") if e]
    if not olds:
        main()
        print()
    with tempfile.TemporaryDirectory(prefix="lodge-bench-tf.") as tmp:
        triple_fault(sys.argv[1], [tuple(o) for o in olds], tmp)
