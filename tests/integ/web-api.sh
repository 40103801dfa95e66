#!/bin/bash
# The web interface's defences and JSON API, with curl against a lodge web
# the test starts on a free loopback port with its own --root: no session
# is 401, a wrong Host or Origin 403, a state change without the CSRF
# token 403, a viewer's destroy 403; 20 bad logins in a row are refused;
# a 10 MiB body is refused unread; a non-loopback --listen without TLS
# does not start; with a self-signed certificate it serves HTTPS; an
# admin's pause through the API is the domain's and the event log names
# the web user.  A create with a new disk is a job: the server answers
# while it runs, and one that fails after its disk (and bridge) were made
# leaves none of them.
. "$(dirname "$0")/../lib.sh"

integ_begin "web API" kvm root minios "cmd:curl" "cmd:openssl" "cmd:python3"
LOG=$ROOT/var/log/lodge/lodge.log
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
J='Content-Type: application/json'

# users: an admin and a viewer; the password from stdin, never argv
printf 'alice-secret-1\n' | lodge web-passwd alice >"$T/pw.out" 2>&1 &&
printf 'bob-secret-22\n' | lodge web-passwd bob --role viewer >>"$T/pw.out" 2>&1
users=$ROOT/etc/lodge/web-users
if [ "$(stat -c %a "$users")" = 600 ] && grep -Eq '^alice:admin:\$y\$' "$users" && grep -Eq '^bob:viewer:\$y\$' "$users" &&
   ! grep -q secret "$users"; then
	pass "lodge web-passwd keeps yescrypt hashes and roles in etc/lodge/web-users, mode 600"
else
	fail "web-passwd" "$(cat "$T/pw.out"; ls -l "$users"; cat "$users")"
fi
msg=$(printf 'short\n' | lodge web-passwd carol 2>&1); rc=$?
msg2=$(printf 'long-enough-1\n' | lodge web-passwd 'Carol1' 2>&1); rc2=$?
if [ $rc -ne 0 ] && [ $rc2 -ne 0 ] && ! grep -q '^carol' "$users" && [ "$(wc -l <<<"$msg")" = 1 ]; then
	pass "a short password and a bad user name are refused, one line each: $msg / $msg2"
else
	fail "web-passwd refusals" "rc $rc: $msg; rc $rc2: $msg2"
fi

# a non-loopback --listen without TLS refuses to start, in one line
msg=$(timeout 10 "$LODGE" --root "$ROOT" web --listen "0.0.0.0:$PORT" 2>&1); rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <<<"$msg")" = 1 ] && grep -q 'TLS' <<<"$msg"; then
	pass "--listen 0.0.0.0 without TLS refuses to start: $msg"
else
	fail "non-loopback without TLS" "rc $rc: $msg"
fi

# What this host lends a web user: Mini-OS's directory for kernels.
mkdir -p "$ROOT/etc/lodge"
printf 'kernel_dirs = [ "%s" ]\n' "$(dirname "$MINIOS")" >>"$ROOT/etc/lodge/lodge.conf"
# The web server's lodge-hyp, held while the FIFO $T/hold is there: it says
# so ($T/held), then reads one word from it: go starts the domain, fail
# refuses it (as lodge-hyp refusing a domain would).  A create is thus
# stopped at a known point, after its disk and bridge were made.
cat >"$T/hyp" <<EOF
#!/bin/sh
if [ -p "$T/hold" ]; then
	: >"$T/held"
	read word <"$T/hold"
	[ "\$word" = go ] || { echo "lodge-hyp: refused by the test" >&2; exit 1; }
fi
exec "$HYP" "\$@"
EOF
chmod +x "$T/hyp"
hold() { rm -f "$T/held"; mkfifo "$T/hold"; }
release() { timeout 20 sh -c 'echo "$1" >"$2"' - "$1" "$T/hold"; rm -f "$T/hold"; }
held() { [ -e "$T/held" ]; }
LODGE_HYP=$T/hyp ${WEB_WRAP:-} "$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
WEB_PID=$!
up() { curl -s -o /dev/null "$URL/"; }
if ! wait_until 20 up; then
	fail "web API" "lodge web did not answer: $(cat "$T/web.log")"
	exit 0
fi

