#!/bin/bash
# Hot-plug through the web API (lodge-web(8)), with curl against a lodge
# web in this test's own network namespace: an admin's block-attach gives
# the running Mini-OS a disk it probes, and the event log names the web
# user; a viewer, a request without the CSRF token, a relative path and a
# vdev taken are refused; block-detach is a job (202) the server answers
# beside, done once the guest ejects (the lock free); a guest that ignores
# ejects makes the job fail, and force takes the disk; network-attach puts
# a vif on a bridge (the guest answers ping through it), network-detach
# takes it back (the tap gone).
. "$(dirname "$0")/../lib.sh"

integ_begin "web hot-plug" kvm root minios netns "cmd:curl" "cmd:python3"
LOG=$ROOT/var/log/lodge/lodge.log
PORT=$(in_ns python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
J='Content-Type: application/json'
conlog() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
shows() { conlog "$1" | grep -Eq -- "$2"; }
logged() { grep -Eq -- "$1" "$LOG" 2>/dev/null; }

STORE=$T/store
mkdir -p "$STORE"
truncate -s 4M "$STORE/data.img"
printf 'storage_dirs = [ "%s" ]\n' "$STORE" >"$ROOT/etc/lodge/lodge.conf"
printf 'alice-secret-1\n' | lodge web-passwd alice >/dev/null 2>&1
printf 'bob-secret-22\n' | lodge web-passwd bob --role viewer >/dev/null 2>&1
in_ns ip link set lo up
if ! lodge bridge-create whbr0 >/dev/null 2>&1 || ! in_ns ip addr add 10.83.0.1/24 dev whbr0; then
	fail "web hot-plug" "cannot make bridge whbr0 in $NS"
	exit 0
fi
printf 'name = "wh"\nmemory = 64\nvcpus = 1\nkernel = "%s"\nextra = "ip=10.83.0.2/24"\n' "$MINIOS" >"$DOMS/wh.cfg"
if ! lodge create wh >/dev/null 2>&1 || ! wait_until 30 shows wh 'hotplug: PCI hot-plug on GPE 1'; then
	fail "web hot-plug" "the guest did not boot: $(conlog wh | tail -3)"
	exit 0
fi
track_pid "$(field wh 9)" $(pgrep -P "$(field wh 9)")
# ip netns exec execs lodge: $! is lodge web's own pid.
ip netns exec "$NS" "$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
WEB_PID=$!
up() { in_ns curl -s -o /dev/null "$URL/"; }
if ! wait_until 20 up; then
	fail "web hot-plug" "lodge web did not answer: $(cat "$T/web.log")"
	exit 0
fi

code() { in_ns curl -s -o "$T/body" -w '%{http_code}' "$@"; }
body() { cat "$T/body"; }
# login USER PASSWORD: its cookie jar $T/USER.jar, its CSRF token $T/csrf-USER
login() {
	code -c "$T/$1.jar" -H "$J" -d "{\"user\":\"$1\",\"password\":\"$2\"}" "$URL/api/login" >/dev/null
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body" >"$T/csrf-$1"
}
login alice alice-secret-1
login bob bob-secret-22
A=(-b "$T/alice.jar" -H "X-CSRF-Token: $(cat "$T/csrf-alice")" -H "$J")
B=(-b "$T/bob.jar" -H "X-CSRF-Token: $(cat "$T/csrf-bob")" -H "$J")
D=$URL/api/domains/wh
listed() { lodge block-list wh 2>/dev/null | tail -n +2 | awk '{ print $1 }' | tr '\n' ' '; }
job_id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/body"; }
job_state() {  # ID: state:error
	in_ns curl -s -b "$T/alice.jar" "$URL/api/jobs" | python3 -c '
import json, sys
print(next((j["kind"] + ":" + j["state"] + ":" + (j.get("error") or "") for j in json.load(sys.stdin)
            if j["id"] == int(sys.argv[1])), "none"))' "$1"
}
ended() { [[ $(job_state "$1") != *:running:* ]]; }

# ---- refusals: a viewer, no CSRF token, a relative path ----------------------
spec="{\"disk\":\"$STORE/data.img,raw,vdb,rw\"}"
c1=$(code "${B[@]}" -d "$spec" "$D/block-attach")
c2=$(code -b "$T/alice.jar" -H "$J" -d "$spec" "$D/block-attach")
c3=$(code "${A[@]}" -d '{"disk":"data.img,raw,vdb,rw"}' "$D/block-attach"); b3=$(body)
c4=$(code "${B[@]}" -d '{"vdev":"vda"}' "$D/block-detach")
if [ "$c1$c2$c3$c4" = 403403400403 ] && grep -q 'must be absolute' <<<"$b3" && [ "$(listed)" = "" ]; then
	pass "refused: a viewer's attach and detach (403), no CSRF token (403), a relative path (400: $b3)"
else
	fail "web refusals" "viewer $c1, no csrf $c2, relative $c3 $b3, viewer detach $c4; disks $(listed)"
fi

# ---- block-attach -------------------------------------------------------------
c=$(code "${A[@]}" -d "$spec" "$D/block-attach")
if [ "$c" = 200 ] && grep -q '"vdev":"vdb"' "$T/body" && wait_until 10 shows wh 'blk: vd. added' &&
	[ "$(listed)" = "vdb " ] && wait_until 10 logged " wh block-attach uid=0,pid=[0-9]+,via=web-alice disk $STORE/data.img in PCI slot [0-9]+$"; then
	pass "POST .../block-attach: the guest probes the disk, the event log says via=web-alice ($(body))"
else
	fail "web block-attach" "$c $(body); disks $(listed); $(tail -2 "$LOG")"
fi
truncate -s 1M "$T/outside.img"
c=$(code "${A[@]}" -d "{\"disk\":\"$T/outside.img,raw,vdc,rw\"}" "$D/block-attach")
[ "$c" = 403 ] && grep -q "storage_dirs" "$T/body" && [ "$(listed)" = "vdb " ] &&
	pass "refused: a disk outside storage_dirs (403: $(body))" || fail "web: a disk the host does not lend" "$c $(body)"
truncate -s 1M "$STORE/other.img"
c=$(code "${A[@]}" -d "{\"disk\":\"$STORE/other.img,raw,vdb,rw\"}" "$D/block-attach")
[ "$c" = 409 ] && grep -q 'has a disk vdb already' "$T/body" && [ "$(listed)" = "vdb " ] &&
	pass "refused: a vdev taken (409: $(body))" || fail "web: a vdev taken" "$c $(body)"

# ---- block-detach: a job; the server answers meanwhile -------------------------
c=$(code "${A[@]}" -d '{"vdev":"vdb"}' "$D/block-detach"); id=$(job_id)
if [ "$c" = 202 ] && wait_until 20 ended "$id" && [ "$(job_state "$id")" = "block-detach:done:" ] &&
	[ "$(listed)" = "" ] && flock -n -x "$STORE/data.img" true &&
	wait_until 10 logged " wh block-detach uid=0,pid=[0-9]+,via=web-alice disk $STORE/data.img in PCI slot [0-9]+, ejected by the guest$"; then
	pass "POST .../block-detach: a job (202), done once the guest ejected; the lock is free"
else
	fail "web block-detach" "$c job $id $(job_state "$id"); disks $(listed)"
fi

# A guest that ignores ejects: the job fails after timeout_s, the disk stays;
# meanwhile the server answers: a request made once the guest has ignored
# the eject is answered while the job still waits (its state, read after
# the answer, still running).
code "${A[@]}" -d "$spec" "$D/block-attach" >/dev/null
wait_until 10 eval '[ "$(conlog wh | grep -c "blk: vd. added")" -ge 2 ]'
# guest LINE: typed on its console (the console ends at the end of its input)
guest() { lodge console wh <<<"$1" >/dev/null 2>&1; }
guest "hotplug-ignore on"
wait_until 10 shows wh 'eject requests are ignored'
ignored=$(conlog wh | grep -c 'eject request ignored')
c=$(code "${A[@]}" -d '{"vdev":"vdb","timeout_s":5}' "$D/block-detach"); id=$(job_id)
wait_until 10 eval '[ "$(conlog wh | grep -c "eject request ignored")" -gt "$ignored" ]'
t0=$(date +%s%N)
s=$(code -b "$T/alice.jar" "$URL/api/session")
t1=$(date +%s%N)
during=$(job_state "$id")
if [ "$c" = 202 ] && [ "$s" = 200 ] && [ "$during" = "block-detach:running:" ] && wait_until 30 ended "$id" &&
	[[ $(job_state "$id") == "block-detach:failed:"*"did not eject"* ]] && [ "$(listed)" = "vdb " ]; then
	pass "a guest that ignores the eject: the job fails, the disk stays; the server answered while the job waited ($(((t1 - t0) / 1000000)) ms)"
else
	fail "web detach timeout" "$c, session $s in $(((t1 - t0) / 1000000)) ms, job then '$during', now $(job_state "$id"); disks $(listed)"
fi
c=$(code "${A[@]}" -d '{"vdev":"vdb","force":true}' "$D/block-detach"); id=$(job_id)
if [ "$c" = 202 ] && wait_until 20 ended "$id" && [ "$(job_state "$id")" = "block-detach:done:" ] &&
	[ "$(listed)" = "" ] && flock -n -x "$STORE/data.img" true; then
	pass "force: the job takes the disk anyway, the lock is free"
else
	fail "web detach force" "$c job $(job_state "$id"); disks $(listed)"
fi
guest "hotplug-ignore off"
wait_until 10 shows wh 'eject requests are served'
c=$(code "${A[@]}" -d '{"vdev":"vdb","timeout_s":0}' "$D/block-detach")
[ "$c" = 400 ] && pass "refused: a timeout_s out of range (400)" || fail "web: timeout_s 0" "$c $(body)"

# ---- network-attach and -detach --------------------------------------------------
c=$(code "${A[@]}" -d '{"vif":"bridge=whbr0"}' "$D/network-attach")
tap=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("vif", ""))' "$T/body" 2>/dev/null)
if [ "$c" = 200 ] && [ -n "$tap" ] && in_ns ip link show "$tap" 2>/dev/null | grep -q 'master whbr0' &&
	in_ns ping -c 1 -W 5 10.83.0.2 >/dev/null 2>&1; then
	pass "POST .../network-attach: its tap $tap on the bridge, the guest answers ping through it"
else
	fail "web network-attach" "$c $(body); $(conlog wh | tail -2)"
fi
c=$(code "${A[@]}" -d '{"vif":"0"}' "$D/network-detach"); id=$(job_id)
if [ "$c" = 202 ] && wait_until 20 ended "$id" && [ "$(job_state "$id")" = "network-detach:done:" ] &&
	! in_ns ip link show "$tap" >/dev/null 2>&1 &&
	wait_until 10 logged " wh network-detach uid=0,pid=[0-9]+,via=web-alice vif $tap in PCI slot [0-9]+, ejected by the guest$"; then
	pass "POST .../network-detach: a job, done once the guest ejected; the tap is gone"
else
	fail "web network-detach" "$c job $(job_state "$id"); tap $(in_ns ip link show "$tap" 2>&1 | head -1)"
fi
lodge destroy wh >/dev/null 2>&1
kill $WEB_PID 2>/dev/null
wait $WEB_PID 2>/dev/null || true
