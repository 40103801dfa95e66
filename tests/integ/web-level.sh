#!/bin/bash
# The web page level with the dashboard, by its JSON API (issue 35, 5):
# the create form's defaults are a guest the server then accepts (its own
# default guest, with no kernel_dirs in lodge.conf); every field has a
# label a person reads (not a config key); a refusal names the field it
# concerns, so the page shows it there; lodge.conf is read again on
# SIGHUP, the next request has the new settings, and one that does not
# load keeps the old ones and logs one line.  A Debian install, as the
# dashboard's form: its fields labelled, a bad one or what lodge.conf
# does not lend refused beside it, a good one run as a job with its phase
# and percent (done with the cached bookworm template, else failing from
# a mirror that is not there, nothing left).  The page: web-browser.sh.
# As root, in a network namespace of its own (and its loopback): an
# install from the web without a network makes the network "default",
# whose bridge, rules and IPv4 forwarding must not reach the host's.
if [ "$(id -u)" = 0 ] && [ -z "${WEB_LEVEL_NETNS:-}" ] && command -v unshare >/dev/null; then
	WEB_LEVEL_NETNS=1 exec unshare --net bash "$0" "$@"
fi
[ -n "${WEB_LEVEL_NETNS:-}" ] && ip link set lo up
. "$(dirname "$0")/../lib.sh"

integ_begin "web page level with the dashboard" kvm root minios "cmd:curl" "cmd:python3"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
J='Content-Type: application/json'
CONF=$ROOT/etc/lodge/lodge.conf
# The network "default" the web install makes goes at exit, after the
# lodge.conf this test leaves unloadable (its last case) is put aside.
at_exit 'rm -f "$CONF"; lodge network-delete default >/dev/null 2>&1'
printf 'level-secret-1\n' | lodge web-passwd alice >/dev/null || { fail "web level" "web-passwd failed"; exit 0; }
mkdir -p "$ROOT/etc/lodge"
# No kernel_dirs: what the server lends a web user of its own accord only.
printf 'default_bridge = "lodgelv0"\n' >"$CONF"
"$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
WEB_PID=$!
up() { curl -s -o /dev/null "$URL/"; }
wait_until 20 up || { fail "web level" "lodge web did not answer: $(cat "$T/web.log")"; exit 0; }
code() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }
code -c "$T/jar" -H "$J" -d '{"user":"alice","password":"level-secret-1"}' "$URL/api/login" >/dev/null
A=(-b "$T/jar" -H "X-CSRF-Token: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body")")
jq_body() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$T/body"; }

# The create form's defaults, sent back as they are, make a domain.
c=$(code "${A[@]}" "$URL/api/create-form")
defaults=$(jq_body 'json.dumps({**{k: v for k, v in d["defaults"].items() if k in ("kernel", "ramdisk", "cmdline", "memory_mib") and v != ""}, "name": "wlv1"})')
kernel=$(jq_body 'd["defaults"]["kernel"]')
c2=$(code "${A[@]}" -H "$J" -d "$defaults" "$URL/api/domains")
if [ "$c" = 200 ] && [ "$c2" = 201 ] && lodge list -o tsv | grep -q '^wlv1	'; then
	pass "the create form's defaults (kernel $kernel) make a domain with no kernel_dirs in lodge.conf"
else
	fail "create form defaults accepted" "form $c, create $c2: $(cat "$T/body")"
fi
lodge destroy wlv1 >/dev/null 2>&1
rm -f "$DOMS/wlv1.cfg"

# Labels a person reads, each field one.
code "${A[@]}" "$URL/api/create-form" >/dev/null
bad=$(jq_body '" ".join(f["key"] for f in d["fields"] if not f.get("label") or "_" in f["label"] or f["label"] == f["key"])')
labels=$(jq_body '", ".join(f["label"] for f in d["fields"] if f.get("label"))')
if [ -z "$bad" ] && grep -q 'Memory (MiB)' <<<"$labels"; then
	pass "every create form field has a label, units said: $labels"
else
	fail "create form labels" "fields without a human label: $bad ($labels)"
fi