# code ARGS...: the HTTP status curl got
code() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }
login() {  # USER PASSWORD JAR: the status; the CSRF token in $T/csrf-USER
	local c
	c=$(code -c "$3" -H "$J" -d "{\"user\":\"$1\",\"password\":\"$2\"}" "$URL/api/login")
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body" >"$T/csrf-$1" 2>/dev/null
	echo "$c"
}

c=$(code "$URL/api/domains")
if [ "$c" = 401 ]; then pass "no session: 401 ($(cat "$T/body"))"; else fail "no session" "$c $(cat "$T/body")"; fi

curl -s -D "$T/hdr" -o "$T/body" -c "$T/alice.jar" -H "$J" -d '{"user":"alice","password":"alice-secret-1"}' "$URL/api/login"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body" >"$T/csrf-alice"
A=(-b "$T/alice.jar")
ACSRF=(-H "X-CSRF-Token: $(cat "$T/csrf-alice")")
if grep -qi '^set-cookie: lodge_session=[0-9a-f]\{64\}; Path=/; HttpOnly; SameSite=Strict' "$T/hdr" &&
   ! grep -qi '^set-cookie:.*Secure' "$T/hdr" && [ "$(code "${A[@]}" "$URL/api/domains")" = 200 ]; then
	pass "a login sets an HttpOnly, SameSite=Strict session cookie that opens the API"
else
	fail "login cookie" "$(cat "$T/hdr" "$T/body")"
fi

c1=$(code "${A[@]}" -H 'Host: evil.example:'"$PORT" "$URL/api/domains")
c2=$(code "${A[@]}" -H 'Host: evil.example' "$URL/")
c3=$(code "${A[@]}" -H "Origin: http://evil.example" "$URL/api/domains")
c4=$(code "${A[@]}" "${ACSRF[@]}" -H "Origin: http://evil.example" -X POST "$URL/api/logout")
c5=$(code "${A[@]}" -H "Origin: http://127.0.0.1:$PORT" "$URL/api/domains")
sid=$(awk '$6 == "lodge_session" { print $7 }' "$T/alice.jar")
c6=$(code -H "Cookie: lodge_session=$sid" -H "Host: localhost:$PORT" "$URL/api/domains")
if [ "$c1$c2$c3$c4" = 403403403403 ] && [ "$c5$c6" = 200200 ]; then
	pass "a wrong Host (DNS rebinding) or Origin is 403, the page included; its own are served"
else
	fail "Host and Origin" "host $c1 $c2, origin $c3 $c4, own $c5 $c6"
fi

# a Mini-OS domain made with the CLI
printf 'name = "wapi"\nmemory = 32\nkernel = "%s"\n' "$MINIOS" >"$DOMS/wapi.cfg"
lodge create wapi >/dev/null || { fail "web API" "lodge create failed"; exit 0; }
state() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $5 }'; }

c=$(code "${A[@]}" -X POST "$URL/api/domains/wapi/pause")
c2=$(code "${A[@]}" -H 'X-CSRF-Token: 0000000000000000000000000000000000000000000000000000000000000000' \
	-X POST "$URL/api/domains/wapi/pause")
if [ "$c$c2" = 403403 ] && [ "$(state wapi)" = running ]; then
	pass "a state change without the CSRF token, or with a wrong one, is 403 and changes nothing"
else
	fail "CSRF" "$c $c2, state $(state wapi)"
fi

c=$(code "${A[@]}" "${ACSRF[@]}" -X POST "$URL/api/domains/wapi/pause")
if [ "$c" = 200 ] && wait_until 10 test "$(state wapi)" = paused &&
   wait_until 10 grep -Eq " wapi paused uid=0,pid=[0-9]+,via=web-alice -$" "$LOG"; then
	pass "an admin's pause through the API pauses it; the event log says via=web-alice"
else
	fail "admin pause" "$c $(cat "$T/body"); state $(state wapi); $(tail -2 "$LOG")"
fi

