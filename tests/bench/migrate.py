#!/usr/bin/env python3
"""Live migration and save/restore benchmark: lodge against QEMU, same run.

A 256 MiB, 1 vCPU Mini-OS guest, migrated over loopback to a second VMM on
the same host, idle and running `dirty 64` (one qword in every page of 64
MiB, pass after pass, as fast as the vCPU goes): downtime and total
migration time.  Then save and restore of the idle guest to a file.

lodge:  `lodge --root DST migrate-receive --listen 127.0.0.1:PORT --once`
        (a TCP listener needs the shared secret: both roots' lodge.conf
        name one, and both ends prove they know it before the stream),
        `lodge --root SRC migrate NAME 127.0.0.1:PORT`, whose last line is
        "migrated NAME to ADDR in T ms, downtime D ms, R rounds, P pages";
        `lodge save NAME FILE`, `lodge restore FILE` (wall time of each).
QEMU:   a second qemu-system-x86_64 with -incoming tcp:127.0.0.1:PORT;
        `migrate` over QMP, downtime and total-time from query-migrate
        (whole ms, QEMU's own figures, as lodge's are its own); the last
        column adds, for QEMU, the source's STOP event to the destination's
        RESUME (QMP timestamps, to the microsecond).
        max-bandwidth is raised to 10 GiB/s (QEMU 7.2's default, 32 MiB/s,
        would make total time a measure of the throttle); downtime-limit
        stays QEMU's default (300 ms) unless QEMU_DOWNTIME_LIMIT_MS is set.
        Save: `stop`, then migrate to "exec:cat > FILE" (total-time);
        restore: spawn to running with -incoming "exec:cat FILE" (wall).

A lodge command that fails (the CLI not there yet) gives an error row for
lodge, and QEMU's rows are still measured.  RUNS (default 5) runs each;
the table shows min / median / max.
"""
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(os.environ.get("RUNS", "5"))
MEM_MIB = 256
DIRTY_MIB = 64
QEMU_MACHINE = os.environ.get("QEMU_MACHINE", "microvm")
QEMU_DOWNTIME_LIMIT_MS = os.environ.get("QEMU_DOWNTIME_LIMIT_MS")
MIGRATED_RE = re.compile(r"migrated (\S+) to (\S+) in ([\d.]+) ms, downtime ([\d.]+) ms, "
                         r"(\d+) rounds, (\d+) pages")
