#!/usr/bin/env python3
"""Domain lifecycle benchmark: domains created per second through `lodge
create` (create to Mini-OS's first console line), 10 at once and 50 in
sequence, side by side with the same count of QEMU microvm processes
started by a shell loop; and `lodge list` latency with 50 domains running.

Lodge's own time (the issue's target: create-to-running under 50 ms of
lodge's own time on top of the kernel's boot): before each of the 50
`lodge create`s, lodge-hyp alone with the same domain (memory, vCPUs,
kernel, command line) from its start to Mini-OS's first line on its stdout,
as tests/bench/boot.py measures it, then killed; each create's time less
the direct run just before it is lodge's own time for that pair."""
import os
import select
import signal
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

N_SEQ, N_PAR = 50, 10
MEM_MIB, VCPUS = 32, 1
BANNER = b"Lodge Mini-OS"
OWN_TARGET_MS = 50


def hyp_direct(hyp, minios):
    """lodge-hyp by hand, console on a pipe: ms from spawn to the banner."""
    t0 = time.monotonic()
    proc = subprocess.Popen([hyp, "--kernel", minios, "--cmdline", "", "--memory", str(MEM_MIB),
                             "--vcpus", str(VCPUS)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    buf, fd, deadline = b"", proc.stdout.fileno(), t0 + 60
    try:
        while BANNER not in buf:
            left = deadline - time.monotonic()
            r, _, _ = select.select([fd], [], [], max(left, 0))
            chunk = os.read(fd, 65536) if r else b""
            if not chunk:
                raise RuntimeError("lodge-hyp never printed %r: %r" % (BANNER, buf[-300:]))
            buf += chunk
        return (time.monotonic() - t0) * 1000
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def wait_file(path, needle, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(path, "rb") as f:
                if needle in f.read():
                    return time.monotonic()
        except OSError:
            pass
        time.sleep(0.001)
    raise RuntimeError("%s never showed %r" % (path, needle))


def stats(values):
    return min(values), statistics.median(values), max(values)


def main():
    lodge, minios = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    hyp = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else os.path.join(os.path.dirname(lodge), "lodge-hyp")
    load0 = os.getloadavg()[0]
    root = tempfile.mkdtemp(prefix="lodge-bench-life.")
    doms = os.path.join(root, "etc/lodge/domains")
    os.makedirs(doms)
    run = os.path.join(root, "run/lodge")
    for i in range(N_SEQ):
        with open(os.path.join(doms, "d%d.cfg" % i), "w") as f:
            f.write('name = "d%d"\nmemory = %d\nvcpus = %d\nkernel = "%s"\n' % (
                i, MEM_MIB, VCPUS, minios))
    lodge_cmd = [lodge, "--root", root]
    try:
        # 50 in sequence: create, then the guest's first line in its console
        # log; each after lodge-hyp alone, in the same state of the host.
        seq, direct = [], []
        for i in range(N_SEQ):
            direct.append(hyp_direct(hyp, minios))
            t0 = time.monotonic()
            subprocess.run(lodge_cmd + ["create", "d%d" % i], check=True)
            seq.append((wait_file(os.path.join(run, "d%d" % i, "console.log"), b"Lodge Mini-OS") - t0) * 1000)
        lists = []
        for _ in range(20):
            t0 = time.monotonic()
            subprocess.run(lodge_cmd + ["list"], check=True, stdout=subprocess.DEVNULL)
            lists.append((time.monotonic() - t0) * 1000)
        for i in range(N_SEQ):
            subprocess.run(lodge_cmd + ["destroy", "d%d" % i], check=True)
        # 10 at once.
        t0 = time.monotonic()
        procs = [subprocess.Popen(lodge_cmd + ["create", "d%d" % i]) for i in range(N_PAR)]
        for p in procs:
            p.wait()
        par = max(wait_file(os.path.join(run, "d%d" % i, "console.log"), b"Lodge Mini-OS")
                  for i in range(N_PAR)) - t0
        for i in range(N_PAR):
            subprocess.run(lodge_cmd + ["destroy", "d%d" % i], check=True)

        # QEMU microvm, started by a shell loop, serial to a file.
        def qemu(i):
            log = os.path.join(root, "q%d.log" % i)
            subprocess.run(["qemu-system-x86_64", "-accel", "kvm", "-M", "microvm", "-cpu",
                            "host,-arch-capabilities", "-m", "32", "-nodefaults", "-display", "none",
                            "-serial", "file:" + log, "-kernel", minios, "-daemonize",
                            "-pidfile", os.path.join(root, "q%d.pid" % i)], check=True)
            return log
        qseq = []
        for i in range(N_SEQ):
            t0 = time.monotonic()
            qseq.append((wait_file(qemu(i), b"Lodge Mini-OS") - t0) * 1000)
        subprocess.run(["sh", "-c", "kill $(cat %s/q*.pid)" % root])
        t0 = time.monotonic()
        logs = [qemu(100 + i) for i in range(N_PAR)]
        qpar = max(wait_file(log, b"Lodge Mini-OS") for log in logs) - t0
        subprocess.run(["sh", "-c", "kill $(cat %s/q*.pid) 2>/dev/null" % root])
    finally:
        for d in os.listdir(run) if os.path.isdir(run) else []:
            subprocess.run(lodge_cmd + ["destroy", d], stderr=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)

    own = [c - d for c, d in zip(seq, direct)]
    print("Domain creation with Mini-OS (%d MiB, %d vCPU): create to the guest's first console line\n" % (
        MEM_MIB, VCPUS))
    print("| | lodge create | QEMU microvm (shell loop) | ratio |")
    print("|---|---|---|---|")
    print("| 50 in sequence, median per domain | %.1f ms | %.1f ms | %.2f |" % (
        statistics.median(seq), statistics.median(qseq), statistics.median(seq) / statistics.median(qseq)))
    print("| 50 in sequence, domains per second | %.1f | %.1f | %.2f |" % (
        1000 * N_SEQ / sum(seq), 1000 * N_SEQ / sum(qseq), sum(qseq) / sum(seq)))
    print("| 10 at once, all running | %.0f ms | %.0f ms | %.2f |" % (par * 1000, qpar * 1000, par / qpar))
    print("\n`lodge list` with 50 domains running: min / median / max %.1f / %.1f / %.1f ms" % (
        min(lists), statistics.median(lists), max(lists)))
    print("\nLodge's own time, 50 pairs (same domain: %d MiB, %d vCPU, Mini-OS, empty command line): "
          "min / median / max\n" % (MEM_MIB, VCPUS))
    print("| | min | median | max |")
    print("|---|---|---|---|")
    print("| lodge-hyp alone, start to first line (stdout pipe) | %.1f ms | %.1f ms | %.1f ms |" % stats(direct))
    print("| lodge create, create to first line (console.log) | %.1f ms | %.1f ms | %.1f ms |" % stats(seq))
    print("| lodge's own time (create less the lodge-hyp run before it) | %.1f ms | %.1f ms | %.1f ms |" % stats(own))
    print("\nDifference of the medians: %.1f ms. Host load average (1 min) at the start %.2f, at the end %.2f "
          "(%d CPUs)" % (statistics.median(seq) - statistics.median(direct), load0, os.getloadavg()[0],
                         os.cpu_count()))
    print("\nTargets: lodge list under 20 ms with 50 domains: %.1f ms (%s); create-to-running under %d ms of "
          "lodge's own time: median %.1f ms (%s)" % (
              statistics.median(lists), "met" if statistics.median(lists) < 20 else "NOT met",
              OWN_TARGET_MS, statistics.median(own),
              "met" if statistics.median(own) < OWN_TARGET_MS else "NOT met"))


if __name__ == "__main__":
    main()
