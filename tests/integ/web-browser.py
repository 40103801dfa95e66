#!/usr/bin/python3
# The web page in a real browser (headless Chromium through Selenium),
# driven as a person would: log in; the table lists a domain the CLI made
# and shows it paused after `lodge pause` (live updates); create a Mini-OS domain
# from the page and find it in `lodge list`; type help into its console
# and see Mini-OS's help; destroy it with the confirmation: its row stays,
# off, as its config does; Edit its config (refused with FILE:LINE, then
# saved) and Start it again.  One browser
# for all; a screenshot after each step in SHOTS.  PASS/FAIL lines as
# tests/run.sh counts them.
#   web-browser.py URL LODGE ROOT SHOTS USER PASSWORD MINIOS
import subprocess, sys, time
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from selenium.webdriver.support import expected_conditions as EC
from selenium.common.exceptions import StaleElementReferenceException

url, lodge, root, shots, user, password, minios = sys.argv[1:8]

def lodge_cmd(*args):
    return subprocess.run([lodge, "--root", root, *args], capture_output=True, text=True, timeout=30)

def listed(name):
    out = lodge_cmd("list", "-o", "tsv").stdout
    return any(line.split("\t")[0] == name for line in out.splitlines())

def shot(name):
    drv.save_screenshot(f"{shots}/{name}.png")

def ok(label, cond, why=""):
    print(("PASS: " if cond else "FAIL: ") + label + ("" if cond else ": " + why), flush=True)
    return cond

def state_text(name):
    return drv.find_element(By.CSS_SELECTOR, f'tr[data-name="{name}"] .state').text

opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
    opts.add_argument(a)
drv = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
# The table is drawn anew at each live update (once a second): an element
# found just before may be gone when used, so waits pass over that and
# clicks on rows retry until one lands.
STALE = (StaleElementReferenceException,)
wait = WebDriverWait(drv, 20, ignored_exceptions=STALE)

def click(css):
    def attempt(d):
        try:
            d.find_element(By.CSS_SELECTOR, css).click()
            return True
        except StaleElementReferenceException:
            return False
    wait.until(attempt)
