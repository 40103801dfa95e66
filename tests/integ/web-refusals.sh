#!/bin/bash
# Every refusal of lodge web is the request's only answer (issue 31,
# defect 3).  Each refusal the server can give a POST (a bad Host, a
# foreign Origin, a body not JSON, a chunked body, a bad Content-Length, a body too
# large, a path too long, a method not GET or POST, a page not in the
# API, no session, no or a wrong CSRF token, a viewer's change) is sent
# WITH a body on a kept-alive connection, then a second, valid request
# follows on the same connection: the refusal carries no Set-Cookie, the
# second answer is that of the second request (or the server closed the
# connection after the refusal, and nothing else came), and afterwards
# the admin's session still opens the API and the domain still runs.
. "$(dirname "$0")/../lib.sh"

integ_begin "web refusals" kvm root minios "cmd:curl" "cmd:python3"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
J='Content-Type: application/json'

printf 'alice-secret-1\n' | lodge web-passwd alice >"$T/pw.out" 2>&1 &&
printf 'bob-secret-22\n' | lodge web-passwd bob --role viewer >>"$T/pw.out" 2>&1 ||
	{ fail "web refusals" "web-passwd: $(cat "$T/pw.out")"; exit 0; }
"$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
up() { curl -s -o /dev/null "$URL/"; }
wait_until 20 up || { fail "web refusals" "lodge web did not answer: $(cat "$T/web.log")"; exit 0; }

printf 'name = "wref"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$DOMS/wref.cfg"
lodge create wref >/dev/null || { fail "web refusals" "lodge create failed"; exit 0; }
state() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $5 }'; }

# login USER PASSWORD: "SESSIONID CSRF"
login() {
	curl -s -D "$T/hdr" -o "$T/body" -H "$J" -d "{\"user\":\"$1\",\"password\":\"$2\"}" "$URL/api/login" >/dev/null
	sid=$(sed -n 's/^[Ss]et-[Cc]ookie: lodge_session=\([0-9a-f]*\);.*/\1/p' "$T/hdr")
	csrf=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body" 2>/dev/null)
	echo "$sid $csrf"
}
read -r ASID ACSRF <<<"$(login alice alice-secret-1)"
read -r BSID BCSRF <<<"$(login bob bob-secret-22)"
[ -n "$ASID" ] && [ -n "$BSID" ] || { fail "web refusals" "no sessions: $(cat "$T/hdr" "$T/body")"; exit 0; }

# The refusals: NAME STATUS then the request as python3 builds it.
cat >"$T/refuse.py" <<'PY'
import json, socket, sys
port, asid, acsrf, bsid, bcsrf = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
host = "127.0.0.1:" + port
A = "Cookie: lodge_session=%s\r\nX-CSRF-Token: %s\r\n" % (asid, acsrf)
B = "Cookie: lodge_session=%s\r\nX-CSRF-Token: %s\r\n" % (bsid, bcsrf)
login = '{"user":"alice","password":"alice-secret-1"}'
def req(method, path, headers, body, host=host, ctype="application/json", clen=None):
    b = body.encode()
    h = "%s %s HTTP/1.1\r\nHost: %s\r\n%s" % (method, path, host, headers)
    if ctype:
        h += "Content-Type: %s\r\n" % ctype
    h += "Content-Length: %s\r\n\r\n" % (len(b) if clen is None else clen)
    return h.encode() + b
