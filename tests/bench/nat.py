#!/usr/bin/env python3
"""A NAT network's frame rate against the same link bridged, in the same
run.  Worlds of network namespaces of the benchmark's own, all the same
shape, a "guest" endpoint, a "host" in the middle and an "internet"
endpoint joined by veth pairs:

  NAT      guest 10.77.0.2 -- host: bridge 10.77.0.1, routed and
           masqueraded by Lodge's rules (netfilter_net_add, nat) out of
           its uplink 192.0.2.1 -- internet 192.0.2.2
  routed   the same with Lodge's routed rules (no masquerade, and no
           conntrack: no rule of that mode asks for it); internet routes
           10.77.0.0/24 back
  forward  the same with no nftables at all: what IP forwarding alone
           costs against bridging
  bridged  guest 192.0.2.3 -- host: one bridge holding the guest's veth
           and the uplink -- internet 192.0.2.2 (the guest straight on
           the link, as a vif with bridge= is)

Two measures, the worlds taking turns in every round:
1. CPU per frame, which the rest of a shared machine's load hardly moves:
   the guest sends N UDP frames (64 and 1472-byte payloads) to a socket in
   internet that never reads; a veth hands each frame on in the sender's
   own context (softirq at the end of its send), so the system time the
   sender is charged (tick accounting, without IRQ time accounting) is the
   whole path's, up to the internet's socket.  1 / that = frames per
   second one CPU can carry; NAT / bridged is the ratio of those.
2. iperf3 UDP as fast as it goes for SECS, datagrams the internet
   received per second: the rate a user would see, but on a loaded
   2-core machine single rounds swung 0.5x-2x.
The guest is a veth endpoint (a kernel stand-in for a guest): Mini-OS
guests on a real network (network.c) can replace it.

usage: nat.py NETFILTER_DRIVER (build/tests/test-lib-netfilter)"""
import json
import os
import shutil
import statistics
import subprocess
import sys

SECS = int(os.environ.get("NAT_SECS", "2"))
ROUNDS = int(os.environ.get("NAT_ROUNDS", "5"))
FRAMES = int(os.environ.get("NAT_FRAMES", "200000"))
SIZES = (64, 1472)
KINDS = ("nat", "routed", "forward", "bridged")
PID = os.getpid()
# iperf3's sender (and with it the whole path) on one CPU, its receiver
# on another, the same in every run.
AFFINITY = (["-A", "0"], ["-A", "1"]) if (os.cpu_count() or 1) >= 2 else ([], [])
IPERF = shutil.which("iperf3")

SENDER = r"""
import resource, socket, sys
n, size = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("192.0.2.2", 9))
buf, send = bytes(size), s.send
r0 = resource.getrusage(resource.RUSAGE_SELF)
for _ in range(n):
    try:
        send(buf)
    except OSError:
        pass
r1 = resource.getrusage(resource.RUSAGE_SELF)
print((r1.ru_stime - r0.ru_stime) / n * 1e6)
"""
# internet's socket for them: bound, never read (its queue full, each
# frame is dropped there, the same in every world).
SINK = "import socket, sys\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n" \
       "s.bind(('0.0.0.0', 9))\nprint('bound', flush=True)\nsys.stdin.read()\n"