try:
    drv.get(url)
    wait.until(EC.visibility_of_element_located((By.ID, "login-user"))).send_keys(user)
    drv.find_element(By.ID, "login-password").send_keys(password)
    shot("1-login")
    drv.find_element(By.ID, "login-submit").click()
    try:
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, 'tr[data-name="wb1"] .state')))
        ok("the page logs in and its table lists wb1, made with the CLI", "running" in state_text("wb1"),
           state_text("wb1"))
    except Exception as e:
        ok("log in and list wb1", False, repr(e)[:300])
    shot("2-table")

    rc = lodge_cmd("pause", "wb1").returncode
    t0 = time.monotonic()
    try:
        # An event waited for, not a deadline: the live updates come once a
        # second (2 s at most on a quiet host: information, as the latency
        # belongs to tests/bench/web.py; a loaded machine may take longer).
        WebDriverWait(drv, 30, poll_frequency=0.05, ignored_exceptions=STALE).until(lambda d: "paused" in state_text("wb1"))
        ok(f"the table shows wb1 paused {time.monotonic() - t0:.2f} s after lodge pause (live updates)", rc == 0)
    except Exception:
        ok("the table shows wb1 paused", False, f"lodge pause rc {rc}, state '{state_text('wb1')}'")
    shot("3-paused")

    click('tr[data-name="wb1"] a[data-action="detail"]')
    try:
        wait.until(lambda d: " wb1 paused " in d.find_element(By.ID, "detail-history").text)
        ok("the detail view shows wb1's history from the event log (its pause) and its vCPU",
           "vCPU 0" in drv.find_element(By.ID, "devices").text)
    except Exception:
        ok("detail view", False, drv.find_element(By.ID, "detail-history").text[-300:])
    shot("3b-detail")
    drv.find_element(By.ID, "detail-close").click()

    drv.find_element(By.ID, "create-open").click()
    name = wait.until(EC.visibility_of_element_located((By.ID, "create-name")))
    name.send_keys("wbnew")
    kernel = drv.find_element(By.ID, "create-kernel")
    if not kernel.get_attribute("value"):
        kernel.send_keys(minios)
    mem = drv.find_element(By.ID, "create-memory_mib")
    mem.clear(); mem.send_keys("32")
    shot("4-create-form")
    drv.find_element(By.ID, "create-submit").click()
    try:
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, 'tr[data-name="wbnew"] .state')))
        ok("a Mini-OS domain created from the page is in the table and in lodge list", listed("wbnew"))
    except Exception as e:
        ok("create from the page", False, drv.find_element(By.ID, "create-error").text + repr(e)[:200])
    shot("5-created")

    click('tr[data-name="wbnew"] button[data-action="console"]')
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#terminal .xterm-rows")))
    rows = lambda: drv.find_element(By.CSS_SELECTOR, "#terminal .xterm-rows").text
    try:
        wait.until(lambda d: "minios>" in rows())
    except Exception:
        pass                       # a prompt already scrolled away: help brings one
    drv.find_element(By.CSS_SELECTOR, "#terminal textarea").send_keys("help" + Keys.ENTER)
    try:
        wait.until(lambda d: "attack lodge-hyp's devices" in rows())   # help's last line
        ok("help typed into the page's console brings Mini-OS's help", True)
    except Exception:
        ok("console help", False, rows()[-300:])
    shot("6-console")
    drv.find_element(By.ID, "console-close").click()

    click('tr[data-name="wbnew"] button[data-action="destroy"]')
    wait.until(EC.visibility_of_element_located((By.ID, "confirm-yes")))
    asked = drv.find_element(By.ID, "confirm-text").text
    shot("7-confirm")
    still = listed("wbnew")
    drv.find_element(By.ID, "confirm-yes").click()
    try:
        # Its config stays in domains_dir: its row stays, off (issue 35).
        wait.until(lambda d: "off" in state_text("wbnew"))
        ok(f"destroy asks first ('{asked}'), then wbnew is gone from lodge list, its row off (still defined)",
           still and not listed("wbnew"))
    except Exception:
        ok("destroy with confirmation", False, drv.find_element(By.ID, "action-error").text)
    shot("8-destroyed")

    # The defined domain's row: Edit shows its config, checked when saved.
    cfg = f"{root}/etc/lodge/domains/wbnew.cfg"
    click('tr[data-name="wbnew"] button[data-action="edit"]')
    text = wait.until(EC.visibility_of_element_located((By.ID, "edit-text")))
    before = open(cfg).read()
    drv.execute_script("arguments[0].value = arguments[1]", text,
                       text.get_attribute("value").replace("memory = 32", "memory = lots"))
    drv.find_element(By.ID, "edit-save").click()
    try:
        wait.until(lambda d: "wbnew.cfg:" in d.find_element(By.ID, "edit-error").text)
        ok("Edit: a config the loader refuses is shown beside it with FILE:LINE "
           f"('{drv.find_element(By.ID, 'edit-error').text}'), the file untouched", open(cfg).read() == before)
    except Exception:
        ok("Edit refused", False, drv.find_element(By.ID, "edit-error").text)
    shot("8b-edit-refused")
    drv.execute_script("arguments[0].value = arguments[1]", text, before.replace("memory = 32", "memory = 40"))
    drv.find_element(By.ID, "edit-save").click()
    try:
        wait.until(EC.invisibility_of_element_located((By.ID, "edit-view")))
        ok("Edit: the fixed config is saved", "memory = 40" in open(cfg).read())
    except Exception:
        ok("Edit saved", False, drv.find_element(By.ID, "edit-error").text)
    click('tr[data-name="wbnew"] button[data-action="start"]')
    try:
        wait.until(lambda d: "running" in state_text("wbnew"))
        ok("Start on the off row runs wbnew (in lodge list, the row running)", listed("wbnew"))
    except Exception:
        ok("Start from the page", False, drv.find_element(By.ID, "action-error").text)
    shot("8c-started")
    lodge_cmd("destroy", "wbnew")

    drv.set_window_size(390, 844)
    time.sleep(0.2)                # let the layout settle for the picture
    width = drv.execute_script("return document.documentElement.scrollWidth")
    ok(f"at a phone's width (390 px) the page does not scroll sideways ({width} px)", width <= 390, str(width))
    shot("9-phone")
finally:
    drv.quit()
