#!/usr/bin/env python3
"""The VMM's own CPU per request and per frame, lodge-hyp against QEMU.

On this host throughput is decided elsewhere (a cached virtual disk that
swings 2x from run to run; under PVM Mini-OS's emulated instructions bound
both VMMs alike), so this measures what the VMM itself spends: the CPU
time (utime + stime, /proc/PID/stat, every thread that ever ran, io_uring
workers included) of the VMM's processes minus that of its vCPU threads
(lodge-hyp: comm "vcpuN"; QEMU: "CPU N/KVM"), whose time is the guest's.
It is sampled just before and just after each of Mini-OS's benchmark
commands, with the guest still up, and the difference divided by the
work done: host CPU outside the guest per GiB, per 1,000 requests, per
1,000 frames.  The guest side is the same Mini-OS for both.

virtio-blk: `blk-bench` reads and writes BLK_SEQ_MIB (4096) sequentially
in 1 MiB requests, 32 in flight, then BLK_RAND_MIB (512) of random 4 KiB
reads, 32 in flight, over the whole disk (after an unmeasured 64 MiB
read that faults in the guest's buffers); once on a file in tmpfs
(/dev/shm: the disk drops out; both VMMs open it buffered) and once on a
file on the host's disk with O_DIRECT (BENCH_DIR, /var/tmp).  lodge-hyp
runs with --hugepages, as QEMU's RAM is THP-madvised (see blk.py).  The
tmpfs sequential read rate is set against a host memcpy of the same
amount in the same 1 MiB pieces from the same file's pages.

virtio-net: in a network namespace made for it, a tap on a bridge
(QEMU without vhost-net, so both are user space): `net-send` NET_FRAMES
(50000) frames of 64 and 1500 bytes; a host-side flood of 64-byte frames
for NET_RECV_SECS (5) counted by `net-recv`; then a paced sender offers
NET_LOADS (4000,20000) frames/s for NET_LOAD_SECS (5) each and the loss
is 1 - frames the guest counted / frames sent.  The first load is meant
to be one both VMMs take, the second one above it; the achieved offered
rate is printed.

Each VMM runs in a cgroup of its own, whose CPU the kernel sums in
nanoseconds (cpu.stat on cgroup v2, cpuacct.usage on v1), less its vCPU
threads' run time from schedstat.  Without a cgroup (none can be made)
the clock is the kernel's tick (utime and stime count in 1/CLK_TCK s, 10
ms here): a figure under a tick then gives "n/a", not a ratio.

VMMCPU_ROUNDS (5) rounds, lodge-hyp and QEMU in turn; each figure is the
median with the range (min-max).  VMMCPU_PARTS (blk,net) picks parts.
"""
import mmap
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROUNDS = int(os.environ.get("VMMCPU_ROUNDS", "5"))
PARTS = os.environ.get("VMMCPU_PARTS", "blk,net").split(",")
SEQ_MIB = int(os.environ.get("BLK_SEQ_MIB", "4096"))
RAND_MIB = int(os.environ.get("BLK_RAND_MIB", "512"))
NET_FRAMES = int(os.environ.get("NET_FRAMES", "50000"))
NET_RECV_SECS = int(os.environ.get("NET_RECV_SECS", "5"))
NET_LOADS = [int(x) for x in os.environ.get("NET_LOADS", "4000,20000").split(",")]
NET_LOAD_SECS = int(os.environ.get("NET_LOAD_SECS", "5"))
TICK = os.sysconf("SC_CLK_TCK")
NS = "lodge-bench-vmmcpu-%d" % os.getpid()
BRIDGE = "lbr0"
VCPU_COMM = {"lodge": re.compile(r"vcpu\d+$"), "qemu": re.compile(r"CPU \d+/KVM$")}
QEMU = ["qemu-system-x86_64", "-accel", "kvm", "-M", "pc", "-cpu", "host,-arch-capabilities",
        "-nographic", "-nodefaults", "-serial", "stdio", "-no-reboot",
        "-name", "bench,debug-threads=on"]     # names its vCPU threads "CPU n/KVM"


# ---- per-thread accounting -------------------------------------------------

def stat_ticks(path):
    """utime + stime from a /proc stat file (fields 14 and 15; the comm
    in parentheses may hold spaces, so split after its closing one)."""
    with open(path) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12])


