#!/usr/bin/python3
"""The web interface's cost with 1, 10 and 50 Mini-OS domains running:
lodge web's own CPU time per live update (time on a CPU from
/proc/PID/schedstat while one WebSocket client takes an update a second), its
resident memory (VmHWM, the peak), and the time from asking for the page
to the domain table painted in headless Chromium (logged in already).
Run by Debian's /usr/bin/python3 (python3-websocket, python3-selenium).
    web.py LODGE MINIOS"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

SECONDS = int(os.environ.get("WEB_SECONDS", "20"))
COUNTS = [int(c) for c in os.environ.get("WEB_COUNTS", "1 10 50").split()]
PASSWORD = "bench-secret-1"


def cpu_seconds(pid):
    """Its time on a CPU in ns (schedstat's first field): /proc/PID/stat's
    ticks are 10 ms, a third of a millisecond per update over 30 s."""
    return int(open("/proc/%d/schedstat" % pid).read().split()[0]) / 1e9


def status_kib(pid, key):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def the_web_pid(pid):
    """lodge web execs lodge-web: the same pid, once it has."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if os.readlink("/proc/%d/exe" % pid).endswith("lodge-web"):
            return pid
        time.sleep(0.05)
    raise RuntimeError("lodge web did not become lodge-web")


def login(url):
    req = urllib.request.Request(url + "api/login", data=json.dumps({"user": "bench", "password": PASSWORD}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        cookie = r.headers["Set-Cookie"].split(";")[0]
    return cookie


def first_paint_ms(url, cookie, rows):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        opts.add_argument(a)
    drv = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        drv.get(url + "no-such-page")            # the origin, to set its cookie on
        name, value = cookie.split("=", 1)
        drv.add_cookie({"name": name, "value": value, "path": "/"})
        best = None
        for _ in range(3):
            t0 = time.monotonic()
            drv.get(url)
            while len(drv.find_elements(By.CSS_SELECTOR, "#domains tbody tr")) < rows:
                if time.monotonic() - t0 > 30:
                    raise RuntimeError("no table in 30 s")
                time.sleep(0.005)
            ms = (time.monotonic() - t0) * 1000
            best = ms if best is None else min(best, ms)
        return best
    finally:
        drv.quit()


def main():
    lodge, minios = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    root = tempfile.mkdtemp(prefix="lodge-bench-web.")
    os.makedirs(os.path.join(root, "etc/lodge/domains"))
    subprocess.run([lodge, "--root", root, "web-passwd", "bench"], input=PASSWORD + "\n", text=True, check=True,
                   stdout=subprocess.DEVNULL)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    url = "http://127.0.0.1:%d/" % port
    web = subprocess.Popen([lodge, "--root", root, "web", "--listen", "127.0.0.1:%d" % port],
                           stderr=subprocess.DEVNULL)
    rows, running = [], 0
    try:
        pid = the_web_pid(web.pid)
        for _ in range(100):
            try:
                cookie = login(url)
                break
            except OSError:
                time.sleep(0.1)
        for count in COUNTS:
            while running < count:
                name = "w%d" % running
                with open(os.path.join(root, "etc/lodge/domains", name + ".cfg"), "w") as f:
                    f.write('name = "%s"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' % (name, minios))
                subprocess.run([lodge, "--root", root, "create", name], check=True)
                running += 1
            ws = websocket.create_connection(url.replace("http", "ws") + "api/ws/updates", cookie=cookie,
                                             origin=url.rstrip("/"), subprotocols=["lodge-updates"], timeout=10)
            ws.recv()
            c0, n = cpu_seconds(pid), 0
            end = time.monotonic() + SECONDS
            while time.monotonic() < end:
                ws.recv()
                n += 1
            c1 = cpu_seconds(pid)
            rss = status_kib(pid, "VmRSS") / 1024
            ws.close()
            paint = first_paint_ms(url, cookie, count + 1)
            rows.append((count, (c1 - c0) * 1000 / max(n, 1), n, rss, status_kib(pid, "VmHWM") / 1024, paint))
    finally:
        web.terminate()
        web.wait()
        for i in range(running):
            subprocess.run([lodge, "--root", root, "destroy", "w%d" % i], stderr=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)
    print("lodge web: CPU per live update (one WebSocket client, an update a second for %d s), resident "
          "memory while serving (and its peak: a login's yescrypt hash takes 16 MiB for a moment), and the time "
          "to the first painted table in headless Chromium (best of 3)\n" % SECONDS)
    print("| domains | CPU ms per update | updates | RSS MiB | peak MiB | first table ms |")
    print("|---|---|---|---|---|---|")
    for count, ms, n, mib, peak, paint in rows:
        print("| %d | %.2f | %d | %.1f | %.1f | %.0f |" % (count, ms, n, mib, peak, paint))
    last = rows[-1]
    print("\nTargets at %d domains: under 2 ms per update: %s; under 10 MiB resident: %s" %
          (last[0], "met" if last[1] < 2 else "NOT met", "met" if last[3] < 10 else "NOT met"))


if __name__ == "__main__":
    main()
