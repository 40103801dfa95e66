#!/usr/bin/env python3
"""The VMM's own memory: what a running Mini-OS domain (32 MiB, 1 vCPU, at
its prompt) costs outside its guest RAM, per VMM process, from
/proc/PID/smaps, side by side with QEMU (-M microvm and -M pc, the same
Mini-OS ELF booted as PVH with -kernel).

For each VMM, DOMAINS domains (default 3) run at once and the figures are
per domain, in two states:
  prompt  as soon as every guest's prompt is on its console
  idle    once the VMM's processes have settled: their Rss the same over
          SETTLE_S seconds (at most SETTLE_MAX_S)
The figures:
  Rss   every resident page mapped in the VMM's processes, less the Rss of
        the guest-RAM mapping (the mapping of MEM_MIB; density.py's
        "VMM's own memory" for one process); a library page shared with
        other processes counts in each process, in full
  Pss   the same with each page divided by the processes that map it
        (shared libraries are shared out with everything on the host, so
        Pss moves with what else runs)
  private  pages no other process maps: what the host gets back when
        the domain ends (its own heap, stacks, written data)
lodge-hyp is `lodge create`'s two processes: the root supervisor and the
sandboxed domain process.  A table by kind of mapping (guest RAM, the
binary, each shared library, heap, thread stacks, other anonymous memory)
follows for one domain of each VMM.

kvmtool, the peer named by issue 25, is not packaged in Debian 12 and
cannot be started here: QEMU stands in for it.
Target (issue 25): lodge-hyp under 2 MiB a domain.  Reported on each
figure: Rss counts libc's and lodge-hyp's code in every process though
the host holds it once; private and Pss are what a domain adds.
"""
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

DOMAINS = int(os.environ.get("DOMAINS", "3"))
MEM_MIB = 32
PROMPT = b"minios> "
TARGET_MIB = 2.0
SETTLE_S = 2.0
SETTLE_MAX_S = 30.0
KINDS = ("guest RAM", "binary", "libc", "ld.so", "other libraries", "heap", "thread stacks",
         "other anonymous", "kernel (vdso, vvar, kvm)", "other files")


def mappings(pid):
    """[(start, end, perms, path, {field: KiB})] from /proc/PID/smaps."""
    out = []
    head = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            m = head.match(line)
            if m:
                out.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4), {}))
            elif line.split(None, 1)[0] in ("Rss:", "Pss:", "Private_Clean:", "Private_Dirty:", "Anonymous:"):
                k, v = line.split()[:2]
                out[-1][4][k[:-1]] = int(v)
    return out


def kind(maps, i, exe):
    start, end, perms, path, _ = maps[i]
    if not path and end - start == MEM_MIB << 20:
        return "guest RAM", ""
    if path == exe:
        return "binary", ""
    if "/libc.so" in path:
        return "libc", ""
    if "/ld-linux" in path:
        return "ld.so", ""
    if ".so" in path:
        return "other libraries", os.path.basename(path)
    if path == "[heap]":
        return "heap", ""
    if path in ("[vdso]", "[vvar]", "[vsyscall]", "[vvar_vclock]") or path.startswith("anon_inode:"):
        return "kernel (vdso, vvar, kvm)", ""
    if path == "[stack]":
        return "thread stacks", ""
    if not path:
        # glibc puts a thread's stack right above a guard page of its own.
        prev = maps[i - 1] if i else None
        if prev and prev[1] == start and prev[2] == "---p" and not prev[3] and prev[1] - prev[0] <= 65536:
            return "thread stacks", ""
        return "other anonymous", ""
    return "other files", os.path.basename(path)


def breakdown(pid):
    """{kind: [Rss, Pss, private]} and {library: [Rss, Pss]} of a process, in
    KiB, from one reading of its smaps; private = pages no other process
    maps (Private_Clean + Private_Dirty)."""
    exe = os.readlink("/proc/%d/exe" % pid)
    maps = mappings(pid)
    kinds, libs = {k: [0, 0, 0] for k in KINDS}, {}
    for i, m in enumerate(maps):
        k, lib = kind(maps, i, exe)
        kinds[k][0] += m[4].get("Rss", 0)
        kinds[k][1] += m[4].get("Pss", 0)
        kinds[k][2] += m[4].get("Private_Clean", 0) + m[4].get("Private_Dirty", 0)
        if lib:
            libs.setdefault(lib, [0, 0])
            libs[lib][0] += m[4].get("Rss", 0)
            libs[lib][1] += m[4].get("Pss", 0)
    return kinds, libs


