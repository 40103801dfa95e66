#!/usr/bin/env python3
"""Scaling with domains: 1, 10, 50 and 100 idle Mini-OS domains (32 MiB,
1 vCPU) running, and against each count:
  create      ms per `lodge create` of one more domain (and its destroy),
              median of ROUNDS, with that many already running
  list        ms per `lodge list`, median of 10
  dashboard   the dashboard's own CPU ms per refresh (80x24 in tmux, as
              tests/bench/tui.py measures it)
  idle CPU    CPU time of every domain's processes (the sandboxed lodge-hyp
              and its supervisor, utime + stime from /proc/PID/stat) over
              IDLE_S seconds, per domain, as % of a core
  memory      per domain: all of it (Pss of its processes, guest RAM
              included; not MemAvailable, which other work on this shared
              host moves by more than a domain) and the VMM's own (Rss and
              Pss of both processes, the sandboxed one and its supervisor,
              less those of the guest-RAM mapping, /proc/PID/smaps; Pss
              shares out the pages of libraries and the two processes'
              common copy-on-write memory)
Each is printed with its value divided by the count, so that growth faster
than linear shows as a per-domain figure that rises.  First, 10 creates at
once against 10 in sequence (issue 25's target: at most 0.6x)."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

COUNTS = [int(c) for c in os.environ.get("SCALE_COUNTS", "1 10 50 100").split()]
ROUNDS = int(os.environ.get("SCALE_ROUNDS", "5"))
IDLE_S = float(os.environ.get("SCALE_IDLE_S", "10"))
TUI_S = float(os.environ.get("SCALE_TUI_S", "10"))
TUI_DELAY = 0.2
MEM_MIB = 32
PAR = 10
HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / HZ


def pss_kib(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def own_kib(pid):
    """(Rss, Pss) of a process less those of its guest-RAM mapping (MEM_MIB)."""
    own = {"Rss:": 0, "Pss:": 0}
    size = None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            key = line.split(None, 1)[0]
            if key == "Size:":
                size = int(line.split()[1])
            elif key in own and size != MEM_MIB * 1024:
                own[key] += int(line.split()[1])
    return own["Rss:"], own["Pss:"]


def parent_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    return 0


class Host:
    def __init__(self, lodge, minios):
        self.lodge, self.minios = lodge, minios
        self.root = tempfile.mkdtemp(prefix="lodge-bench-scale.")
        self.doms = os.path.join(self.root, "etc/lodge/domains")
        self.run = os.path.join(self.root, "run/lodge")
        os.makedirs(self.doms)
        self.running = []

    def cmd(self, *args, **kw):
        return subprocess.run([self.lodge, "--root", self.root] + list(args), check=True, **kw)

    def config(self, name):
        path = os.path.join(self.doms, name + ".cfg")
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write('name = "%s"\nmemory = %d\nvcpus = 1\nkernel = "%s"\n' % (name, MEM_MIB, self.minios))

    def timed(self, *args):
        t0 = time.monotonic()
        self.cmd(*args, stdout=subprocess.DEVNULL)
        return (time.monotonic() - t0) * 1000

    def processes(self):
        """pids of every running domain's processes: (domain process, supervisor)."""
        out = self.cmd("list", "-o", "tsv", capture_output=True, text=True).stdout
        pids = []
        for line in out.splitlines():
            f = line.split("\t")
            if len(f) > 8 and f[0] in self.running and f[8].isdigit():
                child = int(f[8])
                pids.append((child, parent_of(child)))
        return pids

    def destroy_all(self):
        procs = [subprocess.Popen([self.lodge, "--root", self.root, "destroy", n], stderr=subprocess.DEVNULL)
                 for n in self.running]
        for p in procs:
            p.wait()
        self.running = []


def at_once_vs_sequence(host):
    names = ["p%d" % i for i in range(PAR)]
    for n in names:
        host.config(n)
    ratios, seqs, pars = [], [], []
    for _ in range(3):
        t0 = time.monotonic()
        for n in names:
            host.cmd("create", n)
        seq = time.monotonic() - t0
        host.running = names
        host.destroy_all()
        t0 = time.monotonic()
        procs = [subprocess.Popen([host.lodge, "--root", host.root, "create", n]) for n in names]
        if any(p.wait() for p in procs):
            raise RuntimeError("a create at once failed")
        par = time.monotonic() - t0
        host.running = names
        host.destroy_all()
        seqs.append(seq * 1000)
        pars.append(par * 1000)
        ratios.append(par / seq)
    return statistics.median(seqs), statistics.median(pars), statistics.median(ratios)


