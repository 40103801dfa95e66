#!/usr/bin/env python3
"""Dashboard cost: its own CPU time per refresh (utime + stime from
/proc/PID/stat over a run at a fast refresh) with 1, 10 and 50 Mini-OS
domains running, in a real terminal (tmux, 80x24)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

SECONDS = int(os.environ.get("TUI_SECONDS", "20"))
DELAY = 0.2


def cpu_seconds(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def main():
    lodge, minios = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    root = tempfile.mkdtemp(prefix="lodge-bench-tui.")
    os.makedirs(os.path.join(root, "etc/lodge/domains"))
    rows = []
    running = 0
    try:
        for count in (1, 10, 50):
            while running < count:
                name = "t%d" % running
                with open(os.path.join(root, "etc/lodge/domains", name + ".cfg"), "w") as f:
                    f.write('name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' % (name, minios))
                subprocess.run([lodge, "--root", root, "create", name], check=True)
                running += 1
            session = "lodge-bench-tui-%d" % os.getpid()
            subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                            "%s --root %s -d %.1f" % (lodge, root, DELAY)], check=True)
            time.sleep(2)
            pid = int(subprocess.run(["tmux", "display", "-p", "-t", session, "#{pane_pid}"],
                                     capture_output=True, text=True).stdout)
            c0, t0 = cpu_seconds(pid), time.monotonic()
            time.sleep(SECONDS)
            c1, t1 = cpu_seconds(pid), time.monotonic()
            subprocess.run(["tmux", "kill-session", "-t", session])
            refreshes = (t1 - t0) / DELAY
            rows.append((count, (c1 - c0) * 1000 / refreshes, (c1 - c0) / (t1 - t0) * 100 * DELAY / 1.0))
    finally:
        for i in range(running):
            subprocess.run([lodge, "--root", root, "destroy", "t%d" % i], stderr=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)
    print("Dashboard CPU time per refresh (80x24 in tmux, refresh every %.1f s for %d s)\n" % (DELAY, SECONDS))
    print("| domains | CPU ms per refresh | CPU % of a core at 1 s refresh |")
    print("|---|---|---|")
    for count, ms, _ in rows:
        print("| %d | %.2f | %.2f%% |" % (count, ms, ms / 10))
    print("\nTarget: under 2 ms per refresh at 50 domains: %s" % ("met" if rows[-1][1] < 2 else "NOT met"))


if __name__ == "__main__":
    main()
