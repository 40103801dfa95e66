#!/usr/bin/env python3
"""Install benchmark: `lodge install` of a Debian bookworm guest into a
2 GiB file, side by side in the same run with its peer, what
xen-create-image does (tests/bench/install-peer.sh): debootstrap into a
loop-mounted ext4 image, the rest of the packages by apt-get in the
chroot, then fstab, hostname, hosts, the network, the kernel and initrd
copied out and a domain config.

Both install the template's packages (read from `lodge template-update
--dry-run`) with apt (Recommends too) from the same mirror: deb.debian.org,
the release, -updates and -security (the host's sources, which Lodge's
template takes).  Each keeps the .debs it downloads in a cache of its own:
ROOT/var/cache/lodge for Lodge (mmdebstrap's sync-in/sync-out), one
directory for debootstrap's --cache-dir and the chroot's apt archives for
the peer.  apt's package lists are fetched from the mirror every time, by
both.  The peer's base is debootstrap's minbase (Priority: required), a
few more packages than mmdebstrap's apt variant (Essential: yes): the
table says how many each installed.

  cold:  both caches empty (every package downloaded), Lodge's template
         directory empty: one pair, first of all (it fills the caches);
  first: Lodge's template directory empty, its cache warm (a user's second
         machine with the cache copied, or a template rebuilt); the peer
         with its cache warm;
  second: Lodge with the template present (each guest after the first).
The pairs run in turn, Lodge then the peer, so that the machine's load
drifts over both alike; each ratio is taken pair by pair.

  install.py LODGE        (root; RUNS warm rounds after the cold pair,
                           default 3; BENCH_DIR: where the disks go,
                           default /var/tmp)
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(os.environ.get("RUNS", "3"))
MIRROR = "http://deb.debian.org/debian"
PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "install-peer.sh")
FIRST_TARGET_RATIO, SECOND_TARGET_S = 0.5, 5.0


CPU = []      # each timed run's CPU seconds (user + system of every process it waited for), in order


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv, log, **kw):
    c0, t0 = cpu_children(), time.monotonic()
    with open(log, "ab") as f:
        rc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, **kw).returncode
    took = time.monotonic() - t0
    CPU.append(cpu_children() - c0)
    if rc != 0:
        with open(log, "rb") as f:
            tail = f.read()[-600:].decode(errors="replace")
        raise RuntimeError("%s exited %d: %s" % (argv[:4], rc, tail))
    return took


class Lodge:
    def __init__(self, lodge, root):
        self.cmd, self.root = [lodge, "--root", root], root
        self.images = os.path.join(root, "var/lib/lodge/images")
        self.doms = os.path.join(root, "etc/lodge/domains")
        self.cache = os.path.join(root, "var/cache/lodge")
        self.log = os.path.join(root, "lodge.log")
        os.makedirs(self.doms, exist_ok=True)

    def packages(self):
        out = subprocess.run(self.cmd + ["template-update", "--dry-run", "bookworm"], check=True,
                             capture_output=True, text=True).stdout
        return next(w.split("=", 1)[1] for w in out.split() if w.startswith("--include="))

    def forget(self, name):
        for p in (os.path.join(self.doms, name + ".cfg"), os.path.join(self.images, name + ".img"),
                  os.path.join(self.images, name + "-seed.img")):
            if os.path.exists(p):
                os.unlink(p)

    def install(self, name, first):
        if first:
            subprocess.run(self.cmd + ["template-delete", "bookworm"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        took = timed(self.cmd + ["install", name, "--size", "2G"], self.log)
        self.forget(name)
        return took

    def installed_packages(self):
        tpl = next(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(self.root, "var/lib/lodge/templates"))
                   for f in fs if f.endswith(".img"))
        status = subprocess.run(["debugfs", "-R", "cat /var/lib/dpkg/status", tpl], capture_output=True,
                                text=True).stdout
        return status.count("Status: install ok installed")


class Peer:
    def __init__(self, work, packages):
        self.work, self.packages = work, packages
        self.cache = os.path.join(work, "debootstrap-cache")
        self.log = os.path.join(work, "peer.log")
        self.count = None
        os.makedirs(self.cache, exist_ok=True)

    def install(self, name):
        took = timed(["unshare", "-m", "bash", PEER, self.work, name, self.cache, self.packages, MIRROR], self.log)
        with open(os.path.join(self.work, name + ".packages")) as f:
            self.count = int(f.read())
        for f in os.listdir(self.work):
            if f.startswith(name + "."):
                p = os.path.join(self.work, f)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        return took


def cache_mib(path):
    total = 0
    for d, _, fs in os.walk(path):
        for f in fs:
            total += os.lstat(os.path.join(d, f)).st_size
    return total / (1 << 20)


def mms(values, unit="s", fmt="%.1f"):
    return " / ".join(fmt % v for v in (min(values), statistics.median(values), max(values))) + " " + unit


def main():
    if os.geteuid() != 0:
        print("The install benchmark needs root (mmdebstrap, debootstrap, loop mounts): not run.")
        return
    for tool in ("mmdebstrap", "debootstrap", "debugfs", "unshare"):
        if not shutil.which(tool):
            print("The install benchmark needs %s (apt-get install %s): not run." % (tool, tool))
            return
    lodge = os.path.abspath(sys.argv[1])
    load0 = os.getloadavg()[0]
    base = tempfile.mkdtemp(prefix="lodge-bench-install.", dir=os.environ.get("BENCH_DIR", "/var/tmp"))
    lg = Lodge(lodge, os.path.join(base, "root"))
    peer = Peer(os.path.join(base, "peer"), lg.packages())
    first, second, peer_warm = [], [], []
    cpu_first, cpu_second, cpu_peer = [], [], []
    try:
        # The cold pair fills both caches for the warm rounds.
        cold = lg.install("cold", True)
        peer_cold = peer.install("peer-cold")
        print("cold pair: lodge %.1f s, peer %.1f s" % (cold, peer_cold), file=sys.stderr)
        for i in range(RUNS):
            first.append(lg.install("first%d" % i, True))
            cpu_first.append(CPU[-1])
            second.append(lg.install("second%d" % i, False))
            cpu_second.append(CPU[-1])
            peer_warm.append(peer.install("peer%d" % i))
            cpu_peer.append(CPU[-1])
            print("round %d: lodge first %.1f s, second %.2f s, peer %.1f s" % (
                i + 1, first[-1], second[-1], peer_warm[-1]), file=sys.stderr)
        lodge_pkgs = lg.installed_packages()
        lodge_cache, peer_cache = cache_mib(lg.cache), cache_mib(peer.cache)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    ratios = [a / b for a, b in zip(first, peer_warm)]
    print("Debian bookworm into a 2 GiB file (%d packages in Lodge's template, %d in the peer's image): "
          "seconds, min / median / max of %d rounds\n" % (lodge_pkgs, peer.count, RUNS))
    print("| | lodge install | debootstrap + xen-create-image's steps | ratio (pair by pair) |")
    print("|---|---|---|---|")
    print("| first install, package caches empty (1 pair, all downloaded) | %.1f s | %.1f s | %.2f |" % (
        cold, peer_cold, cold / peer_cold))
    print("| first install, package cache warm (template built) | %s | %s | %s |" % (
        mms(first), mms(peer_warm), mms(ratios, "", "%.2f").strip()))
    print("| second install (template present) | %s | %s | %.3f (against the peer's median) |" % (
        mms(second, "s", "%.2f"), mms(peer_warm), statistics.median(second) / statistics.median(peer_warm)))
    print("\nCPU seconds (user + system of every process each waited for: less moved by the other load on "
          "a shared machine than wall time), min / median / max\n")
    print("| | lodge install | debootstrap + xen-create-image's steps | ratio of the medians |")
    print("|---|---|---|---|")
    print("| first install, package cache warm | %s | %s | %.2f |" % (
        mms(cpu_first), mms(cpu_peer), statistics.median(cpu_first) / statistics.median(cpu_peer)))
    print("| second install | %s | | |" % mms(cpu_second, "s", "%.2f"))
    print("\nCaches after the run: Lodge's %.0f MiB (ROOT/var/cache/lodge), the peer's %.0f MiB "
          "(debootstrap --cache-dir). Mirror: deb.debian.org for both; apt's package lists fetched every time. "
          "Host load average (1 min) at the start %.2f, at the end %.2f (%d CPUs, shared)" % (
              lodge_cache, peer_cache, load0, os.getloadavg()[0], os.cpu_count()))
    print("\nTargets: first install <= %.1fx the peer's time: median ratio %.2f (%s); second install under "
          "%.0f s: median %.2f s (%s)" % (
              FIRST_TARGET_RATIO, statistics.median(ratios),
              "met" if statistics.median(ratios) <= FIRST_TARGET_RATIO else "NOT met", SECOND_TARGET_S,
              statistics.median(second), "met" if statistics.median(second) < SECOND_TARGET_S else "NOT met"))


if __name__ == "__main__":
    main()