def dashboard_ms_per_refresh(host):
    session = "lodge-bench-scale-%d" % os.getpid()
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                    "%s --root %s -d %.1f" % (host.lodge, host.root, TUI_DELAY)], check=True)
    try:
        time.sleep(2)
        pid = int(subprocess.run(["tmux", "display", "-p", "-t", session, "#{pane_pid}"],
                                 capture_output=True, text=True).stdout)
        c0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(TUI_S)
        c1, t1 = cpu_seconds(pid), time.monotonic()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session])
    return (c1 - c0) * 1000 / ((t1 - t0) / TUI_DELAY)


def measure(host, count):
    extra = "x"
    host.config(extra)
    creates, destroys = [], []
    for _ in range(ROUNDS):
        creates.append(host.timed("create", extra))
        destroys.append(host.timed("destroy", extra))
    lists = [host.timed("list") for _ in range(10)]
    tui = dashboard_ms_per_refresh(host)
    pids = host.processes()
    if len(pids) != count:
        raise RuntimeError("%d domains listed, %d running" % (len(pids), count))
    every = [p for pair in pids for p in pair]
    c0, t0 = sum(cpu_seconds(p) for p in every), time.monotonic()
    time.sleep(IDLE_S)
    c1, t1 = sum(cpu_seconds(p) for p in every), time.monotonic()
    idle_pct = (c1 - c0) / (t1 - t0) * 100 / count
    own = [own_kib(p) for p in every]
    rss, pss = (sum(o[i] for o in own) / count / 1024 for i in (0, 1))
    domain_mib = sum(pss_kib(p) for p in every) / count / 1024
    return dict(count=count, create=statistics.median(creates), destroy=statistics.median(destroys),
                list=statistics.median(lists), tui=tui, idle=idle_pct, rss=rss, pss=pss, domain=domain_mib)


def main():
    lodge, minios = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    host = Host(lodge, minios)
    load0 = os.getloadavg()[0]
    rows = []
    try:
        seq, par, ratio = at_once_vs_sequence(host)
        for count in COUNTS:
            while len(host.running) < count:
                name = "d%d" % len(host.running)
                host.config(name)
                host.cmd("create", name)
                host.running.append(name)
            time.sleep(1)     # the last ones' boot is over: idle from here
            rows.append(measure(host, count))
    finally:
        host.destroy_all()
        shutil.rmtree(host.root, ignore_errors=True)
    print("Mini-OS domains (%d MiB, 1 vCPU), %d CPUs, load average %.2f at the start, %.2f at the end\n" % (
        MEM_MIB, os.cpu_count(), load0, os.getloadavg()[0]))
    print("%d creates at once: %.0f ms, in sequence: %.0f ms; at once / in sequence %.2f (median of 3; "
          "target at most 0.6: %s)\n" % (PAR, par, seq, ratio, "met" if ratio <= 0.6 else "NOT met"))
    print("| domains | create ms | destroy ms | lodge list ms | list ms per domain | dashboard CPU ms "
          "per refresh | per domain | idle CPU % of a core per domain | domain MiB (Pss, guest RAM in) | "
          "VMM own Rss MiB per domain | VMM own Pss MiB per domain |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.3f | %.3f | %.1f | %.2f | %.2f |" % (
            r["count"], r["create"], r["destroy"], r["list"], r["list"] / r["count"], r["tui"],
            r["tui"] / r["count"], r["idle"], r["domain"], r["rss"], r["pss"]))
    print("\ncreate and destroy: one more domain, with that many running, median of %d; the dashboard "
          "refreshes every %.1f s for %.0f s; idle CPU over %.0f s; memory counts the domain process and "
          "its supervisor." % (ROUNDS, TUI_DELAY, TUI_S, IDLE_S))


if __name__ == "__main__":
    main()
