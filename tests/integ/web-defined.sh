#!/bin/bash
# The web API's defined domains (issue 35): GET /api/defined lists every
# config of domains_dir, off or running, with autostart; an admin starts
# one, reads and writes its config (a config the loader refuses is 400
# with FILE:LINE and leaves the file; a disk lodge.conf does not lend is
# 403), turns autostart on, deletes one (409 while it runs; its disks
# only on asking, and only under storage_dirs); a viewer may read but
# change nothing (403, the file untouched).  curl against a lodge web of
# the test's own, on a free loopback port, with its own --root.
. "$(dirname "$0")/../lib.sh"

integ_begin "web API: defined domains" kvm root minios "cmd:curl" "cmd:python3"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
J='Content-Type: application/json'
IMAGES=$ROOT/var/lib/lodge/images
mkdir -p "$IMAGES" "$T/elsewhere"

printf 'alice-secret-1\n' | lodge web-passwd alice >/dev/null 2>&1
printf 'bob-secret-22\n' | lodge web-passwd bob --role viewer >/dev/null 2>&1
truncate -s 4M "$IMAGES/w1-vda.img" "$T/elsewhere/secret.img"
printf 'name = "w1"\nmemory = 40\nkernel = "%s"\ndisk = [ "%s,raw,vda,rw" ]\n' "$MINIOS" "$IMAGES/w1-vda.img" \
	>"$DOMS/w1.cfg"
printf 'name = "w2"\nmemory = 32\nkernel = "%s"\nautostart = true\n' "$MINIOS" >"$DOMS/w2.cfg"

"$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
up() { curl -s -o /dev/null "$URL/"; }
if ! wait_until 20 up; then
	fail "web API: defined domains" "lodge web did not answer: $(cat "$T/web.log")"
	exit 0
fi
code() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }
login() {  # USER PASSWORD: the jar $T/USER.jar, the token $T/csrf-USER
	curl -s -o "$T/body" -c "$T/$1.jar" -H "$J" -d "{\"user\":\"$1\",\"password\":\"$2\"}" "$URL/api/login"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body" >"$T/csrf-$1"
}
login alice alice-secret-1
login bob bob-secret-22
as() { local u=$1; shift; code -b "$T/$u.jar" -H "X-CSRF-Token: $(cat "$T/csrf-$u")" "$@"; }
post() { local u=$1 path=$2 body=$3; as "$u" -H "$J" -d "$body" "$URL/api/defined/$path"; }
py() { python3 -c "import json, sys; doc = json.load(open(sys.argv[1])); $1" "$T/body"; }

c=$(as bob "$URL/api/defined")
if [ "$c" = 200 ] && py 'd = {r["name"]: r for r in doc}
assert d["w1"]["state"] == "off" and d["w1"]["memory_mib"] == 40 and d["w1"]["autostart"] is False
assert d["w2"]["autostart"] is True and d["w2"]["config"].endswith("/w2.cfg")'; then
	pass "GET /api/defined (a viewer): w1 off, 40 MiB, autostart false; w2 autostart true"
else
	fail "GET /api/defined" "$c $(cat "$T/body")"
fi
c=$(as bob "$URL/api/defined/w1")
if [ "$c" = 200 ] && py 'assert doc["text"].startswith("name = \"w1\"")'; then
	pass "GET /api/defined/w1: its config's text, for a viewer too"
else
	fail "GET /api/defined/w1" "$c $(cat "$T/body")"
fi

before=$(md5sum <"$DOMS/w1.cfg")
c1=$(post bob w1/start '{}')
c2=$(post bob w1/config '{"text": "name = \"w1\"\nmemory = 64\n"}')
c3=$(post bob w1/autostart '{"autostart": true}')
c4=$(post bob w1/delete '{"disks": true}')
if [ "$c1$c2$c3$c4" = 403403403403 ] && [ "$(md5sum <"$DOMS/w1.cfg")" = "$before" ] && [ -e "$IMAGES/w1-vda.img" ] &&
   ! lodge list w1 >/dev/null 2>&1; then
	pass "a viewer's start, config, autostart and delete are 403; nothing changed"
