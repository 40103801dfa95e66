#!/bin/bash
# The web page in headless Chromium (web-browser.py, python3-selenium):
# log in, a CLI-made domain listed and shown paused within 2 s of lodge
# pause, a Mini-OS domain created from the page, help typed into its
# console, destroyed with the confirmation.  Screenshots stay in
# $BUILD/web-browser/ for a person to look at.
. "$(dirname "$0")/../lib.sh"

integ_begin "web page in a browser" kvm root minios "cmd:chromium" "cmd:chromedriver:chromium-driver" "cmd:curl"
/usr/bin/python3 -c 'import selenium' 2>/dev/null || { skip "web page in a browser" "python3-selenium not installed"; exit 0; }
[ -f "$BUILD/web/xterm/xterm.js" ] || { skip "web page in a browser" "xterm.js not bundled (make)"; exit 0; }
SHOTS=$BUILD/web-browser
rm -rf "$SHOTS" && mkdir -p "$SHOTS"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'browser-secret-1\n' | lodge web-passwd alice >/dev/null || { fail "web page" "web-passwd failed"; exit 0; }
printf 'name = "wb1"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$DOMS/wb1.cfg"
lodge create wb1 >/dev/null || { fail "web page" "lodge create wb1 failed"; exit 0; }
mkdir -p "$ROOT/etc/lodge"   # no kernel_dirs: the form's own guest is lent
mkdir -p "$ROOT/var/lib/lodge/images" && truncate -s 16M "$ROOT/var/lib/lodge/images/wbdisk.img"
"$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
up() { curl -s -o /dev/null "http://127.0.0.1:$PORT/"; }
wait_until 20 up || { fail "web page" "lodge web did not answer: $(cat "$T/web.log")"; exit 0; }
timeout 300 /usr/bin/python3 "$(dirname "$0")/web-browser.py" "http://127.0.0.1:$PORT/" "$LODGE" "$ROOT" "$SHOTS" \
	alice browser-secret-1 "$MINIOS" 2>"$T/py.err"
rc=$?
[ $rc -eq 0 ] || fail "web page in a browser" "web-browser.py exited $rc: $(grep -m1 -E "(Exception|Error)[:(]" "$T/py.err") $(tail -2 "$T/py.err")"
echo "screenshots: $SHOTS"