big = "x" * (70 * 1024)
cases = [
    ("a bad Host on logout", 403, req("POST", "/api/logout", A, "{}", host="evil.example:" + port)),
    ("a bad Host on pause", 403, req("POST", "/api/domains/wref/pause", A, "{}", host="evil.example")),
    ("a foreign Origin on logout", 403, req("POST", "/api/logout", A + "Origin: http://evil.example\r\n", "{}")),
    ("a foreign Origin on pause", 403, req("POST", "/api/domains/wref/pause", A + "Origin: http://evil.example\r\n", "{}")),
    ("a foreign Origin on login", 403, req("POST", "/api/login", "Origin: http://evil.example\r\n", login)),
    ("text/plain on logout", 415, req("POST", "/api/logout", A, "{}", ctype="text/plain")),
    ("text/plain on login", 415, req("POST", "/api/login", "", login, ctype="text/plain")),
    ("form-urlencoded on pause", 415, req("POST", "/api/domains/wref/pause", A, "{}", ctype="application/x-www-form-urlencoded")),
    ("a chunked body on logout", 411, ("POST /api/logout HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n" % (host, A)).encode()),
    ("a bad Content-Length on logout", 400, req("POST", "/api/logout", A, "{}", clen="2x")),
    ("a body of 70 KiB on pause", 413, req("POST", "/api/domains/wref/pause", A, big)),
    ("a path too long", 414, req("POST", "/api/logout" + "/x" * 200, A, "{}")),
    ("a page not in the API", 404, req("POST", "/index.html", A, "{}")),
    ("a PUT", 405, req("PUT", "/api/logout", A, "{}")),
    ("no session on pause", 401, req("POST", "/api/domains/wref/pause", "X-CSRF-Token: %s\r\n" % acsrf, "{}")),
    ("no CSRF token on logout", 403, req("POST", "/api/logout", "Cookie: lodge_session=%s\r\n" % asid, "{}")),
    ("a wrong CSRF token on pause", 403, req("POST", "/api/domains/wref/pause",
        "Cookie: lodge_session=%s\r\nX-CSRF-Token: %s\r\n" % (asid, "0" * 64), "{}")),
    ("bob's CSRF with alice's session", 403, req("POST", "/api/logout", "Cookie: lodge_session=%s\r\nX-CSRF-Token: %s\r\n" % (asid, bcsrf), "{}")),
    ("a viewer's pause", 403, req("POST", "/api/domains/wref/pause", B, "{}")),
    ("a viewer's destroy", 403, req("POST", "/api/domains/wref/destroy", B, "{}")),
]
second = ("GET /api/session HTTP/1.1\r\nHost: %s\r\nCookie: lodge_session=%s\r\n\r\n" % (host, asid)).encode()

def read_response(s, buf):
    """One response off s: (status, headers, body, rest) or None if closed first."""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None, buf
        buf += d
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        raise ValueError("not an HTTP response: %r" % head[:120])
    hdrs = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        hdrs.setdefault(k.strip().lower(), []).append(v.strip())
    n = int(hdrs.get("content-length", ["0"])[0])
    while len(buf) < n:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    return (status, hdrs, buf[:n]), buf[n:]

bad = 0
for name, want, data in cases:
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.settimeout(20)
    try:
        s.sendall(data)
    except OSError:
        pass        # the server may close before the whole body: that is its answer
    try:
        first, buf = read_response(s, b"")
    except ValueError as e:
        first, buf = None, b""
    why = []
    if first is None:
        why.append("no answer")
    else:
        if first[0] != want:
            why.append("status %d, not %d" % (first[0], want))
        if "set-cookie" in first[1]:
            why.append("the refusal set a cookie: %s" % first[1]["set-cookie"])
    after = "closed"
    if first is not None:
        try:
            s.sendall(second)
            r2, buf = read_response(s, buf)
        except OSError:
            r2 = None
        except ValueError as e:
            r2 = None
            why.append("the second request's answer is %s" % e)
        if r2 is not None:
            after = "kept"
            ok = r2[0] == 200 and json.loads(r2[2] or b"null") and json.loads(r2[2]).get("user") == "alice"
            if not ok:
                why.append("the second request on the connection got %d %r" % (r2[0], r2[2][:120]))
            s.settimeout(1)
            try:
                extra = s.recv(65536)
            except socket.timeout:
                extra = b""
            if extra:
                why.append("more came after it: %r" % extra[:120])
        elif buf:
            why.append("after the refusal came %r" % buf[:120])
    s.close()
    if why:
        bad += 1
        print("FAIL: %s with a body: %s" % (name, "; ".join(why)))
    else:
        print("PASS: %s with a body: %d, no cookie, connection %s%s" % (name, want, after,
              ", the next request answered right" if after == "kept" else ""))
PY
python3 "$T/refuse.py" "$PORT" "$ASID" "$ACSRF" "$BSID" "$BCSRF"

c=$(curl -s -o "$T/body" -w '%{http_code}' -H "Cookie: lodge_session=$ASID" "$URL/api/session")
if [ "$c" = 200 ] && grep -q '"user":"alice"' "$T/body" && [ "$(state wref)" = running ]; then
	pass "after every refusal alice's session still opens the API and wref still runs"
else
	fail "state after refusals" "session $c $(cat "$T/body"); wref $(state wref)"
fi
