#!/bin/bash
# lodge web's login limits (issue 31, defect 5).  Per address only, 60
# wrong passwords from 60 loopback addresses all got their answer, and
# each password check held the one event loop for its whole hash.  Now:
# a flood at one user name from rotated addresses is refused (429, "for
# user alice") after 10 failures, while another user's right password, from
# another address, still logs in during it; a GET is answered while a
# login's check is held (the users file a FIFO the test opens only after
# the GET's answer: the check runs on a thread of its own, the event loop
# answers meanwhile); 40 logins at once from 40 addresses for 40 names: those past
# the 16 that may wait are refused at once (503), every one answered.
. "$(dirname "$0")/../lib.sh"

integ_begin "web login limits" root "cmd:curl" "cmd:python3"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
URL=http://127.0.0.1:$PORT

printf 'alice-secret-1\n' | lodge web-passwd alice >"$T/pw.out" 2>&1 &&
printf 'bob-secret-22\n' | lodge web-passwd bob --role viewer >>"$T/pw.out" 2>&1 ||
	{ fail "web login limits" "web-passwd: $(cat "$T/pw.out")"; exit 0; }
"$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
WEB_PID=$!
up() { curl -s -o /dev/null "$URL/"; }
wait_until 20 up || { fail "web login limits" "lodge web did not answer: $(cat "$T/web.log")"; exit 0; }

cat >"$T/flood.py" <<'PY'
import json, os, socket, sys
port = int(sys.argv[1])
host = "127.0.0.1:%d" % port

def request(method, path, body=None, cookie=None):
    h = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, path, host)
    if cookie:
        h += "Cookie: lodge_session=%s\r\n" % cookie
    b = json.dumps(body).encode() if body is not None else b""
    if body is not None:
        h += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(b)
    return (h + "\r\n").encode() + b

def connect(src):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.settimeout(60)
    return s

def read_response(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None, {}, b""
        buf += d
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    n = int(hdrs.get("content-length", "0"))
    while len(buf) < n:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    return int(lines[0].split()[1]), hdrs, buf[:n]

def login(src, user, password):
    s = connect(src)
    s.sendall(request("POST", "/api/login", {"user": user, "password": password}))
    r = read_response(s)
    s.close()
    return r

def report(ok, name, why):
    print(("PASS: %s" if ok else "FAIL: %s: " + why) % name)

# 1. a rotated-address flood at alice, with bob's login once it is refused
codes, msgs, bob = [], [], []
for i in range(60):
    st, _, body = login("127.0.0.%d" % (10 + i), "alice", "wrong-guess-%d" % i)
    codes.append(st)
    if st == 429:
        msgs.append(json.loads(body)["error"])
        if not bob:
            bob.append(login("127.0.0.200", "bob", "bob-secret-22"))
n401, n429 = codes.count(401), codes.count(429)
report(n401 <= 11 and n429 == 60 - n401 and all("for user alice" in m for m in msgs),
       "60 wrong passwords for alice from 60 addresses: %d answered 401, then %d refused 429 (%s)"
       % (n401, n429, msgs[0] if msgs else "none"), "codes %s" % codes)
bst, bh, bbody = bob[0] if bob else (None, {}, b"")
report(bst == 200 and "lodge_session=" in bh.get("set-cookie", ""),
       "bob's right password from another address logs in during the flood at alice",
       "bob got %s %r" % (bst, bbody[:200]))
cookie = bh.get("set-cookie", "").split(";")[0].split("=", 1)[-1]

# 2. a login whose check the test holds (the users file a FIFO: its
# reading waits for a writer), then a GET: answered while the login waits
users = sys.argv[2]
os.rename(users, users + ".real")
os.mkfifo(users, 0o600)
held = connect("127.0.1.1")
held.sendall(request("POST", "/api/login", {"user": "nobody", "password": "a-wrong-one"}))
get = connect("127.0.0.201")
get.sendall(request("GET", "/api/session", cookie=cookie))
get.settimeout(30)         # only a bound for a failure: passing, it comes at once
try:
    gst, _, gbody = read_response(get)
except socket.timeout:
    gst, gbody = None, b"no answer in 30 s"
held.setblocking(False)
try:
    early = held.recv(1)
except BlockingIOError:
    early = None
held.setblocking(True)
fd = os.open(users, os.O_WRONLY)   # lets the check go on: it reads nothing
os.close(fd)
lst, _, lbody = read_response(held)
os.unlink(users)
os.rename(users + ".real", users)
report(gst == 200 and early is None and lst == 500,
       "a GET is answered (%s) while a login's password check is held; the login then answered (%s %s)"
       % (gst, lst, lbody.decode()), "GET %s %r, the login answered before %r, then %s %r" % (gst, gbody, early, lst, lbody))

# 3. 40 at once from 40 addresses for 40 names: the queue is bounded
conns = [connect("127.0.2.%d" % (i + 1)) for i in range(40)]
reqs = [request("POST", "/api/login", {"user": "spray-%c%c" % (97 + i // 26, 97 + i % 26), "password": "a-wrong-one"})
        for i in range(40)]
for s, r in zip(conns, reqs):
    s.sendall(r)
got = []
for s in conns:
    st, _, body = read_response(s)
    got.append((st, body))
    s.close()
n503 = [b for st, b in got if st == 503]
report(n503 and all(st in (401, 503) for st, _ in got) and all(b"too many logins at once" in b for b in n503),
       "40 logins at once: %d checked (401), %d refused at once (503: %s)"
       % (sum(1 for st, _ in got if st == 401), len(n503), n503[0].decode() if n503 else ""),
       "answers %s" % [st for st, _ in got])
PY
python3 "$T/flood.py" "$PORT" "$ROOT/etc/lodge/web-users"
if kill -0 "$WEB_PID" &&
   [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"user":"alice","password":"alice-secret-1"}' --interface 127.0.0.250 "$URL/api/login")" = 429 ]; then
	pass "after the flood alice's own password is refused too (429) until the wait is over; the server serves on"
else
	fail "after the flood" "$(tail -3 "$T/web.log")"
fi