def own(pid):
    """(Rss, Pss, private) of a process outside its guest-RAM mapping, KiB;
    private is what the host gets back when the domain ends."""
    kinds, _ = breakdown(pid)
    return tuple(sum(v[i] for k, v in kinds.items() if k != "guest RAM") for i in (0, 1, 2))


def wait_for(pred, what, secs=60):
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError("%s not seen in %d s" % (what, secs))


class Lodge:
    name = "lodge-hyp"

    def __init__(self, lodge, minios):
        self.lodge, self.minios = lodge, minios
        self.root = tempfile.mkdtemp(prefix="lodge-bench-vmmmem.")
        os.makedirs(os.path.join(self.root, "etc/lodge/domains"))
        self.names = []

    def cmd(self, *args, **kw):
        return subprocess.run([self.lodge, "--root", self.root] + list(args), check=True, **kw)

    def start(self, i):
        name = "m%d" % i
        with open(os.path.join(self.root, "etc/lodge/domains", name + ".cfg"), "w") as f:
            f.write('name = "%s"\nmemory = %d\nvcpus = 1\nkernel = "%s"\n' % (name, MEM_MIB, self.minios))
        self.cmd("create", name, stdout=subprocess.DEVNULL)
        self.names.append(name)
        log = os.path.join(self.root, "run/lodge", name, "console.log")

        def prompt():
            try:
                with open(log, "rb") as f:
                    return PROMPT in f.read()
            except OSError:
                return False
        wait_for(prompt, "%s's prompt" % name)

    def processes(self):
        """[(label, pid)] of each domain: its supervisor and its domain process."""
        out = self.cmd("list", "-o", "tsv", capture_output=True, text=True).stdout
        doms = []
        for line in out.splitlines():
            f = line.split("\t")
            if f[0] in self.names and f[8].isdigit():
                child = int(f[8])
                with open("/proc/%d/status" % child) as st:
                    parent = int(next(l for l in st if l.startswith("PPid:")).split()[1])
                doms.append([("supervisor", parent), ("domain process", child)])
        return doms

    def stop(self):
        for n in self.names:
            subprocess.run([self.lodge, "--root", self.root, "destroy", n], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.root, ignore_errors=True)


