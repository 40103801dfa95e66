#!/usr/bin/env python3
"""A NAT network's frame rate against the same link bridged, in the same
run.  Two worlds of network namespaces of the benchmark's own, the same
shape, each a "guest" endpoint, a "host" in the middle and an "internet"
endpoint joined by veth pairs:

  NAT      guest 10.77.0.2 -- host: bridge 10.77.0.1, routed and
           masqueraded by Lodge's rules (netfilter_net_add, nat) out of
           its uplink 192.0.2.1 -- internet 192.0.2.2
  bridged  guest 192.0.2.3 -- host: one bridge holding the guest's veth
           and the uplink -- internet 192.0.2.2 (the guest straight on
           the link, as a vif with bridge= is)
  forward  as NAT, but no nftables at all (no conntrack either) and the
           internet routes 10.77.0.0/24 back: what IP forwarding alone
           costs, to tell it from what the rules, conntrack and
           masquerade add

iperf3 sends UDP from the guest to the internet as fast as it can, 64 and
1472-byte payloads; the rate is of datagrams the internet received, and
beside it of those the guest sent (a veth hands each frame on in the
sender's own context, so the path's cost, NAT's included, slows the
sender: on a loaded machine the receiving iperf3 can be the bottleneck
instead, and then the sent rate tells the paths apart).  The
guest is a veth endpoint (a kernel stand-in for a guest): Mini-OS guests
on a real network (network.c) can replace it.  The two worlds take turns
ROUNDS times (NAT_ROUNDS, 3): medians in the table, ranges after.

usage: nat.py NETFILTER_DRIVER (build/tests/test-lib-netfilter)"""
import json
import os
import statistics
import subprocess
import sys

SECS = int(os.environ.get("NAT_SECS", "4"))
ROUNDS = int(os.environ.get("NAT_ROUNDS", "3"))
SIZES = (64, 1472)
PID = os.getpid()
# The sender (and with it the whole path: a veth hands frames on in the
# sender's context) on one CPU, the receiver on another, the same in every
# run: where the scheduler put them changed a run's rate 3x.
AFFINITY = (["-A", "0"], ["-A", "1"]) if (os.cpu_count() or 1) >= 2 else ([], [])


def sh(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


class World:
    """guest, host and internet namespaces; nat or bridged."""

    def __init__(self, kind, driver):
        self.kind = kind
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
        if kind in ("nat", "forward"):
            self.run(h, "ip", "addr", "add", "10.77.0.1/24", "dev", "br0")
            self.run(h, "ip", "addr", "add", "192.0.2.1/24", "dev", "up0")
            self.run(h, "ip", "link", "set", "up0", "up")
            self.run(g, "ip", "addr", "add", "10.77.0.2/24", "dev", "g0")
            self.run(g, "ip", "link", "set", "g0", "up")
            self.run(g, "ip", "route", "add", "default", "via", "10.77.0.1")
            self.run(h, driver, "forward-on")
            if kind == "nat":
                self.run(h, driver, "add", "bench", "br0", "10.77.0.0/24", "nat")
            else:
                self.run(i, "ip", "route", "add", "10.77.0.0/24", "via", "192.0.2.1")
        else:
            self.run(h, "ip", "link", "set", "up0", "master", "br0", "up")
            self.run(g, "ip", "addr", "add", "192.0.2.3/24", "dev", "g0")
            self.run(g, "ip", "link", "set", "g0", "up")
        self.run(h, "ip", "link", "set", "br0", "up")

    @staticmethod
    def run(ns, *argv):
        return sh("ip", "netns", "exec", ns, *argv)

    def rate(self, size):
        """Datagrams/s the guest sent and the internet received of a
        SECS-long UDP flood: (sent, received)."""
        srv = subprocess.Popen(["ip", "netns", "exec", self.ns["inet"], "iperf3", "-s", "-1", "-p", "5201", "--forceflush"] + AFFINITY[1],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            for line in srv.stdout:          # ready once it listens: no fixed wait
                if "listening" in line:
                    break
            out = self.run(self.ns["guest"], "iperf3", *AFFINITY[0], "-c", "192.0.2.2", "-p", "5201", "-u", "-b", "0",
                           "-l", str(size), "-t", str(SECS), "-J")
        finally:
            srv.kill()
            srv.wait()
        s = json.loads(out)["end"]["sum"]
        return s["packets"] / s["seconds"], (s["packets"] - s["lost_packets"]) / s["seconds"]

    def close(self):
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "del", n])


def main():
    driver = os.path.abspath(sys.argv[1])
    worlds = []
    kinds = ("nat", "bridged", "forward")
    runs = {k: {s: [] for s in SIZES} for k in kinds}
    try:
        worlds = [World(k, driver) for k in kinds]
        for r in range(ROUNDS):
            for size in SIZES:
                # back to back, in a turning order: a round's three runs
                # see the same load from the rest of the machine.
                for w in worlds[r % 3:] + worlds[:r % 3]:
                    runs[w.kind][size].append(w.rate(size))
    finally:
        for w in worlds:
            w.close()

    def med(kind, size, j=1):
        return statistics.median(x[j] for x in runs[kind][size])

    def ratios(a, b, size, j=1):
        """a / b per round (the pair ran back to back)."""
        return [x[j] / y[j] for x, y in zip(runs[a][size], runs[b][size]) if y[j]]

    print("A NAT network (Lodge's nftables rules: forward, conntrack, masquerade) against the same "
          "guest bridged straight onto the link, and against plain IP forwarding with no nftables; "
          "veth endpoints for guest and internet, iperf3 UDP for %d s, datagrams received per second; "
          "%d rounds, the three back to back in each: medians, and the median of each round's ratio "
          "(sent: of the guest's send rates)\n" % (SECS, ROUNDS))
    print("| UDP payload | NAT | bridged | forward, no rules | NAT / bridged | sent: NAT / bridged "
          "| NAT / forward |")
    print("|---|---|---|---|---|---|---|")
    met = True
    for size in SIZES:
        nb = statistics.median(ratios("nat", "bridged", size))
        met = met and nb >= 0.9
        print("| %d B | %d frames/s | %d frames/s | %d frames/s | %.2f | %.2f | %.2f |"
              % (size, med("nat", size), med("bridged", size), med("forward", size), nb,
                 statistics.median(ratios("nat", "bridged", size, 0)),
                 statistics.median(ratios("nat", "forward", size))))
    print("\nTarget: NAT at least 0.9x bridged (received): %s" % ("met" if met else "NOT met"))
    print("\nRanges over the rounds (min-max): frames/s received, and the rounds' NAT / bridged:")
    for size in SIZES:
        rs = ratios("nat", "bridged", size)
        print("- %d B: %s; NAT / bridged %.2f-%.2f" % (
            size, "; ".join("%s %d-%d" % (k, min(x[1] for x in runs[k][size]), max(x[1] for x in runs[k][size]))
                            for k in kinds), min(rs), max(rs)))


if __name__ == "__main__":
    main()