j=$(curl -s "${A[@]}" "$URL/api/domains")
cli=$(lodge list -l -o json)
same=$(python3 -c '
import json, sys
web, cli = json.loads(sys.argv[1]), json.loads(sys.argv[2])
w = {d["name"]: d for d in web}; c = {d["name"]: d for d in cli}
keys = ("id", "state", "memory_mib", "vcpus", "maxmem_mib", "pid")
print(set(w) == set(c) and all(w[n].keys() == c[n].keys() and all(w[n][k] == c[n][k] for k in keys) for n in w))
' "$j" "$cli")
one=$(code "${A[@]}" "$URL/api/domains/wapi"; python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' "$T/body")
if [ "$same" = True ] && [ "$one" = "200paused" ]; then
	pass "GET /api/domains has lodge list -l -o json's keys and values; GET /api/domains/wapi its row"
else
	fail "domains JSON" "$same $one; web $j; cli $cli"
fi

# GET /api/networks is lodge network-list -o json (no domain): a network's
# file written here (network-create would start its bridge and dnsmasq on
# this host; a stopped one is listed all the same)
mkdir -p "$ROOT/etc/lodge/networks"
printf 'subnet = "10.79.0.0/24"\nmode = "isolated"\nbridge = "lwebnet%s"\nautostart = false\n' $$ \
	>"$ROOT/etc/lodge/networks/wnet.cfg"
c=$(code "${A[@]}" "$URL/api/networks")
cli=$(lodge network-list -o json 2>&1)
same=$(python3 -c '
import json, sys
web, cli = json.load(open(sys.argv[1])), json.loads(sys.argv[2])
print(web == cli and [n["network"] for n in web] == ["wnet"] and web[0]["mode"] == "isolated" and
      web[0]["subnet"] == "10.79.0.0/24" and web[0]["dnsmasq"] == "stopped")
' "$T/body" "$cli" 2>&1)
if [ "$c" = 200 ] && [ "$same" = True ]; then
	pass "GET /api/networks is lodge network-list -o json: wnet, isolated, 10.79.0.0/24, dnsmasq stopped"
else
	fail "GET /api/networks" "$c $(cat "$T/body") / cli: $cli / $same"
fi

detail=$(curl -s "${A[@]}" "$URL/api/domains/wapi" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["vcpu_list"]), isinstance(d["disks"], list) and isinstance(d["vifs"], list),
      any(" wapi created " in l for l in d["history"]), "Mini-OS" in (d.get("console_tail") or ""))')
if [ "$detail" = "1 True True True" ]; then
	pass "GET /api/domains/wapi adds its vCPUs, disks, vifs, console tail and event log history"
else
	fail "domain detail" "$detail"
fi

[ "$(login bob bob-secret-22 "$T/bob.jar")" = 200 ] || fail "viewer login" "$(cat "$T/body")"
c=$(code -b "$T/bob.jar" -H "X-CSRF-Token: $(cat "$T/csrf-bob")" -X POST "$URL/api/domains/wapi/destroy")
g=$(code -b "$T/bob.jar" "$URL/api/domains")
if [ "$c" = 403 ] && [ "$g" = 200 ] && [ "$(state wapi)" = paused ]; then
	pass "a viewer may look (200) but its destroy is 403 and the domain stays: $(cat "$T/body")"
else
	fail "viewer destroy" "destroy $c, list $g, state $(state wapi)"
fi

# create from the form's fields, checked as the dashboard's form checks them
c=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" -d "{\"name\":\"wnew\",\"memory_mib\":1,\"kernel\":\"$MINIOS\"}" "$URL/api/domains")
bad=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["field"], d["error"])' "$T/body")
c2=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" -d "{\"name\":\"wnew\",\"memory_mib\":32,\"kernel\":\"$MINIOS\"}" "$URL/api/domains")
c3=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" -d "{\"name\":\"wnew\",\"memory_mib\":32,\"kernel\":\"$MINIOS\"}" "$URL/api/domains")
if [ "$c" = 400 ] && grep -q '^memory_mib ' <<<"$bad" && [ "$c2" = 201 ] && [ "$c3" = 409 ] &&
   [ "$(state wnew)" = running ] && [ -f "$DOMS/wnew.cfg" ] &&
   wait_until 10 grep -Eq " wnew created uid=0,pid=[0-9]+,via=web-alice" "$LOG"; then
	pass "POST /api/domains: a bad field is 400 naming it ($bad), a good form runs (config kept, via=web-alice), its name again 409"
else
	fail "create" "bad $c ($bad), create $c2, again $c3, state $(state wnew); $(cat "$T/body")"
fi

# the server is root, its users are not: a kernel outside kernel_dirs is refused
c=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" -d '{"name":"wsteal","memory_mib":32,"kernel":"/etc/passwd"}' "$URL/api/domains")
if [ "$c" = 403 ] && grep -q "not this host's to give" "$T/body" && [ ! -e "$DOMS/wsteal.cfg" ] &&
   [ -z "$(state wsteal)" ]; then
	pass "POST /api/domains with a kernel outside kernel_dirs (/etc/passwd): 403, nothing made: $(cat "$T/body")"
else
	fail "a kernel the host does not lend" "$c $(cat "$T/body")"
fi

# the dashboard form's choices: a new:SIZE disk made (sparse, ext4 if
# asked) in the image directory; a bad size, format or new bridge name is
# 400 naming its field, with nothing made
job_state() {  # ID: the job's state
	curl -s "${A[@]}" "$URL/api/jobs" | python3 -c '
import json, sys
print(next((j["state"] + ":" + (j.get("error") or "") for j in json.load(sys.stdin) if j["id"] == int(sys.argv[1])), "none"))' "$1"
}
job_id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/body"; }
ended() { [[ $(job_state "$1") != running* ]]; }
post() { code --max-time 60 "${A[@]}" "${ACSRF[@]}" -H "$J" -d "$1" "$URL/api/domains"; }   # a create held in the loop fails, not hangs
f1=$(post "{\"name\":\"wdisk\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:0\"}"; grep -o '"field":"[a-z_]*"' "$T/body")
f2=$(post "{\"name\":\"wdisk\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:16\",\"disk_format\":\"xfs\"}"; grep -o '"field":"[a-z_]*"' "$T/body")
f3=$(post "{\"name\":\"wdisk\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:16\",\"bridge\":\"new:a-bridge-name-too-long\"}"; grep -o '"field":"[a-z_]*"' "$T/body")
left=$(ls "$ROOT"/var/lib/lodge/images/wdisk* 2>/dev/null; ip link show a-bridge-name-too-long 2>/dev/null)
if [ "$f1$f2$f3" = '400"field":"disk"400"field":"disk_format"400"field":"bridge"' ] && [ -z "$left" ]; then
	pass "POST /api/domains with new:0, disk_format xfs, a new bridge name too long: 400 naming the field, nothing made"
else
	fail "new:SIZE refusals" "$f1 / $f2 / $f3 / left: $left"
fi

# A create with a new disk is a job (mkfs.ext4 takes seconds): held at its
# lodge-hyp, after the disk was made, the server answers a GET meanwhile.
img=$ROOT/var/lib/lodge/images/wdisk-vda.img
hold
c=$(post "{\"name\":\"wdisk\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:16\",\"disk_format\":\"ext4\"}")
id=$(job_id 2>/dev/null)
if [ "$c" = 202 ] && wait_until 60 held; then
	g=$(code "${A[@]}" "$URL/api/domains")
	during=$(job_state "$id")
	release go
	if [ "$g" = 200 ] && [ "$during" = "running:" ] && wait_until 60 ended "$id" && [ "$(job_state "$id")" = "done:" ] &&
	   [ "$(stat -c %s "$img")" = $((16 << 20)) ] && [ "$(blkid -o value -s TYPE "$img")" = ext4 ] &&
	   [ "$(state wdisk)" = running ] && grep -q "wdisk-vda.img" "$DOMS/wdisk.cfg"; then
		pass "POST /api/domains with disk new:16 and ext4: a job (202); a GET answered (200) while it still ran; then $img (16 MiB, ext4) and wdisk running on it"
	else
		fail "new:SIZE disk as a job" "GET $g while the job was $during; job $(job_state "$id"); $img: $(ls -l "$img"; blkid "$img") state $(state wdisk)"
	fi
else
	release fail
	fail "new:SIZE disk as a job" "$c $(cat "$T/body"); held: $(ls "$T/held" 2>&1); job $(job_state "$id")"
fi

# One that fails after its disk was made (its lodge-hyp refuses it) leaves
# neither the disk nor the config; the same name meanwhile is 409.
img=$ROOT/var/lib/lodge/images/wfail-vda.img
hold
c=$(post "{\"name\":\"wfail\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:16\",\"disk_format\":\"ext4\"}")
id=$(job_id 2>/dev/null)
if [ "$c" = 202 ] && wait_until 60 held; then
	made=$(ls "$img" "$DOMS/wfail.cfg" 2>/dev/null | wc -l)
	again=$(post "{\"name\":\"wfail\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:8\"}")
	release fail
	if [ "$made" = 2 ] && [ "$again" = 409 ] && wait_until 60 ended "$id" &&
	   [[ $(job_state "$id") == "failed:domain wfail did not start: "*"refused by the test"* ]] &&
	   [ ! -e "$img" ] && [ ! -e "$DOMS/wfail.cfg" ] && [ -z "$(state wfail)" ]; then
		pass "a create whose domain does not start after its disk was made: the job failed ($(job_state "$id")), its disk and config removed; the name meanwhile 409"
	else
		fail "a failed create's disk" "made $made, again $again, job $(job_state "$id"); left: $(ls "$img" "$DOMS/wfail.cfg" 2>&1)"
	fi
else
	release fail
	fail "a failed create's disk" "$c $(cat "$T/body"); job $(job_state "$id")"
fi

# the WebSockets (python3-websocket, for Debian's /usr/bin/python3)
ws() {  # MODE PATH [ORIGIN]: the python below, as alice
	/usr/bin/python3 - "$1" "ws://127.0.0.1:$PORT$2" "lodge_session=$sid" "${3-http://127.0.0.1:$PORT}" <<'PY'
import json, sys, time, websocket
mode, url, cookie, origin = sys.argv[1:5]
proto = "lodge-console" if "/console/" in url else "lodge-updates"
try:
    w = websocket.create_connection(url, timeout=10, cookie=cookie, origin=origin or None, subprotocols=[proto],
                                    suppress_origin=not origin)
except Exception as e:
    print("refused", type(e).__name__); sys.exit(0)
if mode == "updates":
    # Once a second, by the server's own clock (each message's "t", when
    # it was built), not this client's (a loaded host delays the reading):
    # every message a new sample, and from the first to the first 2 s after
    # it by that clock at most 4 of them (2 or 3 ticks of a second; a
    # message sent on every wakeup would be many more).
    a = json.loads(w.recv()); msgs = [a]
    while msgs[-1]["t"] < a["t"] + 2000 and len(msgs) < 50:
        msgs.append(json.loads(w.recv()))
    b = msgs[1]
    names = [d["name"] for d in b["domains"]]
    ts = [m["t"] for m in msgs]
    print("ok", "wapi" in names, "io" in b["domains"][-1], len(msgs) <= 4, all(x < y for x, y in zip(ts, ts[1:])),
          "ms:" + ",".join(str(y - x) for x, y in zip(ts, ts[1:])))
elif mode == "first":
    print(" ".join(d["name"] for d in json.loads(w.recv())["domains"]))
elif mode == "console":
    w.send_binary(b"help\r")
    got, end = b"", time.monotonic() + 15
    while b"triple fault" not in got and time.monotonic() < end:
        op, data = w.recv_data()
        if op == websocket.ABNF.OPCODE_TEXT: print("text", data.decode()); break
        got += data
    print("ok", b"triple fault" in got)
elif mode == "busy":
    op, data = w.recv_data()
    print("text" if op == websocket.ABNF.OPCODE_TEXT else "binary", data.decode(errors="replace")[:200])
PY
}
out=$(ws updates /api/ws/updates)
bad=$(ws updates /api/ws/updates http://evil.example)
none=$(ws updates /api/ws/updates "")
if [[ $out == "ok True True True True ms:"* ]] && [[ $bad == refused* ]] && [[ $none == refused* ]]; then
	pass "the updates WebSocket sends the domains (with I/O counters) once a second (by the server's clock, ${out##* ms:} ms apart); another Origin or none is refused"
else
	fail "updates WebSocket" "$out; evil: $bad; none: $none"
fi
# The first message to a first watcher is a fresh one: not the last one
# built for the watchers before, with a domain destroyed since.
lodge destroy wdisk >/dev/null 2>&1
first=$(ws first /api/ws/updates)
if [ -z "$(state wdisk)" ] && [[ " $first " == *" wapi "* ]] && [[ " $first " != *" wdisk "* ]]; then
	pass "a first watcher's first update is fresh: wdisk, destroyed after the last watcher left, is not in it ($first)"
else
	fail "a first watcher's first update" "domains: $first (wdisk $(state wdisk))"
fi
out=$(ws console /api/ws/console/wnew)
again=$(ws console /api/ws/console/wnew)
if [ "$out" = "ok True" ] && [ "$again" = "ok True" ]; then
	pass "the console WebSocket: help typed into Mini-OS's console brings its help back; closed, the console is free again"
else
	fail "console WebSocket" "$out; again: $again"
fi

# one console at a time: a viewer reads only and cannot take it over; an
# admin is told it is in use, then takes it over with ?force=1
bsid=$(awk '$6 == "lodge_session" { print $7 }' "$T/bob.jar")
out=$(/usr/bin/python3 - "ws://127.0.0.1:$PORT/api/ws/console/wnew" "$sid" "$bsid" "http://127.0.0.1:$PORT" <<'PY'
import json, sys, time, websocket
url, alice, bob, origin = sys.argv[1:5]
def conn(sid, force=False):
    return websocket.create_connection(url + ("?force=1" if force else ""), timeout=10, cookie="lodge_session=" + sid,
                                       origin=origin, subprotocols=["lodge-console"])
b = conn(bob)
b.send_binary(b"echo bobwashere\r")
b2 = conn(bob, force=True)                       # a viewer's force is not one
op, data = b2.recv_data()
viewer_refused = op == websocket.ABNF.OPCODE_TEXT and json.loads(data).get("in_use")
a1 = conn(alice)
op, data = a1.recv_data()
in_use = op == websocket.ABNF.OPCODE_TEXT and json.loads(data).get("in_use")
a = conn(alice, force=True)
a.send_binary(b"echo alice-mark\r")
got, end = b"", time.monotonic() + 15
while got.count(b"alice-mark") < 2 and time.monotonic() < end:
    op, data = a.recv_data()
    if op == websocket.ABNF.OPCODE_BINARY: got += data
bob_closed = False
try:
    while True:
        op, data = b.recv_data()
        if op == websocket.ABNF.OPCODE_TEXT and "closed" in json.loads(data): bob_closed = True; break
except Exception:
    bob_closed = True
print(bool(viewer_refused), bool(in_use), got.count(b"alice-mark") >= 2, b"bobwashere" not in got, bob_closed)
PY
)
if [ "$out" = "True True True True True" ]; then
	pass "one console at a time: in use is said (a viewer may not force), ?force=1 takes it over, a viewer's keys never reach the guest"
else
	fail "console takeover and read-only" "viewer refused, in use, alice echoed, no bob, bob closed: $out"
fi

# save and restore, jobs in a child process each: the file always save_dir/NAME.save
install -d -m 700 "$ROOT/var/lib/lodge/save"
c=$(code "${A[@]}" "${ACSRF[@]}" -X POST "$URL/api/domains/wapi/save"); id=$(job_id)
if [ "$c" = 202 ] && wait_until 60 ended "$id" && [ "$(job_state "$id")" = "done:" ] &&
   [ -s "$ROOT/var/lib/lodge/save/wapi.save" ] && ! lodge list wapi >/dev/null 2>&1 &&
   grep -Eq " wapi saved uid=0,pid=[0-9]+,via=web-alice" "$LOG"; then
	pass "POST .../save runs as a job (202, then done): save_dir/wapi.save written, the domain gone, via=web-alice"
else
	fail "save" "$c, job $id $(job_state "$id"); $(ls -l "$ROOT/var/lib/lodge/save"); $(tail -2 "$LOG")"
fi
c=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" -d '{"name":"wapi"}' "$URL/api/restore"); id=$(job_id)
if [ "$c" = 202 ] && wait_until 60 ended "$id" && [ "$(job_state "$id")" = "done:" ] && lodge list wapi >/dev/null; then
	pass "POST /api/restore {name} brings wapi back from save_dir/wapi.save"
else
	fail "restore" "$c, job $id $(job_state "$id")"
fi
c=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" -d '{"dest":"/run/some.sock"}' "$URL/api/domains/wapi/migrate")
c2=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" -d '{"name":"../../etc/x"}' "$URL/api/restore")
if [ "$c$c2" = 400400 ]; then
	pass "a migration to a socket path and a restore of a path are refused (400)"
else
	fail "job refusals" "$c $c2"
fi

# 20 bad logins in a row from one address: refused before the 20th, and
# then the right password is refused too
codes=
for i in $(seq 20); do codes+=" $(code -H "$J" -d '{"user":"alice","password":"wrong-guess"}' "$URL/api/login")"; done
right=$(code -H "$J" -d '{"user":"alice","password":"alice-secret-1"}' "$URL/api/login")
if grep -q ' 401' <<<"$codes" && [ "$(grep -o ' 429' <<<"$codes" | wc -l)" -ge 10 ] && [ "$right" = 429 ]; then
	pass "20 bad logins in a row: refused (429) after $(grep -o ' 401' <<<"$codes" | wc -l); then even the right password"
else
	fail "login rate limit" "codes$codes; right $right"
fi

head -c $((10 << 20)) /dev/zero | tr '\0' 'x' >"$T/big"
c=$(code "${A[@]}" "${ACSRF[@]}" -H "$J" --data-binary @"$T/big" "$URL/api/domains/wapi/mem-set")
if [ "$c" = 413 ] && kill -0 $WEB_PID && [ "$(code "${A[@]}" "$URL/api/domains")" = 200 ]; then
	pass "a 10 MiB body is refused (413) and the server serves on"
else
	fail "10 MiB body" "$c $(head -c 200 "$T/body")"
fi

c=$(code --path-as-is "$URL/../../etc/passwd")
c2=$(code "$URL/lodge.cfg")
if [ "$c" != 200 ] && [ "$c2" = 404 ]; then
	pass "only the page's own files are served ($c, $c2)"
else
	fail "static files" "$c $c2"
fi

c=$(code "${A[@]}" "${ACSRF[@]}" -X POST "$URL/api/logout")
c2=$(code "${A[@]}" "$URL/api/domains")
if [ "$c$c2" = 200401 ]; then pass "after logout the session is gone (401)"; else fail "logout" "$c $c2"; fi
kill $WEB_PID; wait $WEB_PID 2>/dev/null

# a new bridge (new:NAME) is the host's: made in a network namespace of the
# test's own, by a lodge web running there; the domain's vif on it.  One
# of a name there already is 409, with nothing made; one made for a
# domain that then does not start is deleted again, with its new disk.
NSB=lodge-webbr-$$
netns_add "$NSB"
ip netns exec "$NSB" ip link set lo up
ip netns exec "$NSB" ip link add lwebtaken type bridge
PORTB=$(free_port)
ip netns exec "$NSB" env LODGE_HYP="$T/hyp" "$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORTB" >"$T/webb.log" 2>&1 &
WEBB_PID=$!                # ip netns exec and env exec: this is lodge web
at_exit 'kill $WEBB_PID 2>/dev/null; ip netns exec "$NSB" "$LODGE" --root "$ROOT" destroy wbr >/dev/null 2>&1'
nsb() { ip netns exec "$NSB" curl -s --max-time 60 -o "$T/body" -w '%{http_code}' "$@"; }
wait_until 20 nsb "http://127.0.0.1:$PORTB/" >/dev/null
nsb -c "$T/b.jar" -H "$J" -d '{"user":"alice","password":"alice-secret-1"}' "http://127.0.0.1:$PORTB/api/login" >/dev/null
BCSRF=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body" 2>/dev/null)
bpost() { nsb -b "$T/b.jar" -H "X-CSRF-Token: $BCSRF" -H "$J" -d "$1" "http://127.0.0.1:$PORTB/api/domains"; }
c1=$(bpost "{\"name\":\"wbr\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:8\",\"bridge\":\"new:lwebtaken\"}"; grep -o '"field":"[a-z]*"' "$T/body")
left=$(ls "$ROOT"/var/lib/lodge/images/wbr* "$DOMS/wbr.cfg" 2>/dev/null)
c2=$(bpost "{\"name\":\"wbr\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"bridge\":\"new:lwebnew\"}")
if [ "$c1" = '409"field":"bridge"' ] && [ -z "$left" ] && [ "$c2" = 201 ] &&
   ip netns exec "$NSB" ip -d link show lwebnew | grep -q ' bridge ' &&
   wait_until 10 test -n "$(ip netns exec "$NSB" ip -o link show master lwebnew)" && grep -q lwebnew "$DOMS/wbr.cfg"; then
	pass "bridge new:lwebnew makes the bridge and the domain's vif is on it; new: of a bridge there is 409, no disk made"
else
	fail "new:NAME bridge" "$c1 left: $left / $c2 $(cat "$T/body") / $(ip netns exec "$NSB" ip -o link 2>&1 | cut -c1-80) / $(cat "$T/webb.log")"
fi
bjob_state() {  # ID: the job's state, from the server in the namespace
	nsb -b "$T/b.jar" "http://127.0.0.1:$PORTB/api/jobs" >/dev/null
	python3 -c '
import json, sys
print(next((j["state"] + ":" + (j.get("error") or "") for j in json.load(open(sys.argv[2])) if j["id"] == int(sys.argv[1])), "none"))' "$1" "$T/body"
}
bended() { [[ $(bjob_state "$1") != running* ]]; }
img=$ROOT/var/lib/lodge/images/wbrx-vda.img
hold
c=$(bpost "{\"name\":\"wbrx\",\"memory_mib\":32,\"kernel\":\"$MINIOS\",\"disk\":\"new:8\",\"bridge\":\"new:lwebgone\"}")
id=$(job_id 2>/dev/null)
if [ "$c" = 202 ] && wait_until 60 held; then
	made=$(ls "$img" 2>/dev/null; ip netns exec "$NSB" ip -o link show lwebgone 2>/dev/null | grep -c lwebgone)
	release fail
	if [ "$made" = "$img
1" ] && wait_until 60 bended "$id" && [[ $(bjob_state "$id") == failed:* ]] && [ ! -e "$img" ] &&
	   [ ! -e "$DOMS/wbrx.cfg" ] && ! ip netns exec "$NSB" ip link show lwebgone >/dev/null 2>&1; then
		pass "a create that made bridge lwebgone and its disk, then did not start: both removed, and its config ($(bjob_state "$id"))"
	else
		fail "a failed create's bridge" "made: $made; job $(bjob_state "$id"); left: $(ls "$img" "$DOMS/wbrx.cfg" 2>&1; ip netns exec "$NSB" ip -o link show lwebgone 2>&1)"
	fi
else
	release fail
	fail "a failed create's bridge" "$c $(cat "$T/body")"
fi
kill $WEBB_PID; wait $WEBB_PID 2>/dev/null
ip netns exec "$NSB" "$LODGE" --root "$ROOT" destroy wbr >/dev/null 2>&1

# HTTPS with a self-signed certificate, on every address
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -keyout "$T/key.pem" -out "$T/cert.pem" \
	>/dev/null 2>&1
PORT2=$(free_port)
"$LODGE" --root "$ROOT" web --listen "0.0.0.0:$PORT2" --cert "$T/cert.pem" --key "$T/key.pem" \
	--server-name lodge.test >"$T/web2.log" 2>&1 &
WEB_PID=$!
S=https://127.0.0.1:$PORT2
ups() { curl -sk -o /dev/null "$S/"; }
if wait_until 20 ups; then
	curl -sk --cacert "$T/cert.pem" -D "$T/hdr" -o "$T/body" -H "$J" -d '{"user":"alice","password":"alice-secret-1"}' \
		"$S/api/login"
	plain=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT2/")
	if grep -qi '^set-cookie: lodge_session=.*; Secure' "$T/hdr" && grep -q '"csrf"' "$T/body" && [ "$plain" != 200 ]; then
		pass "--listen 0.0.0.0 with a self-signed certificate serves HTTPS (the cookie Secure), not plain HTTP"
	else
		fail "HTTPS" "$(cat "$T/hdr" "$T/body"); plain $plain"
	fi
	named=$(curl -sk -o /dev/null -w '%{http_code}' -H "Host: lodge.test:$PORT2" "$S/")
	other=$(curl -sk -o /dev/null -w '%{http_code}' -H "Host: other.test:$PORT2" "$S/")
	if [ "$named$other" = 200403 ]; then
		pass "--server-name lodge.test: that Host is served, another name is 403"
	else
		fail "--server-name" "lodge.test $named, other.test $other"
	fi
else
	fail "HTTPS" "no answer: $(cat "$T/web2.log")"
fi
kill $WEB_PID; wait $WEB_PID 2>/dev/null