class Qemu:
    def __init__(self, machine, minios):
        self.name = "qemu " + machine
        self.machine, self.minios = machine, minios
        self.procs = []

    def start(self, i):
        p = subprocess.Popen(["qemu-system-x86_64", "-M", self.machine, "-accel", "kvm",
                              "-cpu", "host,-arch-capabilities", "-m", str(MEM_MIB), "-smp", "1",
                              "-nographic", "-nodefaults", "-serial", "stdio", "-no-reboot",
                              "-kernel", self.minios],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        out, deadline = b"", time.monotonic() + 60
        while PROMPT not in out:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
                raise RuntimeError("%s: no prompt; console: %r" % (self.name, out[-300:]))
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("%s exited; console: %r" % (self.name, out[-300:]))
            out += chunk

    def processes(self):
        return [[("process", p.pid)] for p in self.procs]

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


def run(vmm):
    try:
        for i in range(DOMAINS):
            vmm.start(i)
        doms = vmm.processes()
        if len(doms) != DOMAINS:
            raise RuntimeError("%s: %d domains found, %d started" % (vmm.name, len(doms), DOMAINS))
        states = {"prompt": sample(doms)}
        detail = {"prompt": [(label, breakdown(pid)) for label, pid in doms[0]]}
        settle(doms)
        states["idle"] = sample(doms)
        detail["idle"] = [(label, breakdown(pid)) for label, pid in doms[0]]
    finally:
        vmm.stop()
    return states, detail


def sample(doms):
    """{process label: [(Rss, Pss) of each domain's]}."""
    per_proc = {}
    for dom in doms:
        for label, pid in dom:
            per_proc.setdefault(label, []).append(own(pid))
    return per_proc


def settle(doms):
    """Until the processes' Rss stays the same over SETTLE_S (a state the
    processes reach, polled; at most SETTLE_MAX_S)."""
    def total():
        return sum(own(pid)[0] for dom in doms for _, pid in dom)
    deadline, last = time.monotonic() + SETTLE_MAX_S, total()
    while time.monotonic() < deadline:
        time.sleep(SETTLE_S)
        now = total()
        if now == last:
            return
        last = now


def mib(kib):
    return kib / 1024


def main():
    lodge, minios = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    results = []
    for vmm in (Lodge(lodge, minios), Qemu("microvm", minios), Qemu("pc", minios)):
        try:
            results.append((vmm.name,) + run(vmm))
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            print("vmmmem: %s failed: %s\n" % (vmm.name, e))
    print("The VMM's own memory outside guest RAM: Mini-OS domains (%d MiB, 1 vCPU), %d at once per VMM, "
          "per domain (MiB), at their prompt and once idle. kvmtool, issue 25's peer, is not packaged in "
          "Debian 12 and cannot be started on this host: QEMU stands in.\n" % (MEM_MIB, DOMAINS))
    print("| VMM | state | processes | Rss outside guest RAM | Pss outside guest RAM | private outside guest RAM "
          "| Rss / QEMU microvm's | Pss / QEMU microvm's | private / QEMU microvm's |")
    print("|---|---|---|---|---|---|---|---|---|")
    totals = {}
    for name, states, _ in results:
        for state, per_proc in states.items():
            totals[name, state] = tuple(sum(sum(o[i] for o in v) for v in per_proc.values()) / DOMAINS
                                        for i in (0, 1, 2))
    for name, states, _ in results:
        for state, per_proc in states.items():
            rss, pss, priv = totals[name, state]
            base = totals.get(("qemu microvm", state))
            print("| %s | %s | %s | %.2f | %.2f | %.2f | %s | %s | %s |" % (
                name, state, ", ".join(per_proc), mib(rss), mib(pss), mib(priv),
                "%.2f" % (rss / base[0]) if base else "-", "%.2f" % (pss / base[1]) if base else "-",
                "%.2f" % (priv / base[2]) if base else "-"))
    for name, _, details in results:
        print("\n%s, one domain, by kind of mapping (KiB, Rss / Pss; at the prompt, then idle):\n" % name)
        detail = [("%s, %s" % (label, state), b) for state in ("prompt", "idle") for label, b in details[state]]
        print("| kind | " + " | ".join(label for label, _ in detail) + " |")
        print("|---|" + "---|" * len(detail))
        for k in KINDS:
            print("| %s | " % k + " | ".join("%d / %d" % tuple(kinds[k][:2]) for _, (kinds, _) in detail) + " |")
        print("| **outside guest RAM** | " + " | ".join(
            "%d / %d" % tuple(sum(v[i] for k, v in kinds.items() if k != "guest RAM") for i in (0, 1))
            for _, (kinds, _) in detail) + " |")
        libs = sorted({lib for _, (_, l) in detail for lib in l})
        for lib in libs:
            print("| - %s | " % lib + " | ".join("%d / %d" % tuple(l.get(lib, (0, 0)))
                                                for _, (_, l) in detail) + " |")
    if ("lodge-hyp", "idle") in totals:
        idle, prompt = totals["lodge-hyp", "idle"], totals["lodge-hyp", "prompt"]
        verdict = lambda v: "met" if mib(v) < TARGET_MIB else "NOT met"
        print("\nTarget: lodge-hyp under %.0f MiB a domain outside guest RAM, both processes, idle: "
              "private %.2f MiB (%s), Pss %.2f MiB (%s), Rss %.2f MiB (%s; it counts libc's and "
              "lodge-hyp's code, which the host holds once, in every process)" % (
                  TARGET_MIB, mib(idle[2]), verdict(idle[2]), mib(idle[1]), verdict(idle[1]),
                  mib(idle[0]), verdict(idle[0])))

if __name__ == "__main__":
    main()