def process_tree(pid):
    """pid and every descendant (lodge-hyp's supervisor forks the domain's
    sandboxed child)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, tid)) as f:
                    todo += [int(c) for c in f.read().split()]
        except FileNotFoundError:
            pass
    return out


class CpuCgroup:
    """A cgroup of the VMM's own, so that the kernel sums its CPU in
    nanoseconds over every thread that ever ran in it (io_uring's workers
    come and go); utime and stime count in 10 ms ticks, as coarse as a
    whole O_DIRECT figure here.  cgroup v2 (cpu.stat) or v1 (cpuacct);
    None where neither can be made (the ticks are used then)."""
    seq = 0

    @classmethod
    def make(cls):
        cls.seq += 1
        name = "lodge-bench-vmmcpu-%d-%d" % (os.getpid(), cls.seq)
        for root, usage in (("/sys/fs/cgroup", "cpu.stat"), ("/sys/fs/cgroup/cpuacct", "cpuacct.usage")):
            if (usage == "cpu.stat") != os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
                continue
            try:
                os.mkdir(os.path.join(root, name))
            except OSError:
                return None
            return cls(os.path.join(root, name), usage)
        return None

    def __init__(self, path, usage):
        self.path, self.usage = path, usage

    def join(self):
        """In the child before exec (preexec_fn): the VMM and all it starts are in it."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def ns(self):
        with open(os.path.join(self.path, self.usage)) as f:
            text = f.read()
        if self.usage == "cpu.stat":
            return int(re.search(r"usage_usec (\d+)", text).group(1)) * 1000
        return int(text)

    def remove(self):
        """Once its last process is gone (lodge-hyp's domain process may
        outlive the supervisor by a moment)."""
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.01)


def vcpu_threads(pid, vcpu_comm):
    """(process, thread id) of each live vCPU thread under pid."""
    out = []
    for p in process_tree(pid):
        try:
            for tid in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/comm" % (p, tid)) as f:
                    if vcpu_comm.match(f.read().strip()):
                        out.append((p, tid))
        except (FileNotFoundError, ProcessLookupError):
            pass
    if not out:         # a renamed thread would count the guest's time as the VMM's
        raise RuntimeError("no vCPU thread named %s under pid %d" % (vcpu_comm.pattern, pid))
    return out


def vmm_cpu(pid, vcpu_comm, cgroup=None):
    """Seconds of CPU the VMM's processes have used outside their vCPU
    threads: with a cgroup, its total in ns less the vCPU threads' run
    time (schedstat, ns); else each process's utime + stime (dead threads
    included) less its live vCPU threads', in ticks."""
    vcpus = vcpu_threads(pid, vcpu_comm)
    if cgroup:
        total = cgroup.ns()
        for p, tid in vcpus:
            with open("/proc/%d/task/%s/schedstat" % (p, tid)) as f:
                total -= int(f.read().split()[0])
        return total / 1e9
    ticks = 0
    for p in process_tree(pid):
        try:
            ticks += stat_ticks("/proc/%d/stat" % p)
        except (FileNotFoundError, ProcessLookupError):
            pass
    for p, tid in vcpus:
        ticks -= stat_ticks("/proc/%d/task/%s/stat" % (p, tid))
    return ticks / TICK


# ---- a Mini-OS guest driven over its serial console --------------------------

class Guest:
    def __init__(self, who, argv, timeout=60):
        self.who, self.out = who, b""
        self.cgroup = CpuCgroup.make()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=self.cgroup.join if self.cgroup else None)
        try:
            self.expect(rb"minios> ", timeout)
        except BaseException:
            self.kill()
            raise

    def expect(self, pattern, timeout, start=0):
        deadline = time.time() + timeout
        while True:
            m = re.compile(pattern).search(self.out, start)
            if m:
                return m
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("%s: no %r in time; output ends %r" % (self.who, pattern, self.out[-400:]))
            self.out += os.read(self.proc.stdout.fileno(), 65536)

    def send(self, line):
        start = len(self.out)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return start

    def cpu(self):
        return vmm_cpu(self.proc.pid, VCPU_COMM[self.who], self.cgroup)

    def run(self, line, pattern, timeout=300):
        """Run one command; (match, VMM CPU seconds it took)."""
        c0 = self.cpu()
        m = self.expect(pattern, timeout, self.send(line))
        return m, self.cpu() - c0

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.forget_cgroup()

    def close(self):
        try:
            self.send("poweroff")
            self.proc.wait(timeout=20)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.proc.kill()
            self.proc.wait()
        self.forget_cgroup()

    def forget_cgroup(self):
        if self.cgroup:
            self.cgroup.remove()
            self.cgroup = None


# ---- virtio-blk ----------------------------------------------------------------