# A refusal of what lodge.conf does not lend names its field.
c=$(code "${A[@]}" -H "$J" -d '{"name":"wlv2","kernel":"/etc/passwd"}' "$URL/api/domains")
field=$(jq_body 'd.get("field", "")')
if [ "$c" = 403 ] && [ "$field" = kernel ] && [ ! -e "$DOMS/wlv2.cfg" ]; then
	pass "a kernel outside kernel_dirs is refused beside the kernel field: $(cat "$T/body")"
else
	fail "refusal beside its field" "$c field '$field': $(cat "$T/body")"
fi

# ---- the Debian install form, as the dashboard's ----------------------------------------
code "${A[@]}" "$URL/api/install-form" >/dev/null
labels=$(jq_body '", ".join(f["label"] for f in d["fields"])')
bad=$(jq_body '" ".join(f["key"] for f in d["fields"] if "_" in f["label"] or f["label"] == f["key"])')
if [ -z "$bad" ] && grep -q 'Disk size' <<<"$labels" && [ "$(jq_body 'd["defaults"]["dist"]')" = bookworm ]; then
	pass "GET /api/install-form: the dashboard's install fields, labelled: $labels"
else
	fail "install form" "$(cat "$T/body")"
fi
refused() {  # BODY STATUS FIELD: refused so, beside that field, nothing made
	local c f
	c=$(code "${A[@]}" -H "$J" -d "$1" "$URL/api/install")
	f=$(jq_body 'd.get("field", "")' 2>/dev/null)
	[ "$c" = "$2" ] && [ "$f" = "$3" ] && [ ! -e "$DOMS/wli1.cfg" ] && [ ! -e "$ROOT/var/lib/lodge/images/wli1.img" ] ||
		{ echo "$1: $c field '$f': $(cat "$T/body")"; return 1; }
}
blk=$(for b in /sys/block/*; do [ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && break; done)
why=$(refused '{"name":"../wli1"}' 400 name &&
      refused '{"name":"wli1","dist":"potato"}' 400 dist &&
      refused '{"name":"wli1","size":"lots"}' 400 size &&
      refused '{"name":"wli1","memory_mib":"0"}' 400 memory_mib &&
      { [ -z "$blk" ] || refused "{\"name\":\"wli1\",\"disk\":\"$blk\"}" 403 disk; } &&
      refused '{"name":"wli1","network":"br-nope"}' 403 network &&
      refused '{"name":"wli1","kernel":"/etc/passwd"}' 400 kernel)
if [ -z "$why" ]; then
	pass "an install's bad name, distribution, size, memory, a disk or bridge not lent: refused beside its field, nothing made"
else
	fail "install refusals" "$why"
fi
# An install runs as a job, its phase and percent in the jobs list.
job_json() { code "${A[@]}" "$URL/api/jobs" >/dev/null; jq_body "next((j for j in d if j['kind'] == 'install' and j['name'] == '$1'), {})" 2>/dev/null; }
job_ended() { job_json "$1" | grep -q "'state': '\(done\|failed\)'"; }
if template_cached bookworm; then
	c=$(code "${A[@]}" -H "$J" -d '{"name":"wli2","size":"1G","memory_mib":256}' "$URL/api/install")
	wait_until 600 job_ended wli2
	j=$(job_json wli2)
	if [ "$c" = 202 ] && grep -q "'state': 'done'" <<<"$j" && grep -q "'pct': 100" <<<"$j" &&
	   grep -q 'bootloader = "lodge"' "$DOMS/wli2.cfg" 2>/dev/null; then
		pass "a Debian install from the web page is a job: done, 100%, its config in domains/wli2.cfg"
	else
		fail "install job" "$c: $j $(cat "$T/body")"
	fi
else
	# Without a template the job builds one; from a mirror that is not
	# there it fails, and says so in the jobs list, nothing left.
	printf 'template_mirror = "http://127.0.0.1:9/debian"\n' >>"$CONF"
	kill -HUP "$WEB_PID"
	wait_for "$T/web.log" "lodge.conf reloaded" 20
	c=$(code "${A[@]}" -H "$J" -d '{"name":"wli2","size":"1G"}' "$URL/api/install")
	wait_until 300 job_ended wli2
	j=$(job_json wli2)
	if [ "$c" = 202 ] && grep -q "'state': 'failed'" <<<"$j" && grep -q "'phase'" <<<"$j" && [ ! -e "$DOMS/wli2.cfg" ]; then
		pass "an install is a job with its phase in the jobs list; one that fails says why, nothing left: $j"
	else
		fail "install job" "$c: $j $(cat "$T/body")"
	fi
	skip "a Debian install from the web page, done" "no bookworm template: $TEMPLATE_WHY"
fi

# Cancelled as the dashboard's k cancels one: an install of a
# distribution with no template yet, its build held by a mirror that
# takes connections and never answers; stopped, nothing of it left.
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); time.sleep(900)' >"$T/hang.port" &
HANG_PID=$!
port_known() { [ -s "$T/hang.port" ]; }
reloads() { grep -c "lodge.conf reloaded" "$T/web.log"; }
wait_until 20 port_known
n=$(reloads)
printf 'template_mirror = "http://127.0.0.1:%s/debian"\n' "$(cat "$T/hang.port")" >>"$CONF"
kill -HUP "$WEB_PID"
reloaded_again() { [ "$(reloads)" -gt "$n" ]; }
wait_until 20 reloaded_again
c=$(code "${A[@]}" -H "$J" -d '{"name":"wli3","dist":"bullseye","size":"1G"}' "$URL/api/install")
id=$(jq_body 'd.get("id", "")' 2>/dev/null)
job_building() { job_json wli3 | grep -q "'phase'"; }
wait_until 60 job_building
c2=$(code "${A[@]}" -X POST "$URL/api/jobs/$id/cancel")
wait_until 60 job_ended wli3
j=$(job_json wli3)
c3=$(code "${A[@]}" -X POST "$URL/api/jobs/$id/cancel")
if [ "$c$c2$c3" = 202202409 ] && grep -q "'state': 'failed'" <<<"$j" && grep -qi "cancel" <<<"$j" &&
   [ ! -e "$DOMS/wli3.cfg" ] && [ ! -e "$ROOT/var/lib/lodge/images/wli3.img" ] &&
   ! compgen -G "$ROOT/var/lib/lodge/templates/bullseye-*" >/dev/null; then
	pass "POST /api/jobs/ID/cancel stops an install (its template build), nothing left; a second cancel is 409: $j"
else
	fail "install cancel" "install $c, cancel $c2, again $c3: $j; $(ls "$ROOT/var/lib/lodge/templates" "$DOMS" 2>&1 | tr '\n' ' ')"
fi
kill "$HANG_PID" 2>/dev/null

# SIGHUP: the next request has the new lodge.conf.
bridge() { code "${A[@]}" "$URL/api/create-form" >/dev/null; jq_body 'd["bridge"]' 2>/dev/null; }
printf 'default_bridge = "lodgelv1"\n' >"$CONF"
kill -HUP "$WEB_PID"
bridge_is() { [ "$(bridge)" = "$1" ]; }
if wait_until 20 bridge_is lodgelv1 && kill -0 "$WEB_PID" 2>/dev/null; then
	pass "lodge.conf is read again on SIGHUP: the create form's bridge is now lodgelv1"
else
	fail "reload on SIGHUP" "bridge '$(bridge)', server $(kill -0 "$WEB_PID" 2>&1 && echo alive || echo gone): $(tail -3 "$T/web.log")"
fi
lines=$(wc -l <"$T/web.log")
printf 'default_bridge = "lodgelv2"\nno_such_setting = 1\n' >"$CONF"
kill -HUP "$WEB_PID"
wait_for "$T/web.log" "not reloaded" 20
new=$(tail -n +$((lines + 1)) "$T/web.log")
if [ "$(bridge)" = lodgelv1 ] && [ "$(wc -l <<<"$new")" = 1 ] && grep -q no_such_setting <<<"$new" && kill -0 "$WEB_PID" 2>/dev/null; then
	pass "a lodge.conf that does not load keeps the old settings and logs one line: $new"
else
	fail "bad lodge.conf on SIGHUP" "bridge '$(bridge)', log: $new"
fi
kill "$WEB_PID" 2>/dev/null
wait "$WEB_PID" 2>/dev/null
