#!/usr/bin/env python3
"""Density benchmark: how many idle Lodge Mini-OS guests of 256 MiB fit on
this host before MemAvailable would drop under 2 GiB, with and without
ballooning them down to 64 MiB; lodge-hyp's own memory per guest; QEMU
side by side (-M pc with a virtio-balloon-pci, ballooned through QMP, the
same Mini-OS ELF booted as PVH with -kernel; QEMU's balloon has no MSI-X,
so a key on the console wakes Mini-OS to follow the new target).

GUESTS guests (default 20) are started per VMM and measured in three states:
  idle      booted, at the prompt, nothing touched
  touched   every guest has written 240 MiB once (touch 240): what a guest
            that used its memory at some point costs without a balloon
  ballooned the same guests after mem-set 64 (QMP balloon for QEMU)
For each: host memory per guest (the fall of MemAvailable / GUESTS), the VMM's
own memory per guest (process Rss minus the Rss of its guest-RAM mapping,
from /proc/PID/smaps) and the guest's own used memory (total - free from
its balloon stats, lodge only).  The count of guests that fit is
EXTRAPOLATED from GUESTS guests: (MemAvailable at start - 2 GiB) / host
memory per guest; it is printed as such.  MemAvailable moves with
everything else on the host: with few guests, or other work running, the
Rss columns (the VMM's own, guest RAM) are the steadier figures.
"""
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

GUESTS = int(os.environ.get("GUESTS", "20"))
MEM_MIB = 256
BALLOON_MIB = 64
TOUCH_MIB = 240
FLOOR_MIB = 2048
PROMPT = b"minios> "


def mem_available_kib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    raise RuntimeError("no MemAvailable")


def settle():
    """Let page freeing and the host's own bookkeeping catch up."""
    time.sleep(2)


def smaps_rss(pid, ram_kib):
    """(total Rss, Rss of the guest-RAM mapping) of a process, in KiB."""
    total = guest = 0
    size = None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            if line.startswith("Size:"):
                size = int(line.split()[1])
            elif line.startswith("Rss:"):
                rss = int(line.split()[1])
                total += rss
                if size == ram_kib:
                    guest += rss
    return total, guest


class Lodge:
    name = "lodge-hyp"

    def __init__(self, hyp, minios):
        self.hyp, self.minios = hyp, minios
        self.dir = tempfile.mkdtemp(prefix="lodge-density.")
        self.pids = []

    def ctl(self, i, cmd):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect("%s/g%d/control" % (self.dir, i))
        s.sendall(("lodge/1 %s\n" % cmd).encode())
        out = b""
        while not (out.startswith(b"error") or out == b"ok\n" and cmd != "status" or out.endswith(b"\n\n")):
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        s.close()
        text = out.decode()
        if text.startswith("error"):
            raise RuntimeError("g%d %s: %s" % (i, cmd, text.strip()))
        return dict(l.split(" ", 1) for l in text.splitlines()[1:] if " " in l)

    def console_log(self, i):
        try:
            with open("%s/g%d/console.log" % (self.dir, i), "rb") as f:
                return f.read()
        except OSError:
            return b""

    def wait_console(self, i, pattern, count=1, secs=120):
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            if self.console_log(i).count(pattern) >= count:
                return
            time.sleep(0.1)
        raise RuntimeError("g%d: %r not seen; console: %r" % (i, pattern, self.console_log(i)[-300:]))

    def start(self, i):
        subprocess.run([self.hyp, "--kernel", self.minios, "--memory", str(MEM_MIB), "--vcpus", "1",
                        "--name", "g%d" % i, "--runtime-dir", self.dir, "--detach"], check=True,
                       stdin=subprocess.DEVNULL)
        self.wait_console(i, PROMPT)
        self.pids.append(int(self.ctl(i, "status")["pid"]))

    def touch(self, i):
        # Through the shell's command line as typed on the console: the
        # control socket's console stream.
        s = socket.socket(socket.AF_UNIX)
        s.connect("%s/g%d/control" % (self.dir, i))
        s.sendall(b"lodge/1 console\n")
        time.sleep(0.2)
        s.sendall(b"touch %d\r" % TOUCH_MIB)
        self.wait_console(i, b"touch: %d MiB" % TOUCH_MIB)
        s.close()

    def balloon(self, i):
        self.ctl(i, "mem-set %d" % BALLOON_MIB)
        self.wait_console(i, b"balloon: target %d MiB, usable %d MiB" % (BALLOON_MIB, BALLOON_MIB))

    def guest_used_kib(self, i):
        st = self.ctl(i, "status")
        if "guest_total_kib" not in st:
            return None
        return int(st["guest_total_kib"]) - int(st["guest_free_kib"])

    def stop(self):
        for i in range(len(self.pids)):
            try:
                self.ctl(i, "destroy")
            except (OSError, RuntimeError):
                pass
        for pid in self.pids:
            for _ in range(100):
                if not os.path.exists("/proc/%d" % pid):
                    break
                time.sleep(0.05)
        self.pids = []
        shutil.rmtree(self.dir, ignore_errors=True)