BLK_RE = rb"blk-bench: %s \d+ MiB in \d+ ms: (\d+) MiB/s, (\d+) IOPS"


def blk_round(who, guest):
    try:
        return blk_measure(guest)
    except BaseException:
        guest.kill()
        raise


def blk_measure(guest):
    res = {}
    # Not measured: a first pass that faults in the guest's 32 buffers.  The
    # first write into a page of guest RAM allocates and zeroes it, on this
    # nested host some 18 ms a 2 MiB page, paid by whichever VMM thread
    # copies into it first: a cost of the guest's RAM, once per boot, not of
    # the VMM's I/O path per GiB (it was a third of the first figure).
    guest.run("blk-bench vda read 64 1024 32", BLK_RE % b"read")
    for kind, mib, kib in (("read", SEQ_MIB, 1024), ("write", SEQ_MIB, 1024), ("randread", RAND_MIB, 4)):
        m, cpu = guest.run("blk-bench vda %s %d %d 32" % (kind, mib, kib), BLK_RE % kind.encode())
        per = mib / 1024 if kib == 1024 else mib * 1024 / kib / 1000     # GiB, or 1,000s of requests
        res[kind] = cpu * 1000 / per
        res[kind + "-rate"] = int(m.group(1))
    guest.close()
    return res


def blk_guest(who, hyp, minios, img, direct):
    if who == "lodge":
        return Guest(who, [hyp, "--hugepages", "--kernel", minios, "--memory", "256",
                           "--disk", img + (",direct" if direct else "")])
    cache = "cache=none" if direct else "cache=writeback"
    return Guest(who, QEMU + ["-m", "256", "-drive", "file=%s,if=none,id=d0,format=raw,%s,aio=io_uring" % (img, cache),
                              "-device", "virtio-blk-pci,drive=d0,disable-legacy=on", "-kernel", minios])


