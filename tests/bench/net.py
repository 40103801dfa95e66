#!/usr/bin/env python3
"""virtio-net benchmark, inside a network namespace made for it: Mini-OS
sends numbered frames (64 and 1500 bytes) as fast as its queue takes them
to a bridge, and counts frames a host-side generator floods at it; under
lodge-hyp and under QEMU's virtio-net-pci on a tap (no vhost-net on these
machines, so both are user space), in the same run.  The two run in turn
ROUNDS times (NET_ROUNDS, 3): the table gives medians, the ranges follow."""
import os
import re
import socket
import subprocess
import sys
import threading
import time

NS = "lodge-bench-net-%d" % os.getpid()
COUNT = int(os.environ.get("NET_FRAMES", "20000"))
RECV_SECS = 5
ROUNDS = int(os.environ.get("NET_ROUNDS", "3"))


def sh(*argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, **kw)


def in_ns(*argv):
    return ["ip", "netns", "exec", NS] + list(argv)


def flood(seconds, stop):
    """Send test frames onto the bridge from the host side, as fast as possible."""
    pid = os.fork()
    if pid == 0:
        os.execvp("ip", in_ns(sys.executable, "-c", (
            "import socket,time\n"
            "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
            "s.bind(('lbr0',0))\n"
            "f=b'\\xff'*6+b'\\x02\\x00\\x00\\x00\\x00\\x99'+b'\\x88\\xb5'+bytes(46)\n"
            "end=time.time()+%d\n"
            "while time.time()<end:\n"
            "  try: s.send(f)\n"
            "  except OSError: pass\n" % seconds)))
    return pid


def run_guest(argv, cmds, tap):
    """Boot Mini-OS with the given VMM argv; feed it commands; collect output."""
    proc = subprocess.Popen(in_ns(*argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    out = b""
    deadline = time.time() + 60
    while b"minios> " not in out and time.time() < deadline:
        out += os.read(proc.stdout.fileno(), 65536)
    # QEMU's tap is attached here; lodge-hyp attached its own over netlink.
    if tap:
        sh(*in_ns("ip", "link", "set", tap, "master", "lbr0", "up"))
    time.sleep(0.5)
    res = {}
    for size in (64, 1500):
        proc.stdin.write(b"net-send %d %d\n" % (COUNT, size))
        proc.stdin.flush()
        while not re.search(rb"net-send: %d frames of %d bytes in \d+ us: (\d+) frames/s" % (COUNT, size), out):
            out += os.read(proc.stdout.fileno(), 65536)
        res["tx%d" % size] = int(re.findall(rb"net-send: %d frames of %d bytes in \d+ us: (\d+)" % (COUNT, size), out)[-1])
    gen = flood(RECV_SECS + 2, None)
    time.sleep(0.5)
    proc.stdin.write(b"net-recv %d\n" % RECV_SECS)
    proc.stdin.flush()
    while not re.search(rb"net-recv: \d+ frames in \d+ s: (\d+) frames/s", out):
        out += os.read(proc.stdout.fileno(), 65536)
    res["rx"] = int(re.findall(rb"net-recv: \d+ frames in \d+ s: (\d+) frames/s", out)[-1])
    os.waitpid(gen, 0)
    proc.stdin.write(b"poweroff\n")
    proc.stdin.flush()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()     # its tap gone before the next round makes one
    return res


def main():
    hyp, minios = sys.argv[1], sys.argv[2]
    sh("ip", "netns", "add", NS)
    try:
        sh(*in_ns("ip", "link", "set", "lo", "up"))
        sh(*in_ns("ip", "link", "add", "lbr0", "type", "bridge"))
        sh(*in_ns("ip", "link", "set", "lbr0", "up"))
        runs = {"lodge": [], "qemu": []}
        for _ in range(ROUNDS):
            runs["lodge"].append(run_guest([hyp, "--kernel", minios, "--memory", "64",
                                            "--net", "tap=lvif0,bridge=lbr0"], None, None))
            runs["qemu"].append(run_guest(["qemu-system-x86_64", "-accel", "kvm", "-M", "pc",
                                           "-cpu", "host,-arch-capabilities", "-m", "64", "-nographic",
                                           "-nodefaults", "-serial", "stdio", "-no-reboot", "-netdev",
                                           "tap,id=n0,ifname=qvif0,script=no,downscript=no,vhost=off",
                                           "-device", "virtio-net-pci,netdev=n0,disable-legacy=on,"
                                           "mac=02:4c:00:00:00:51", "-kernel", minios], None, "qvif0"))
    finally:
        subprocess.run(["ip", "netns", "del", NS])
    lodge, qemu = ({k: sorted(r[k] for r in runs[w])[ROUNDS // 2] for k in ("tx64", "tx1500", "rx")}
                   for w in ("lodge", "qemu"))
    print("virtio-net, Mini-OS on a tap on a bridge (network namespace); %d frames per transmit run, "
          "receive = a host-side flood of 64-byte frames for %d s; median of %d rounds\n"
          % (COUNT, RECV_SECS, ROUNDS))
    print("| direction | lodge-hyp | QEMU virtio-net-pci | lodge / QEMU |")
    print("|---|---|---|---|")
    for key, label in (("tx64", "guest to bridge, 64 B"), ("tx1500", "guest to bridge, 1500 B"),
                       ("rx", "host into guest, 64 B")):
        l, q = lodge[key], qemu[key]
        extra = " (%.0f Mbit/s)" % (l * 1500 * 8 / 1e6) if key == "tx1500" else ""
        print("| %s | %d frames/s%s | %d frames/s | %.2f |" % (label, l, extra, q, l / q if q else 0))
    met = all(lodge[k] >= qemu[k] for k in ("tx64", "tx1500", "rx"))
    print("\nTarget: at least QEMU's rates: %s" % ("met" if met else "NOT met"))
    print("\nRanges over the rounds (min-max), frames/s:")
    for key in ("tx64", "tx1500", "rx"):
        print("- %s: %s" % (key, "; ".join("%s %d-%d" % (w, min(r[key] for r in runs[w]), max(r[key] for r in runs[w]))
                                         for w in ("lodge", "qemu"))))


if __name__ == "__main__":
    main()
