#!/usr/bin/env python3
"""The pool under faults (issue 34): a fault-injection harness.

A three-member etcd cluster of its own and three Lodge hosts, each in a
network namespace of its own with its --root and pool agent, reaching
etcd over veths (tests/pool-lib.sh's fixture, kept up by a bash child for
the whole run).  Each host runs HA Mini-OS domains and one plain one.  A
sampler reads every lodge-hyp process of this run's roots every 100 ms
(/proc, supervisors only) and records how many copies of each domain run.

Each fault is a function below (FAULTS); each run injects it once, waits
(bounded) for the pool to settle, and reports:
  double runs   samples in which a domain ran on two hosts at once
  HA downtime   for each HA domain that went down, from its last sample
                running to its first running again (ms; the worst of the run)
  data lost     domains whose config or desired state left etcd, or an HA
                domain left stopped

Prints a markdown table.  Usage: pool-faults.py [RUNS_PER_FAULT] (3).
Needs root, KVM, etcd-server, a built tree.  Loopback and namespace
addresses only.  Ends only the processes it or its fixture started.
"""
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TTL, FENCE, RESTART = 3, 2, 1
HOSTS = ["a", "b", "c"]
HA_PER_HOST = 2
SETTLE_S = 60          # the most a run waits for the pool to settle

FIXTURE = r'''
. "$TOP/tests/lib.sh"
integ_begin pool-faults kvm root minios >/dev/null
pool_etcd_up own
PREFIX=/lodge-faults
pool_hosts_up --ns "a b c" %(ttl)d %(fence)d %(restart)d
for h in a b c; do
	for i in $(seq 1 %(ha)d); do pool_create_on "$h" "ha$h$i:1"; done
	pool_create_on "$h" "plain$h:0"
done
echo "T=$T"; echo "LODGE=$LODGE"; echo "PREFIX=$PREFIX"; echo "URLS=$POOL_ETCD_URLS"
for h in a b c; do echo "NS_$h=${POOL_NS[$h]}"; echo "VETH_$h=${POOL_VETH[$h]}"; echo "AGENT_$h=${POOL_AGENT[$h]}"; done
echo READY
read -r _
for h in a b c; do pool_agent_kill "$h"; done
'''


