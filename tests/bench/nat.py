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
        if kind == "nat":
            self.run(h, "ip", "addr", "add", "10.77.0.1/24", "dev", "br0")
            self.run(h, "ip", "addr", "add", "192.0.2.1/24", "dev", "up0")
            self.run(h, "ip", "link", "set", "up0", "up")
            self.run(g, "ip", "addr", "add", "10.77.0.2/24", "dev", "g0")
            self.run(g, "ip", "link", "set", "g0", "up")
            self.run(g, "ip", "route", "add", "default", "via", "10.77.0.1")
            self.run(h, driver, "forward-on")
            self.run(h, driver, "add", "bench", "br0", "10.77.0.0/24", "nat")
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
        srv = subprocess.Popen(["ip", "netns", "exec", self.ns["inet"], "iperf3", "-s", "-1", "-p", "5201", "--forceflush"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            for line in srv.stdout:          # ready once it listens: no fixed wait
                if "listening" in line:
                    break
            out = self.run(self.ns["guest"], "iperf3", "-c", "192.0.2.2", "-p", "5201", "-u", "-b", "0",
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
    runs = {"nat": {s: [] for s in SIZES}, "bridged": {s: [] for s in SIZES}}
    try:
        worlds = [World("nat", driver), World("bridged", driver)]
        for _ in range(ROUNDS):
            for w in worlds:
                for size in SIZES:
                    runs[w.kind][size].append(w.rate(size))
    finally:
        for w in worlds:
            w.close()
    print("A NAT network (Lodge's nftables rules: forward, conntrack, masquerade) against the same "
          "guest bridged straight onto the link; veth endpoints for guest and internet, iperf3 UDP "
          "for %d s, datagrams received per second; median of %d rounds, the two taking turns\n"
          % (SECS, ROUNDS))
    print("| UDP payload | NAT received | bridged received | NAT / bridged | NAT sent | bridged sent | NAT / bridged |")
    print("|---|---|---|---|---|---|---|")
    met = True
    for size in SIZES:
        med = {k: [statistics.median(r[j] for r in runs[k][size]) for j in (0, 1)] for k in runs}
        (ns, nr), (bs, br) = med["nat"], med["bridged"]
        met = met and nr >= 0.9 * br
        print("| %d B | %d frames/s | %d frames/s | %.2f | %d frames/s | %d frames/s | %.2f |"
              % (size, nr, br, nr / br if br else 0, ns, bs, ns / bs if bs else 0))
    print("\nTarget: NAT at least 0.9x bridged (received): %s" % ("met" if met else "NOT met"))
    print("\nRanges over the rounds (min-max), frames/s received:")
    for size in SIZES:
        print("- %d B: %s" % (size, "; ".join("%s %d-%d" % (k, min(r[1] for r in runs[k][size]),
                                                         max(r[1] for r in runs[k][size]))
                                           for k in ("nat", "bridged"))))

if __name__ == "__main__":
    main()
