#!/usr/bin/env python3
"""Lodge networks with Mini-OS guests (issue 21), in network namespaces of
the benchmark's own:

  create-to-address  `lodge create` of a Mini-OS guest (ip=dhcp) on a NAT
                     network until its console says dnsmasq's lease came,
                     ROUNDS times (the first also takes the MAC's fixed
                     address); and `lodge create` alone
  frame rate         the guest sends numbered UDP datagrams (udp-send, 64
                     and 1472-byte payloads) as fast as its queue takes
                     them to an "internet" namespace, counted there, two
                     worlds taking turns in the same run:
                       NAT      guest on network nat0 (10.77.0.0/24),
                                masqueraded out of the host's uplink
                       bridged  the same guest on a bridge holding the
                                uplink itself (a vif with bridge=)
                     the rate the internet received, and the guest's own
                     send rate; target NAT >= 0.9x bridged.

usage: network.py LODGE MINIOS"""
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

LODGE, MINIOS = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ROUNDS = int(os.environ.get("NETWORK_ROUNDS", "3"))
COUNT = int(os.environ.get("NETWORK_DATAGRAMS", "20000"))
SIZES = (64, 1472)
PID = os.getpid()
TMP = tempfile.mkdtemp(prefix="lodge-bench-network.")
os.chmod(TMP, 0o755)      # dnsmasq rereads its hosts files as its own user


def sh(*argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(argv), (r.stderr or r.stdout).strip()))
    return r.stdout


class World:
    """A host namespace (lodge's, with its own --root) with an uplink veth
    to an internet namespace; kind nat: a NAT network; bridged: a bridge
    holding the uplink."""

    def __init__(self, kind):
        self.kind = kind
        self.host = "lodge-bench-%s-host-%d" % (kind, PID)
        self.inet = "lodge-bench-%s-inet-%d" % (kind, PID)
        self.root = os.path.join(TMP, kind)
        os.makedirs(os.path.join(self.root, "etc/lodge/domains"))
        for n in (self.host, self.inet):
            sh("ip", "netns", "add", n)
            sh("ip", "netns", "exec", n, "ip", "link", "set", "lo", "up")
        sh("ip", "link", "add", "up0", "netns", self.host, "type", "veth", "peer", "name", "up1", "netns", self.inet)
        self.ini("ip", "addr", "add", "198.51.100.2/24", "dev", "up1")
        self.ini("ip", "link", "set", "up1", "up")
        if kind == "nat":
            self.hst("ip", "addr", "add", "198.51.100.1/24", "dev", "up0")
            self.hst("ip", "link", "set", "up0", "up")
            self.lodge("network-create", "nat0", "--subnet", "10.77.0.0/24")
            self.vif, self.extra = "network=nat0", "ip=dhcp"
        else:
            self.lodge("bridge-create", "bup0")
            self.hst("ip", "link", "set", "up0", "master", "bup0", "up")
            self.vif, self.extra = "bridge=bup0", "ip=198.51.100.3/24"

    def hst(self, *argv):
        return sh("ip", "netns", "exec", self.host, *argv)

    def ini(self, *argv):
        return sh("ip", "netns", "exec", self.inet, *argv)

    def lodge(self, *argv):
        return self.hst(LODGE, "--root", self.root, *argv)

    def console(self, name):
        with open(os.path.join(self.root, "run/lodge", name, "console.log"), "rb") as f:
            return f.read()

    def wait_console(self, name, pattern, secs=30, after=0):
        end = time.time() + secs
        while time.time() < end:
            try:
                m = re.search(pattern, self.console(name)[after:])
                if m:
                    return m
            except FileNotFoundError:
                pass
            time.sleep(0.005)
        raise RuntimeError("%s: no %r on its console" % (name, pattern))

    def create(self, name):
        with open(os.path.join(self.root, "etc/lodge/domains", name + ".cfg"), "w") as f:
            f.write('name = "%s"\nmemory = 32\nkernel = "%s"\nextra = "%s"\nvif = [ "%s" ]\n'
                    % (name, MINIOS, self.extra, self.vif))
        t0 = time.monotonic()
        self.lodge("create", name)
        return t0, time.monotonic()

    def say(self, name, line):
        subprocess.run(["ip", "netns", "exec", self.host, LODGE, "--root", self.root, "console", name],
                       input=(line + "\n").encode(), capture_output=True, timeout=60)

    def close(self):
        for d in ("g", "a"):
            subprocess.run(["ip", "netns", "exec", self.host, LODGE, "--root", self.root, "destroy", d],
                           capture_output=True)
        if self.kind == "nat":
            subprocess.run(["ip", "netns", "exec", self.host, LODGE, "--root", self.root, "network-delete",
                            "nat0"], capture_output=True)
        for n in (self.host, self.inet):
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def address_times(w):
    """create-to-address, and create alone, in ms, ROUNDS times."""
    total, create = [], []
    for _ in range(ROUNDS):
        t0, t1 = w.create("a")
        w.wait_console("a", rb"dhcp: lease 10\.77\.0\.")
        t2 = time.monotonic()
        total.append((t2 - t0) * 1000)
        create.append((t1 - t0) * 1000)
        w.lodge("destroy", "a")
    return total, create