class Pool:
    def __init__(self):
        script = FIXTURE % {"ttl": TTL, "fence": FENCE, "restart": RESTART, "ha": HA_PER_HOST}
        env = dict(os.environ, TOP=TOP)
        self.fx = subprocess.Popen(["bash", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True, env=env)
        self.v = {}
        for line in self.fx.stdout:
            line = line.strip()
            if line == "READY":
                break
            if line.startswith(("FAIL", "SKIP")):
                print("pool-faults: fixture: " + line, file=sys.stderr)
            elif "=" in line:
                k, val = line.split("=", 1)
                self.v[k] = val
        if "T" not in self.v:
            raise SystemExit("pool-faults: the fixture did not come up (etcd, KVM, root?)")
        self.agents = {h: int(self.v["AGENT_" + h]) for h in HOSTS}
        self.own_agents = {}     # the agents this harness started again
        self.domains = [f"ha{h}{i}" for h in HOSTS for i in range(1, HA_PER_HOST + 1)] + [f"plain{h}" for h in HOSTS]
        self.samples = []        # (time, {domain: copies})
        self.stop = False
        self.sampler = threading.Thread(target=self.sample, daemon=True)
        self.sampler.start()

    def close(self):
        self.stop = True
        for h, p in self.own_agents.items():
            if p.poll() is None:
                p.kill()
                p.wait()
        self.fx.stdin.write("end\n")
        self.fx.stdin.close()
        self.fx.wait()

    def root(self, h):
        return f"{self.v['T']}/host-{h}"

    def lodge(self, h, *args, check=False):
        cmd = ["ip", "netns", "exec", self.v["NS_" + h], self.v["LODGE"], "--root", self.root(h), *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=check)

    def etcd(self, *args):
        env = dict(os.environ, ETCDCTL_API="3")
        return subprocess.run(["etcdctl", "--endpoints=" + self.v["URLS"], "--command-timeout=5s", *args],
                              capture_output=True, text=True, env=env).stdout

    # ---- the sampler: lodge-hyp supervisors of this run's roots, per domain
    def hyps(self):
        """{pid: (ppid, domain, root)} of every lodge-hyp under this run's roots."""
        out = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            argv = [a.decode(errors="replace") for a in argv]
            if not argv or not argv[0].endswith("lodge-hyp") or "--name" not in argv or "--runtime-dir" not in argv:
                continue
            rd = argv[argv.index("--runtime-dir") + 1]
            if not rd.startswith(self.v["T"] + "/"):
                continue
            out[int(pid)] = (ppid, argv[argv.index("--name") + 1], rd)
        return out

    def sample(self):
        while not self.stop:
            h = self.hyps()
            parents = {ppid for ppid, _, _ in h.values()}
            copies = {}
            for pid, (ppid, name, _) in h.items():
                # a copy runs while a supervisor has its sandboxed child (the
                # guest's vCPUs): a supervisor ending after its guest, or one
                # not yet forked, is not a second copy
                if ppid in h or pid not in parents:
                    continue
                copies[name] = copies.get(name, 0) + 1
            self.samples.append((time.monotonic(), copies))
            time.sleep(0.1)

    def host_hyps(self, h):
        return [pid for pid, (_, _, rd) in self.hyps().items() if rd.startswith(self.root(h) + "/")]

    def domain_hyps(self, name):
        return [pid for pid, (_, n, _) in self.hyps().items() if n == name]

    # ---- agents
    def agent_pid(self, h):
        p = self.own_agents.get(h)
        return p.pid if p else self.agents[h]

    def agent_kill(self, h):
        pid = self.agent_pid(h)
        if pid > 1:
            os.kill(pid, signal.SIGKILL)
        if h in self.own_agents:
            self.own_agents[h].wait()

    def agent_start(self, h):
        log = open(f"{self.v['T']}/agent-{h}.log", "a")
        self.own_agents[h] = subprocess.Popen(
            ["ip", "netns", "exec", self.v["NS_" + h], self.v["LODGE"], "--root", self.root(h), "pool-agent"],
            stdout=subprocess.DEVNULL, stderr=log)

    # ---- the pool's state
    def where(self):
        """{domain: [hosts whose own list shows it]}"""
        w = {d: [] for d in self.domains}
        for h in HOSTS:
            for line in self.lodge(h, "list", "-o", "tsv", "-H").stdout.splitlines():
                name = line.split("\t")[0]
                if name in w:
                    w[name].append(h)
        return w

    def hosts_up(self):
        out = self.lodge("a", "pool-list", "-o", "tsv", "-H").stdout
        states = {l.split("\t")[0]: l.split("\t")[1] for l in out.splitlines() if "\t" in l}
        return all(states.get(h) == "up" for h in HOSTS)

    def ha_running(self):
        w = self.where()
        return all(len(w[d]) == 1 for d in self.domains if d.startswith("ha"))

    def settle(self):
        end = time.monotonic() + SETTLE_S
        while time.monotonic() < end:
            if self.hosts_up() and self.ha_running():
                return True
            time.sleep(0.5)
        return False

    def lost(self):
        n = 0
        for d in self.domains:
            cfg = self.etcd("get", "--keys-only", f"{self.v['PREFIX']}/domains/{d}/config").strip()
            desired = self.etcd("get", "--print-value-only", f"{self.v['PREFIX']}/domains/{d}/desired").strip()
            if not cfg or (d.startswith("ha") and desired != "running"):
                n += 1
        return n


# ---- the faults: each injects one and undoes what a host would (its
# agent started again, its link back); the run then waits for the pool.
def hyp_kill(pool, run):
    """kill -9 of one HA domain's lodge-hyp (supervisor and child)"""
    d = f"ha{HOSTS[run % 3]}1"
    for pid in pool.domain_hyps(d):
        os.kill(pid, signal.SIGKILL)


def agent_kill(pool, run):
    """a host dies: its agent and its lodge-hyps killed (-9), back 3 TTLs later"""
    h = HOSTS[run % 3]
    pool.agent_kill(h)
    for pid in pool.host_hyps(h):
        os.kill(pid, signal.SIGKILL)
    time.sleep(3 * TTL)
    pool.agent_start(h)


def agent_freeze(pool, run):
    """a host's agent frozen (SIGSTOP) past its lease, then thawed"""
    pid = pool.agent_pid(HOSTS[run % 3])
    os.kill(pid, signal.SIGSTOP)
    time.sleep(TTL + 2)
    os.kill(pid, signal.SIGCONT)


def host_cut(pool, run):
    """a host cut from etcd (its veth down) for 3 TTLs"""
    veth = pool.v["VETH_" + HOSTS[run % 3]]
    subprocess.run(["ip", "link", "set", veth, "down"], check=True)
    time.sleep(3 * TTL)
    subprocess.run(["ip", "link", "set", veth, "up"], check=True)


FAULTS = [hyp_kill, agent_kill, agent_freeze, host_cut]


def measure(pool, t0, t1):
    """Double runs and the worst HA downtime (ms) among the samples t0..t1."""
    window = [(t, c) for t, c in pool.samples if t0 - 0.2 <= t <= t1]
    double = sum(1 for _, c in window if any(n > 1 for n in c.values()))
    worst = 0.0
    for d in pool.domains:
        if not d.startswith("ha"):
            continue
        down_at = None
        for t, c in window:
            if c.get(d, 0) == 0 and down_at is None:
                down_at = t
            elif c.get(d, 0) > 0 and down_at is not None:
                worst = max(worst, (t - down_at) * 1000)
                down_at = None
        if down_at is not None:
            worst = max(worst, (t1 - down_at) * 1000)
    return double, worst


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    pool = Pool()
    rows = []
    try:
        if not pool.settle():
            raise SystemExit("pool-faults: the pool did not settle before the first fault")
        for fault in FAULTS:
            doubles, downs, lost = 0, [], 0
            for run in range(runs):
                t0 = time.monotonic()
                fault(pool, run)
                settled = pool.settle()
                t1 = time.monotonic()
                time.sleep(0.3)
                double, worst = measure(pool, t0, t1)
                doubles += double
                downs.append(worst)
                lost += pool.lost()
                if not settled:
                    print(f"pool-faults: {fault.__name__} run {run + 1}: not settled after {SETTLE_S} s",
                          file=sys.stderr)
            rows.append((fault.__name__, fault.__doc__, runs, doubles, downs, lost))
    finally:
        pool.close()
    print(f"Three hosts in namespaces, 3-member etcd, lease TTL {TTL} s, fence deadline {FENCE} s, "
          f"restart delay {RESTART} s; {3 * HA_PER_HOST} HA and 3 plain Mini-OS domains; sampled every 100 ms.")
    print()
    print("| fault | runs | double runs | HA downtime min / median / max (ms) | data lost |")
    print("|---|---|---|---|---|")
    for name, doc, n, doubles, downs, lost in rows:
        print(f"| {name}: {doc} | {n} | {doubles} | {min(downs):.0f} / {statistics.median(downs):.0f} / "
              f"{max(downs):.0f} | {lost} |")


if __name__ == "__main__":
    main()