def sh(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


class World:
    """guest, host and internet namespaces of one kind."""

    def __init__(self, kind, driver):
        self.kind, self.sink = kind, None
        self.ns = {r: "lodge-bench-%s-%s-%d" % (kind, r, PID) for r in ("guest", "host", "inet")}
        for n in self.ns.values():
            sh("ip", "netns", "add", n)
            self.run(n, "ip", "link", "set", "lo", "up")
        g, h, i = self.ns["guest"], self.ns["host"], self.ns["inet"]
        self.run(h, "ip", "link", "add", "br0", "type", "bridge")
        self.run(h, "ip", "link", "add", "gh", "type", "veth", "peer", "name", "g0", "netns", g)
        self.run(h, "ip", "link", "add", "up0", "type", "veth", "peer", "name", "in0", "netns", i)
        self.run(h, "ip", "link", "set", "gh", "master", "br0", "up")
        self.run(i, "ip", "addr", "add", "192.0.2.2/24", "dev", "in0")
        self.run(i, "ip", "link", "set", "in0", "up")
        if kind == "bridged":
            self.run(h, "ip", "link", "set", "up0", "master", "br0", "up")
            self.run(g, "ip", "addr", "add", "192.0.2.3/24", "dev", "g0")
            self.run(g, "ip", "link", "set", "g0", "up")
        else:
            self.run(h, "ip", "addr", "add", "10.77.0.1/24", "dev", "br0")
            self.run(h, "ip", "addr", "add", "192.0.2.1/24", "dev", "up0")
            self.run(h, "ip", "link", "set", "up0", "up")
            self.run(g, "ip", "addr", "add", "10.77.0.2/24", "dev", "g0")
            self.run(g, "ip", "link", "set", "g0", "up")
            self.run(g, "ip", "route", "add", "default", "via", "10.77.0.1")
            self.run(h, driver, "forward-on")
            if kind != "nat":
                self.run(i, "ip", "route", "add", "10.77.0.0/24", "via", "192.0.2.1")
            if kind in ("nat", "routed"):
                self.run(h, driver, "add", "bench", "br0", "10.77.0.0/24", kind)
        self.run(h, "ip", "link", "set", "br0", "up")
        self.sink = subprocess.Popen(["ip", "netns", "exec", i, sys.executable, "-c", SINK],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.sink.stdout.readline()          # bound: no fixed wait
        # the path is up once a ping crosses it (ARP, the bridge's ports forwarding)
        for _ in range(50):
            if subprocess.run(["ip", "netns", "exec", g, "ping", "-c", "1", "-W", "1", "192.0.2.2"],
                              capture_output=True).returncode == 0:
                break

    @staticmethod
    def run(ns, *argv):
        return sh("ip", "netns", "exec", ns, *argv)

    def cost(self, size):
        """Kernel microseconds per frame of FRAMES sent, the whole path's."""
        return float(self.run(self.ns["guest"], sys.executable, "-c", SENDER, str(FRAMES), str(size)))

    def rate(self, size):
        """Datagrams/s the internet received of a SECS-long iperf3 UDP flood."""
        srv = subprocess.Popen(["ip", "netns", "exec", self.ns["inet"], "iperf3", "-s", "-1", "-p", "5201",
                                "--forceflush"] + AFFINITY[1],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            for line in srv.stdout:          # ready once it listens: no fixed wait
                if "listening" in line:
                    break
            out = self.run(self.ns["guest"], "iperf3", *AFFINITY[0], "-c", "192.0.2.2", "-p", "5201", "-u",
                           "-b", "0", "-l", str(size), "-t", str(SECS), "-J")
        finally:
            srv.kill()
            srv.wait()
        s = json.loads(out)["end"]["sum"]
        return (s["packets"] - s["lost_packets"]) / s["seconds"]

    def close(self):
        if self.sink:
            self.sink.kill()
            self.sink.wait()
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "del", n])


def main():
    driver = os.path.abspath(sys.argv[1])
    worlds = []
    cost = {k: {s: [] for s in SIZES} for k in KINDS}
    rate = {k: {s: [] for s in SIZES} for k in KINDS}
    try:
        for k in KINDS:
            worlds.append(World(k, driver))
        for r in range(ROUNDS):
            turn = worlds[r % len(worlds):] + worlds[:r % len(worlds)]
            for size in SIZES:
                for w in turn:
                    cost[w.kind][size].append(w.cost(size))
                for w in turn if IPERF else ():
                    rate[w.kind][size].append(w.rate(size))
    finally:
        for w in worlds:
            w.close()

    def med(d, k, size):
        return statistics.median(d[k][size])

    def round_ratios(d, a, b, size):
        """a / b in each round (the two ran within seconds)."""
        return [x / y for x, y in zip(d[a][size], d[b][size]) if y]

    print("A NAT network (Lodge's nftables rules) against the same veth guest bridged straight onto "
          "the link; routed (Lodge's rules, no NAT) and plain IP forwarding (no nftables) beside; "
          "%d rounds, the worlds taking turns: medians\n" % ROUNDS)
    print("CPU per frame, the whole path's, of %d UDP frames (frames/s = what one CPU carries):\n" % FRAMES)
    print("| UDP payload | NAT | routed | forward, no rules | bridged | NAT / bridged |")
    print("|---|---|---|---|---|---|")
    met = True
    for size in SIZES:
        nb = med(cost, "bridged", size) / med(cost, "nat", size)
        met = met and nb >= 0.9
        print("| %d B | %s | %.2f |" % (size, " | ".join("%.2f us, %d frames/s" % (med(cost, k, size),
                                                                               1e6 / med(cost, k, size))
                                                        for k in KINDS), nb))
    for size in SIZES:
        print("- %d B, per frame over the rounds (min-max): %s" % (size, "; ".join(
            "%s %.2f-%.2f us" % (k, min(cost[k][size]), max(cost[k][size])) for k in KINDS)))
    print("\nTarget: NAT at least 0.9x bridged: %s" % ("met" if met else "NOT met"))
    if not IPERF:
        print("\niperf3 not installed (make deps): no iperf3 rates")
        return
    print("\niperf3 UDP for %d s, datagrams received per second (loaded machine: see the ranges):\n" % SECS)
    print("| UDP payload | NAT | routed | forward, no rules | bridged | NAT / bridged, median of rounds |")
    print("|---|---|---|---|---|---|")
    for size in SIZES:
        print("| %d B | %s | %.2f |" % (size, " | ".join("%d" % med(rate, k, size) for k in KINDS),
                                        statistics.median(round_ratios(rate, "nat", "bridged", size))))
    print()
    for size in SIZES:
        rs = round_ratios(rate, "nat", "bridged", size)
        print("- %d B: NAT / bridged per round %.2f-%.2f" % (size, min(rs), max(rs)))


if __name__ == "__main__":
    main()