def host_memcpy(img):
    """MiB/s of copying SEQ_MIB from the file's pages in 1 MiB pieces into
    a 32 MiB ring (the guest's 32 buffers in flight); best of three."""
    best = 0
    with open(img, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as mm:
        src, ring = memoryview(mm), bytearray(32 << 20)
        dst = memoryview(ring)
        for _ in range(3):
            t0 = time.perf_counter()
            for i in range(SEQ_MIB):
                o = (i % 32) << 20
                dst[o:o + (1 << 20)] = src[i << 20:(i + 1) << 20]
            best = max(best, SEQ_MIB / (time.perf_counter() - t0))
        src.release()
        dst.release()
    return int(best)


def make_file(d, direct):
    img = os.path.join(d, "disk.img")
    # Really allocated blocks, so reads go to the file and not to a hole.
    subprocess.run(["dd", "if=/dev/zero", "of=" + img, "bs=1M", "count=%d" % (SEQ_MIB + 64), "status=none"]
                   + (["oflag=direct"] if direct else []), check=True)
    return img


def bench_blk(hyp, minios):
    results, memcpy = {}, None
    for backing, where, direct in (("tmpfs", "/dev/shm", False),
                                   ("disk, O_DIRECT", os.environ.get("BENCH_DIR", "/var/tmp"), True)):
        d = tempfile.mkdtemp(prefix="lodge-bench-vmmcpu.", dir=where)
        img = make_file(d, direct)
        try:
            if not direct:
                memcpy = host_memcpy(img)
            runs = {"lodge": [], "qemu": []}
            for _ in range(ROUNDS):
                for who in ("lodge", "qemu"):
                    runs[who].append(blk_round(who, blk_guest(who, hyp, minios, img, direct)))
            results[backing] = runs
        finally:
            os.unlink(img)
            os.rmdir(d)
    return results, memcpy


# ---- virtio-net ------------------------------------------------------------------

def sh(*argv):
    return subprocess.run(argv, check=True, capture_output=True)


def in_ns(*argv):
    return ["ip", "netns", "exec", NS] + list(argv)


def sender(rate, secs):
    """A host-side sender of 64-byte test frames onto the bridge, in the
    namespace: rate 0 floods; otherwise paced to rate frames/s.  Its last
    line is "sent N in S s"."""
    return subprocess.Popen(in_ns(sys.executable, os.path.abspath(__file__), "--send", BRIDGE, str(rate), str(secs)),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def send_frames(ifname, rate, secs):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x99" + b"\x88\xb5" + bytes(46)
    sent, t0 = 0, time.perf_counter()
    end = t0 + secs
    while True:
        now = time.perf_counter()
        if now >= end:
            break
        # Paced: catch up to rate * elapsed, then yield; bursts stay at a
        # millisecond's worth, well inside a virtqueue.
        want = int((now - t0) * rate) + 1 if rate else sent + 64
        while sent < want:
            try:
                s.send(frame)
                sent += 1
            except OSError:
                break
        if rate:
            time.sleep(0.0005)
    print("sent %d in %.3f s" % (sent, time.perf_counter() - t0), flush=True)


def sent_count(proc):
    out = proc.communicate(timeout=60)[0]
    m = re.search(rb"sent (\d+) in ([\d.]+) s", out)
    if not m:
        raise RuntimeError("sender: %r" % out[-300:])
    return int(m.group(1)), float(m.group(2))


RECV_RE = rb"net-recv: (\d+) frames in \d+ s"


def net_round(who, guest, tap):
    try:
        return net_measure(guest, tap)
    except BaseException:
        guest.kill()
        raise


def net_measure(guest, tap):
    if tap:     # QEMU's tap is attached here; lodge-hyp attached its own over netlink.
        sh(*in_ns("ip", "link", "set", tap, "master", BRIDGE, "up"))
    res = {}
    for size in (64, 1500):
        _, cpu = guest.run("net-send %d %d" % (NET_FRAMES, size),
                           rb"net-send: %d frames of %d bytes in \d+ us" % (NET_FRAMES, size))
        res["tx%d" % size] = cpu * 1000 / (NET_FRAMES / 1000)
    # Receive: the guest counts for the whole window plus a second either
    # side of the sender's; CPU per 1,000 frames the guest counted.
    for rate in [0] + NET_LOADS:
        secs = NET_RECV_SECS if rate == 0 else NET_LOAD_SECS
        c0 = guest.cpu()
        start = guest.send("net-recv %d" % (secs + 3))
        guest.expect(rb"net-recv %d\r?\n" % (secs + 3), 10, start)
        time.sleep(1)       # the guest is counting (no event to wait for: it prints only at the end)
        sent, took = sent_count(sender(rate, secs))
        seen = int(guest.expect(RECV_RE, secs + 30, start).group(1))
        cpu = guest.cpu() - c0
        key = "rx" if rate == 0 else "load%d" % rate
        res[key] = cpu * 1000 / (seen / 1000) if seen else float("nan")
        if rate:
            res[key + "-loss"] = 100.0 * max(0, sent - seen) / sent if sent else float("nan")
            res[key + "-offered"] = sent / took
    guest.close()
    return res


def bench_net(hyp, minios):
    sh("ip", "netns", "add", NS)
    try:
        sh(*in_ns("ip", "link", "set", "lo", "up"))
        sh(*in_ns("ip", "link", "add", BRIDGE, "type", "bridge"))
        sh(*in_ns("ip", "link", "set", BRIDGE, "up"))
        runs = {"lodge": [], "qemu": []}
        for _ in range(ROUNDS):
            runs["lodge"].append(net_round("lodge", Guest("lodge", in_ns(
                hyp, "--kernel", minios, "--memory", "64", "--net", "tap=lvif0,bridge=" + BRIDGE)), None))
            runs["qemu"].append(net_round("qemu", Guest("qemu", in_ns(*QEMU, "-m", "64", "-netdev",
                "tap,id=n0,ifname=qvif0,script=no,downscript=no,vhost=off", "-device",
                "virtio-net-pci,netdev=n0,disable-legacy=on,mac=02:4c:00:00:00:51", "-kernel", minios)), "qvif0"))
    finally:
        subprocess.run(["ip", "netns", "del", NS])
    return runs


# ---- tables ------------------------------------------------------------------------

def med(vals):
    vals = sorted(vals)
    return vals[len(vals) // 2]


def fig(runs, key, fmt):
    vals = [r[key] for r in runs]
    return "%s (%s-%s)" % (fmt % med(vals), fmt % min(vals), fmt % max(vals))


def row(label, runs, key, fmt, ratios):
    l, q = med(r[key] for r in runs["lodge"]), med(r[key] for r in runs["qemu"])
    ratio = l / q if q else float("nan")      # QEMU's CPU under a tick: no ratio
    ratios.append(ratio)
    print("| %s | %s | %s | %s |" % (label, fig(runs["lodge"], key, fmt), fig(runs["qemu"], key, fmt),
                                     "n/a" if ratio != ratio else "%.2f" % ratio))


def cpu_target(ratios):
    if any(r != r for r in ratios):
        return "not resolved (a figure under the clock tick: raise the counts)"
    return "met" if all(r <= 0.7 for r in ratios) else "NOT met (worst %.2f)" % max(ratios)


CPU_HOW = "the VMM's cgroup's CPU time less its vCPU threads', in ns"


def report_blk(results, memcpy):
    print("virtio-blk: host CPU outside the guest (%s), "
          "ms; sequential %d MiB in 1 MiB requests, 32 in flight; random 4 KiB reads over the whole "
          "disk, %d MiB of them, 32 in flight; lodge-hyp --hugepages; median (min-max) of %d rounds\n"
          % (CPU_HOW, SEQ_MIB, RAND_MIB, ROUNDS))
    print("| backing, figure | lodge-hyp | QEMU virtio-blk-pci | lodge / QEMU |")
    print("|---|---|---|---|")
    ratios = []
    for backing, runs in results.items():
        row(backing + ", ms per GiB read", runs, "read", "%.1f", ratios)
        row(backing + ", ms per GiB written", runs, "write", "%.1f", ratios)
        row(backing + ", ms per 1,000 random 4 KiB reads", runs, "randread", "%.1f", ratios)
    tmpfs = results["tmpfs"]
    lr, qr = med(r["read-rate"] for r in tmpfs["lodge"]), med(r["read-rate"] for r in tmpfs["qemu"])
    print("\ntmpfs sequential read: lodge-hyp %s MiB/s, QEMU %s MiB/s; host memcpy of %d MiB in 1 MiB "
          "pieces from the same file: %d MiB/s; lodge / memcpy %.2f" % (
              fig(tmpfs["lodge"], "read-rate", "%d"), fig(tmpfs["qemu"], "read-rate", "%d"),
              SEQ_MIB, memcpy, lr / memcpy if memcpy else 0))
    print("Targets: CPU at most 0.7x QEMU's: %s; tmpfs read at least 0.5x memcpy: %s" % (
        cpu_target(ratios), "met" if lr >= 0.5 * memcpy else "NOT met"))


def report_net(runs):
    print("virtio-net on a tap on a bridge (network namespace; QEMU without vhost-net): host CPU outside "
          "the guest (%s), ms per 1,000 frames; %d frames per send; receive = a host-side flood of 64-byte "
          "frames for %d s, then paced loads for %d s each; median (min-max) of %d rounds\n"
          % (CPU_HOW, NET_FRAMES, NET_RECV_SECS, NET_LOAD_SECS, ROUNDS))
    print("| figure | lodge-hyp | QEMU virtio-net-pci | lodge / QEMU |")
    print("|---|---|---|---|")
    ratios = []
    row("ms per 1,000 frames sent, 64 B", runs, "tx64", "%.1f", ratios)
    row("ms per 1,000 frames sent, 1500 B", runs, "tx1500", "%.1f", ratios)
    row("ms per 1,000 frames received (flood)", runs, "rx", "%.1f", ratios)
    for rate in NET_LOADS:
        row("ms per 1,000 frames received at %d frames/s" % rate, runs, "load%d" % rate, "%.1f", ratios)
    print("\n| offered load toward the guest | lodge-hyp loss | QEMU loss |")
    print("|---|---|---|")
    for rate in NET_LOADS:
        offered = med(r["load%d-offered" % rate] for r in runs["lodge"] + runs["qemu"])
        print("| %d frames/s (achieved %.0f) | %s %% | %s %% |" % (
            rate, offered, fig(runs["lodge"], "load%d-loss" % rate, "%.1f"),
            fig(runs["qemu"], "load%d-loss" % rate, "%.1f")))
    low = "load%d-loss" % NET_LOADS[0]
    print("\nTargets: CPU at most 0.7x QEMU's: %s; loss at %d frames/s no higher than QEMU's: %s" % (
        cpu_target(ratios), NET_LOADS[0],
        "met" if med(r[low] for r in runs["lodge"]) <= med(r[low] for r in runs["qemu"]) else "NOT met"))


def main():
    if sys.argv[1] == "--send":
        send_frames(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    hyp, minios = sys.argv[1], sys.argv[2]
    probe = CpuCgroup.make()
    if probe:
        probe.remove()
    else:
        global CPU_HOW
        CPU_HOW = "utime + stime of every VMM thread but the vCPUs', in 10 ms ticks: no cgroup could be made"
    # Stopped (timeout, ^C): the files, guests and namespace still go.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if "blk" in PARTS:
        report_blk(*bench_blk(hyp, minios))
        print()
    if "net" in PARTS:
        report_net(bench_net(hyp, minios))


if __name__ == "__main__":
    main()