WORKLOADS = [("idle", ""), ("dirty %d" % DIRTY_MIB, "run=dirty+%d" % DIRTY_MIB)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """Whether something listens on 127.0.0.1:port (from /proc/net/tcp, so
    the probe does not use up a --once receiver's one connection)."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def wait_file(path, needle, timeout=60, start=0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(path, "rb") as f:
                f.seek(start)
                if needle in f.read():
                    return True
        except OSError:
            pass
        time.sleep(0.01)
    raise RuntimeError("%s never showed %r" % (path, needle))


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class QMP:
    def __init__(self, path, timeout=30):
        end = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > end:
                    raise
                time.sleep(0.005)
        self.f = self.sock.makefile("rwb")
        self.events = []
        self._read()                               # the greeting
        self.cmd("qmp_capabilities")

    def _read(self):
        while True:
            line = self.f.readline()
            if not line:
                raise RuntimeError("QMP connection closed")
            msg = json.loads(line)
            if "event" not in msg:
                return msg
            self.events.append(msg)

    def event_time(self, name):
        """The host wall-clock time of the first event NAME seen, in s."""
        for e in self.events:
            if e["event"] == name:
                return e["timestamp"]["seconds"] + e["timestamp"]["microseconds"] / 1e6
        return None

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        self.f.flush()
        reply = self._read()
        if "error" in reply:
            raise RuntimeError("QMP %s: %s" % (name, reply["error"].get("desc")))
        return reply["return"]

    def close(self):
        self.sock.close()


def qemu_argv(minios, cmdline, log, qmp, incoming=None):
    argv = ["qemu-system-x86_64", "-accel", "kvm", "-M", QEMU_MACHINE, "-cpu", "host,-arch-capabilities",
            "-m", str(MEM_MIB), "-smp", "1", "-nodefaults", "-display", "none", "-no-reboot",
            "-serial", "file:" + log, "-qmp", "unix:%s,server=on,wait=off" % qmp,
            "-kernel", minios, "-append", cmdline]
    if incoming:
        argv += ["-incoming", incoming]
    return argv


def qemu_wait_migration(q, timeout=300):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        info = q.cmd("query-migrate")
        status = info.get("status")
        if status == "completed":
            return info
        if status in ("failed", "cancelled"):
            raise RuntimeError("QEMU migration %s: %s" % (status, info.get("error-desc", "")))
        time.sleep(0.002)
    raise RuntimeError("QEMU migration did not complete in %d s" % timeout)


def qemu_tune(q):
    q.cmd("migrate-set-parameters", **{"max-bandwidth": 10 << 30})
    if QEMU_DOWNTIME_LIMIT_MS:
        q.cmd("migrate-set-parameters", **{"downtime-limit": int(QEMU_DOWNTIME_LIMIT_MS)})


def ready_marker(cmdline):
    return b"dirty: pass" if "dirty" in cmdline else b"minios> "


def qemu_migrate_once(minios, cmdline, tmp):
    src_log, dst_log = os.path.join(tmp, "qsrc.log"), os.path.join(tmp, "qdst.log")
    src_qmp, dst_qmp = os.path.join(tmp, "qsrc.qmp"), os.path.join(tmp, "qdst.qmp")
    port = free_port()
    procs = []
    try:
        procs.append(subprocess.Popen(qemu_argv(minios, cmdline, src_log, src_qmp),
                                      stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(qemu_argv(minios, cmdline, dst_log, dst_qmp,
                                                "tcp:127.0.0.1:%d" % port),
                                      stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_file(src_log, ready_marker(cmdline))
        src, dst = QMP(src_qmp), QMP(dst_qmp)
        qemu_tune(src)
        src.cmd("migrate", uri="tcp:127.0.0.1:%d" % port)
        info = qemu_wait_migration(src)
        # The guest runs on at the destination.
        end = time.monotonic() + 30
        while dst.cmd("query-status")["status"] != "running":
            if time.monotonic() > end:
                raise RuntimeError("QEMU destination never ran")
            time.sleep(0.005)
        if "dirty" in cmdline:
            wait_file(dst_log, b"dirty: pass", 30)
        # QEMU's downtime is in whole ms; the STOP event at the source and
        # the RESUME at the destination are stamped to the microsecond.
        stop, resume = src.event_time("STOP"), dst.event_time("RESUME")
        src.close()
        dst.close()
        if stop is None or resume is None:
            raise RuntimeError("QEMU sent no STOP/RESUME events")
        return float(info["downtime"]), float(info["total-time"]), (resume - stop) * 1000
    finally:
        for p in procs:
            p.kill()
            p.wait()


def qemu_save_restore_once(minios, tmp):
    log, qmp, img = os.path.join(tmp, "qsave.log"), os.path.join(tmp, "qsave.qmp"), os.path.join(tmp, "q.img")
    if os.path.exists(img):
        os.unlink(img)
    p = subprocess.Popen(qemu_argv(minios, "", log, qmp), stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_file(log, b"minios> ")
        q = QMP(qmp)
        qemu_tune(q)
        t0 = time.monotonic()
        q.cmd("stop")
        q.cmd("migrate", uri="exec:cat > %s" % img)
        qemu_wait_migration(q)
        save_ms = (time.monotonic() - t0) * 1000
        q.close()
    finally:
        p.kill()
        p.wait()
    log2, qmp2 = os.path.join(tmp, "qrest.log"), os.path.join(tmp, "qrest.qmp")
    t0 = time.monotonic()
    p = subprocess.Popen(qemu_argv(minios, "", log2, qmp2, "exec:cat %s" % img),
                         stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        q = QMP(qmp2)
        end = time.monotonic() + 60
        # Saved stopped, it loads stopped (the runstate travels): cont.
        while True:
            status = q.cmd("query-status")["status"]
            if status == "running":
                break
            if status in ("paused", "postmigrate", "prelaunch"):
                q.cmd("cont")
            if time.monotonic() > end:
                raise RuntimeError("QEMU restore never ran (status %s)" % status)
            time.sleep(0.001)
        restore_ms = (time.monotonic() - t0) * 1000
        q.close()
    finally:
        p.kill()
        p.wait()
    return save_ms, restore_ms, file_size(img)


class LodgeError(Exception):
    pass


def lodge_run(argv, timeout=300):
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    if r.returncode:
        msg = (r.stderr or r.stdout).decode(errors="replace").strip().splitlines()
        raise LodgeError("`%s` exited %d: %s" % (" ".join(argv[3:]), r.returncode, msg[0] if msg else ""))
    return r.stdout.decode(errors="replace")


def lodge_root(tmp, tag, name, minios, cmdline):
    root = os.path.join(tmp, tag)
    doms = os.path.join(root, "etc/lodge/domains")
    os.makedirs(doms, exist_ok=True)
    secret = os.path.join(tmp, "secret")
    if not os.path.exists(secret):
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(24).hex() + "\n")
    with open(os.path.join(root, "etc/lodge/lodge.conf"), "w") as f:
        f.write('migration_secret_file = "%s"\n' % secret)
    with open(os.path.join(doms, name + ".cfg"), "w") as f:
        f.write('name = "%s"\nmemory = %d\nvcpus = 1\nkernel = "%s"\n' % (name, MEM_MIB, minios))
        if cmdline:
            f.write('cmdline = "%s"\n' % cmdline)
    return root


def lodge_destroy(lodge, root, name):
    subprocess.run([lodge, "--root", root, "destroy", name], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def lodge_migrate_once(lodge, minios, cmdline, tmp, i):
    name = "mig%d" % i
    src = lodge_root(tmp, "lsrc%d" % i, name, minios, cmdline)
    dst = lodge_root(tmp, "ldst%d" % i, name, minios, cmdline)
    port = free_port()
    recv = None
    try:
        lodge_run([lodge, "--root", src, "create", name])
        wait_file(os.path.join(src, "run/lodge", name, "console.log"), ready_marker(cmdline))
        recv = subprocess.Popen([lodge, "--root", dst, "migrate-receive", "--listen", "127.0.0.1:%d" % port,
                                 "--once"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        end = time.monotonic() + 10
        while not listening(port):
            if recv.poll() is not None:
                err = recv.stderr.read().decode(errors="replace").strip().splitlines()
                raise LodgeError("`migrate-receive` exited %d: %s" % (recv.returncode, err[0] if err else ""))
            if time.monotonic() > end:
                raise LodgeError("`migrate-receive` never listened on 127.0.0.1:%d" % port)
            time.sleep(0.005)
        out = lodge_run([lodge, "--root", src, "migrate", name, "127.0.0.1:%d" % port])
        m = None
        for line in out.splitlines():
            m = MIGRATED_RE.search(line) or m
        if not m:
            raise LodgeError("`migrate` printed no 'migrated ... downtime ...' line: %r" % out[-200:])
        rout, rerr = recv.communicate(timeout=60)
        if b"received " + name.encode() not in rout:
            raise LodgeError("`migrate-receive` did not print 'received %s' (exit %d): %s" % (
                name, recv.returncode, rerr.decode(errors="replace").strip()[:200]))
        if "dirty" in cmdline:
            wait_file(os.path.join(dst, "run/lodge", name, "console.log"), b"dirty: pass", 30)
        return float(m.group(4)), float(m.group(3)), None
    finally:
        if recv and recv.poll() is None:
            recv.kill()
            recv.wait()
        lodge_destroy(lodge, src, name)
        lodge_destroy(lodge, dst, name)


def lodge_save_restore_once(lodge, minios, tmp, i):
    name = "sav%d" % i
    root = lodge_root(tmp, "lsave%d" % i, name, minios, "")
    img = os.path.join(tmp, "l%d.img" % i)
    try:
        lodge_run([lodge, "--root", root, "create", name])
        wait_file(os.path.join(root, "run/lodge", name, "console.log"), b"minios> ")
        t0 = time.monotonic()
        lodge_run([lodge, "--root", root, "save", name, img])
        save_ms = (time.monotonic() - t0) * 1000
        t0 = time.monotonic()
        lodge_run([lodge, "--root", root, "restore", img])
        restore_ms = (time.monotonic() - t0) * 1000
        return save_ms, restore_ms, file_size(img)
    finally:
        lodge_destroy(lodge, root, name)


def stats(values):
    return min(values), statistics.median(values), max(values)


def measure(fn):
    """fn(run) for each of RUNS runs, or the first error's text."""
    out = []
    try:
        for i in range(RUNS):
            out.append(fn(i))
    except (LodgeError, RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        return str(e)
    return out


def fmt(values):
    return "%.1f / %.1f / %.1f" % stats(values)


def ratio(a, b):
    return "%.2f" % (statistics.median(a) / statistics.median(b)) if statistics.median(b) else "-"


def main():
    lodge, minios = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="lodge-bench-mig.")
    mig, sr = {}, {}
    try:
        for label, cmdline in WORKLOADS:
            mig[("qemu", label)] = measure(lambda i: qemu_migrate_once(minios, cmdline, tmp))
            mig[("lodge", label)] = measure(lambda i: lodge_migrate_once(lodge, minios, cmdline, tmp, i))
        sr["qemu"] = measure(lambda i: qemu_save_restore_once(minios, tmp))
        sr["lodge"] = measure(lambda i: lodge_save_restore_once(lodge, minios, tmp, i))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("Live migration of Lodge Mini-OS (%d MiB, 1 vCPU) over loopback, %d runs each; "
          "min / median / max; ratio = median / QEMU %s's median; downtime and total time as each "
          "VMM reports them. QEMU: max-bandwidth 10 GiB/s, "
          "downtime-limit %s\n" % (MEM_MIB, RUNS, QEMU_MACHINE,
                                   QEMU_DOWNTIME_LIMIT_MS + " ms" if QEMU_DOWNTIME_LIMIT_MS else "300 ms (default)"))
    print("| guest | VMM | downtime (ms) | ratio | total migration time (ms) | ratio "
          "| source STOP to destination RESUME, QMP event stamps (ms) |")
    print("|---|---|---|---|---|---|---|")
    for label, _ in WORKLOADS:
        q = mig[("qemu", label)]
        for vmm in ("lodge", "qemu"):
            r = mig[(vmm, label)]
            name = "lodge" if vmm == "lodge" else "QEMU " + QEMU_MACHINE
            if isinstance(r, str):
                print("| %s | %s | error: %s | | | | |" % (label, name, r.replace("|", "/")))
                continue
            down, total = [x[0] for x in r], [x[1] for x in r]
            qd = [x[0] for x in q] if not isinstance(q, str) else None
            qt = [x[1] for x in q] if not isinstance(q, str) else None
            ev = [x[2] for x in r if x[2] is not None]
            print("| %s | %s | %s | %s | %s | %s | %s |" % (label, name, fmt(down), ratio(down, qd) if qd else "-",
                                                            fmt(total), ratio(total, qt) if qt else "-",
                                                            fmt(ev) if ev else "-"))

    print("\nSave and restore of the idle guest (%d MiB) to a file, %d runs each; min / median / max\n" % (
        MEM_MIB, RUNS))
    print("| VMM | save (ms) | ratio | restore (ms) | ratio | file (MiB) |")
    print("|---|---|---|---|---|---|")
    q = sr["qemu"]
    for vmm in ("lodge", "qemu"):
        r = sr[vmm]
        name = "lodge" if vmm == "lodge" else "QEMU " + QEMU_MACHINE
        if isinstance(r, str):
            print("| %s | error: %s | | | | |" % (name, r.replace("|", "/")))
            continue
        s, rs = [x[0] for x in r], [x[1] for x in r]
        ok = not isinstance(q, str)
        print("| %s | %s | %s | %s | %s | %.1f |" % (
            name, fmt(s), ratio(s, [x[0] for x in q]) if ok else "-", fmt(rs),
            ratio(rs, [x[1] for x in q]) if ok else "-", statistics.median(x[2] for x in r) / 1048576))

    def target(label, limit):
        r, q = mig[("lodge", label)], mig[("qemu", label)]
        if isinstance(r, str):
            return "%s downtime under %d ms and below QEMU's: not measured (lodge failed)" % (label, limit)
        d = statistics.median(x[0] for x in r)
        qd = statistics.median(x[0] for x in q) if not isinstance(q, str) else None
        met = d < limit and (qd is None or d < qd)
        return "%s downtime under %d ms and below QEMU's: %.1f ms vs QEMU %s (%s)" % (
            label, limit, d, "%.1f ms" % qd if qd is not None else "-", "met" if met else "NOT met")

    print("\nTargets: %s; %s" % (target("idle", 5), target("dirty %d" % DIRTY_MIB, 30)))


if __name__ == "__main__":
    main()