def counter(w, size, result):
    """In the internet namespace: datagrams of this size to port 9000,
    counted from the first to a second of quiet."""
    code = ("import socket,time\n"
            "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
            "s.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,8<<20)\n"
            "s.bind(('198.51.100.2',9000))\n"
            "print('ready',flush=True)\n"
            "s.settimeout(30)\n"
            "s.recv(2048);t0=time.monotonic();t1=t0;n=1\n"
            "s.settimeout(1)\n"
            "try:\n"
            "  while True:\n"
            "    s.recv(2048);n+=1;t1=time.monotonic()\n"
            "except socket.timeout: pass\n"
            "print(n,t1-t0,flush=True)\n")
    p = subprocess.Popen(["ip", "netns", "exec", w.inet, sys.executable, "-c", code], stdout=subprocess.PIPE,
                         text=True)
    result["ready"] = p.stdout.readline()
    result["proc"] = p


def rates(w):
    """{size: (received/s, sent/s)} for one round."""
    out = {}
    for size in SIZES:
        res = {}
        counter(w, size, res)
        before = len(w.console("g"))
        w.say("g", "udp-send 198.51.100.2 9000 %d %d" % (COUNT, size))
        m = w.wait_console("g", rb"udp-send: \d+ datagrams of \d+ bytes in \d+ us: (\d+) datagrams/s", 60, before)
        n, secs = res["proc"].communicate(timeout=60)[0].split()
        out[size] = (int(n) / max(float(secs), 1e-6), int(m.group(1)))
    return out


def main():
    worlds = {}
    try:
        for kind in ("nat", "bridged"):
            worlds[kind] = World(kind)
        nat = worlds["nat"]
        total, create = address_times(nat)
        for w in worlds.values():
            w.create("g")
        nat.wait_console("g", rb"dhcp: router")
        worlds["bridged"].wait_console("g", rb"minios> ")
        # ARP settled: one datagram each way first.
        for w in worlds.values():
            w.say("g", "ping 198.51.100.2 1")
        got = {k: {s: [] for s in SIZES} for k in worlds}
        for _ in range(ROUNDS):
            for kind in ("nat", "bridged"):
                for size, r in rates(worlds[kind]).items():
                    got[kind][size].append(r)
    finally:
        for w in worlds.values():
            w.close()
        subprocess.run(["rm", "-rf", TMP])
    med = statistics.median
    print("| Create-to-address (Mini-OS, NAT network, dnsmasq) | median | range |")
    print("|---|---|---|")
    print("| lodge create returns | %.0f ms | %.0f-%.0f ms |" % (med(create), min(create), max(create)))
    print("| create to DHCP lease | %.0f ms | %.0f-%.0f ms |" % (med(total), min(total), max(total)))
    print()
    print("| Guest to internet, UDP | NAT received/s | bridged received/s | NAT/bridged | NAT sent/s | bridged sent/s |")
    print("|---|---|---|---|---|---|")
    for size in SIZES:
        nr = med([r[0] for r in got["nat"][size]])
        br = med([r[0] for r in got["bridged"][size]])
        ns = med([r[1] for r in got["nat"][size]])
        bs = med([r[1] for r in got["bridged"][size]])
        print("| %d B | %.0f | %.0f | %.2fx | %.0f | %.0f |" % (size, nr, br, nr / br if br else 0, ns, bs))
    print()
    print("%d rounds of %d datagrams each; ranges of received/s: %s" % (ROUNDS, COUNT, "; ".join(
        "%s %d B %.0f-%.0f" % (k, s, min(r[0] for r in got[k][s]), max(r[0] for r in got[k][s]))
        for k in got for s in SIZES)))


if __name__ == "__main__":
    main()