class Qemu:
    name = "qemu pc"

    def __init__(self, hyp, minios):
        self.minios = minios
        self.dir = tempfile.mkdtemp(prefix="qemu-density.")
        self.procs = []
        self.out = []

    def start(self, i):
        qmp = "%s/q%d.qmp" % (self.dir, i)
        p = subprocess.Popen(["qemu-system-x86_64", "-M", "pc", "-accel", "kvm", "-cpu", "host,-arch-capabilities",
                              "-m", str(MEM_MIB), "-smp", "1", "-nographic", "-nodefaults",
                              "-serial", "stdio", "-no-reboot", "-kernel", self.minios,
                              "-device", "virtio-balloon-pci", "-qmp", "unix:%s,server=on,wait=off" % qmp],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        self.out.append(b"")
        self.wait_console(i, PROMPT)
        self.pids = [q.pid for q in self.procs]

    def wait_console(self, i, pattern, count=1, secs=120):
        p, deadline = self.procs[i], time.monotonic() + secs
        fd = p.stdout.fileno()
        while self.out[i].count(pattern) < count:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise RuntimeError("q%d: %r not seen; console: %r" % (i, pattern, self.out[i][-300:]))
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError("q%d exited; console: %r" % (i, self.out[i][-300:]))
            self.out[i] += chunk

    def touch(self, i):
        self.procs[i].stdin.write(b"touch %d\r" % TOUCH_MIB)
        self.procs[i].stdin.flush()
        self.wait_console(i, b"touch: %d MiB" % TOUCH_MIB)

    def balloon(self, i):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect("%s/q%d.qmp" % (self.dir, i))
        f = s.makefile("rw")
        f.readline()                                    # greeting
        for cmd in ({"execute": "qmp_capabilities"},
                    {"execute": "balloon", "arguments": {"value": BALLOON_MIB << 20}}):
            f.write(json.dumps(cmd) + "\n")
            f.flush()
            reply = json.loads(f.readline())
            while "event" in reply:
                reply = json.loads(f.readline())
            if "error" in reply:
                raise RuntimeError("q%d: QMP %s: %s" % (i, cmd["execute"], reply["error"]))
        s.close()
        # QEMU's virtio-balloon-pci has no MSI-X, and Mini-OS takes no INTx:
        # a key on the console wakes its idle loop, which then follows the
        # new target (lodge-hyp's balloon interrupts through MSI-X instead).
        self.procs[i].stdin.write(b"\r")
        self.procs[i].stdin.flush()
        self.wait_console(i, b"balloon: target %d MiB, usable %d MiB" % (BALLOON_MIB, BALLOON_MIB))

    def guest_used_kib(self, i):
        return None

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()
        self.procs = []
        shutil.rmtree(self.dir, ignore_errors=True)


def measure(vmm, avail0):
    settle()
    avail = mem_available_kib()
    own = guest_ram = 0
    for pid in vmm.pids:
        total, guest = smaps_rss(pid, MEM_MIB * 1024)
        own += total - guest
        guest_ram += guest
    used = [vmm.guest_used_kib(i) for i in range(GUESTS)]
    used = [u for u in used if u is not None]
    return {
        "host_per_guest": (avail0 - avail) / GUESTS / 1024,
        "own_per_guest": own / GUESTS / 1024,
        "guest_ram_per_guest": guest_ram / GUESTS / 1024,
        "guest_used": sum(used) / len(used) / 1024 if used else None,
    }


def run(vmm):
    settle()
    avail0 = mem_available_kib()
    rows = {}
    try:
        for i in range(GUESTS):
            vmm.start(i)
        rows["idle"] = measure(vmm, avail0)
        for i in range(GUESTS):
            vmm.touch(i)
        rows["touched"] = measure(vmm, avail0)
        for i in range(GUESTS):
            vmm.balloon(i)
        rows["ballooned to %d MiB" % BALLOON_MIB] = measure(vmm, avail0)
    finally:
        vmm.stop()
    return avail0, rows


def main():
    hyp, minios = sys.argv[1], sys.argv[2]
    need = GUESTS * (MEM_MIB + 16) * 1024 + FLOOR_MIB * 1024 * 2
    if mem_available_kib() < need:
        print("density: skipped: %d guests of %d MiB need about %d MiB available, the host has %d MiB"
              % (GUESTS, MEM_MIB, need // 1024, mem_available_kib() // 1024))
        return
    results = []
    for cls in (Lodge, Qemu):
        vmm = cls(hyp, minios)
        try:
            results.append((vmm.name,) + run(vmm))
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            print("density: %s failed: %s\n" % (vmm.name, e))
    print("Density of Lodge Mini-OS guests (%d MiB each, 1 vCPU), %d guests per VMM; "
          "'fit' is EXTRAPOLATED from those %d to the host's MemAvailable at the start "
          "less a %d MiB floor.\n" % (MEM_MIB, GUESTS, GUESTS, FLOOR_MIB))
    print("| VMM | state | host memory per guest (MiB) | guests that fit (extrapolated) "
          "| VMM's own memory per guest (MiB) | guest RAM resident per guest (MiB) "
          "| guest's own used memory (MiB) |")
    print("|---|---|---|---|---|---|---|")
    own = {}
    for name, avail0, rows in results:
        for state, r in rows.items():
            # With few guests the host's own noise can outweigh them: no count then.
            fit = ("%d" % ((avail0 / 1024 - FLOOR_MIB) / r["host_per_guest"])
                   if r["host_per_guest"] > 0.1 else "- (below the host's noise)")
            print("| %s | %s | %.2f | %s | %.2f | %.2f | %s |" % (
                name, state, r["host_per_guest"], fit, r["own_per_guest"], r["guest_ram_per_guest"],
                "%.2f" % r["guest_used"] if r["guest_used"] is not None else "-"))
            own.setdefault(name, []).append(r["own_per_guest"])
    if "lodge-hyp" in own:
        lodge_own = max(own["lodge-hyp"])
        idle = results[0][2]["idle"]
        line = "\nTargets: lodge-hyp's own memory under 3 MiB a guest: %.2f MiB at most (%s)" % (
            lodge_own, "met" if lodge_own < 3 else "NOT met")
        if idle["guest_used"] is not None:
            line += ("; idle-guest host memory under the guest's own used memory + 5 MiB: "
                     "%.2f vs %.2f + 5 MiB (%s)" % (idle["host_per_guest"], idle["guest_used"],
                                                  "met" if idle["host_per_guest"] < idle["guest_used"] + 5
                                                  else "NOT met"))
        if "qemu pc" in own:
            line += "; own memory per guest vs QEMU pc: %.2f x" % (
                max(own["lodge-hyp"]) / max(own["qemu pc"]))
        print(line)


if __name__ == "__main__":
    main()