else
	fail "viewer" "$c1 $c2 $c3 $c4; $(cat "$DOMS/w1.cfg")"
fi

text=$(python3 -c 'import json,sys; print(json.dumps({"text": open(sys.argv[1]).read().replace("memory = 40", "memory = lots")}))' "$DOMS/w1.cfg")
c=$(post alice w1/config "$text")
if [ "$c" = 400 ] && py 'assert "w1.cfg:2: memory" in doc["error"]' && [ "$(md5sum <"$DOMS/w1.cfg")" = "$before" ]; then
	pass "a config the loader refuses is 400 with FILE:LINE ($(py 'print(doc["error"])')); the file is as it was"
else
	fail "bad config" "$c $(cat "$T/body")"
fi
text=$(python3 -c 'import json,sys; print(json.dumps({"text": open(sys.argv[1]).read().replace("vda,rw\" ]", "vda,rw\", \"%s,raw,vdb,rw\" ]" % sys.argv[2])}))' "$DOMS/w1.cfg" "$T/elsewhere/secret.img")
c=$(post alice w1/config "$text")
if [ "$c" = 403 ] && py 'assert "secret.img" in doc["error"]' && [ "$(md5sum <"$DOMS/w1.cfg")" = "$before" ]; then
	pass "a disk lodge.conf does not lend a web user is 403, named; the file is as it was"
else
	fail "unlent disk" "$c $(cat "$T/body")"
fi
text=$(python3 -c 'import json,sys; print(json.dumps({"text": open(sys.argv[1]).read().replace("memory = 40", "memory = 48")}))' "$DOMS/w1.cfg")
c=$(post alice w1/config "$text")
if [ "$c" = 200 ] && grep -q '^memory = 48$' "$DOMS/w1.cfg"; then
	pass "an admin's good config is saved"
else
	fail "good config" "$c $(cat "$T/body")"
fi
c=$(post alice w1/autostart '{"autostart": true}')
if [ "$c" = 200 ] && grep -q '^autostart = true$' "$DOMS/w1.cfg"; then
	pass "autostart on: the config says so"
else
	fail "autostart" "$c $(cat "$T/body")"
fi

c=$(post alice w1/start '{}')
if [ "$c" = 200 ] && lodge list w1 >/dev/null 2>&1; then
	pass "an admin's start runs it"
else
	fail "start" "$c $(cat "$T/body")"
fi
c=$(post alice w1/delete '{"disks": true}')
c2=$(as alice "$URL/api/defined")
if [ "$c" = 409 ] && [ -e "$DOMS/w1.cfg" ] && [ -e "$IMAGES/w1-vda.img" ] &&
   py 'assert [r for r in doc if r["name"] == "w1"][0]["state"] == "running"'; then
	pass "delete while it runs is 409, nothing deleted; the list says running"
else
	fail "delete while running" "$c $c2 $(cat "$T/body")"
fi
lodge destroy w1 >/dev/null 2>&1
c=$(post alice w1/delete '{"disks": true}')
if [ "$c" = 200 ] && [ ! -e "$DOMS/w1.cfg" ] && [ ! -e "$IMAGES/w1-vda.img" ] && [ -e "$T/elsewhere/secret.img" ]; then
	pass "delete with disks, once it is off: its config and its disk under storage_dirs are gone"
else
	fail "delete" "$c $(cat "$T/body"); $(ls "$DOMS" "$IMAGES")"
fi
c=$(post alice w2/delete '{}')
if [ "$c" = 200 ] && [ ! -e "$DOMS/w2.cfg" ] && [ "$(post alice w2/start '{}')" = 404 ]; then
	pass "delete of w2 (no disks asked); starting it after is 404"
else
	fail "delete w2" "$c $(cat "$T/body")"
fi
