#!/bin/bash
# Templates and a Debian mirror (issue 20).  A mirror that does not answer
# (lodge.conf's template_mirror = http://127.0.0.1:9/debian, the discard
# port, where nothing listens): template-update, and an install that must
# build its template first, fail in one line naming the mirror, leaving no
# template, disk, config or build directory, the template that was there
# byte for byte; an install whose template is there needs no mirror at
# all.  A bad template_mirror is one line naming the key.  Then a rebuild
# with the package cache warm, every request apt makes going through a
# logging HTTP proxy of the test's own (apt honours http_proxy): the
# package lists are fetched, no .deb is.
. "$(dirname "$0")/../lib.sh"

integ_begin "install failures" root cmd:mmdebstrap cmd:debugfs cmd:curl
if ! template_cached bookworm; then
	skip "install failures" "no bookworm template: $TEMPLATE_WHY"
	exit 0
fi
TPLDIR=$ROOT/var/lib/lodge/templates
IMAGES=$ROOT/var/lib/lodge/images
TPL=$(echo "$TPLDIR"/bookworm-*.img)
tpl_sum=$(sha256sum <"$TPL")
MIRROR=http://127.0.0.1:9/debian
# The installs on a bridge of a namespace of the test's own (with no
# network option an install would make the host's default network).
netns_add "lodge-install-fail-$$"
FNS=lodge-install-fail-$$
ip netns exec "$FNS" ip link set lo up
lodge_at "$ROOT" "$FNS" bridge-create lodgebr0 >/dev/null
CONF=$ROOT/etc/lodge/lodge.conf
# one_error FILE: lodge's stderr there has exactly one error line.
one_error() { [ "$(grep -c '^lodge: error: ' "$1")" = 1 ]; }
# no_leftovers: nothing in the templates' directory but the lock and bookworm's.
no_leftovers() { ! ls -A "$TPLDIR" | grep -qEv '^(\.lock|bookworm-[a-z0-9]+\.(img|info))$'; }
tpl_intact() { [ "$(sha256sum <"$TPL")" = "$tpl_sum" ] && lodge template-list | grep -q '^bookworm-'; }

# ---- a bad template_mirror -----------------------------------------------------------------------
printf 'template_mirror = "ftp://mirror.example/debian"\n' >"$CONF"
if ! lodge template-list >"$T/badconf.out" 2>&1 && [ "$(wc -l <"$T/badconf.out")" = 1 ] &&
   grep -q "lodge.conf:1: template_mirror: .*http or https" "$T/badconf.out"; then
	pass "a template_mirror that is not an http(s) URL: one line naming the key: $(cat "$T/badconf.out")"
else
	fail "a bad template_mirror" "$(cat "$T/badconf.out")"
fi

# ---- a mirror that does not answer ------------------------------------------------------------------
if curl -s -m 5 -o /dev/null "$MIRROR/"; then
	skip "an unreachable mirror" "something answers on $MIRROR"
else
	printf 'template_mirror = "%s"\n' "$MIRROR" >"$CONF"
	LODGE_TIMEOUT=300 lodge template-update bookworm >"$T/upd.out" 2>"$T/upd.err"
	rc=$?
	if [ $rc -ne 0 ] && one_error "$T/upd.err" &&
	   grep -q "^lodge: error: building the bookworm template failed: a mirror does not answer (lodge.conf's template_mirror): .*127.0.0.1:9" "$T/upd.err" &&
	   tpl_intact && no_leftovers; then
		pass "template-update from a mirror that does not answer: one line naming it, the old template intact, nothing left: $(grep error: "$T/upd.err")"
	else
		fail "template-update from an unreachable mirror" "exit $rc; $(cat "$T/upd.err"); templates: $(ls -A "$TPLDIR")"
	fi
	# bullseye has no template here: the install builds one first.
	LODGE_TIMEOUT=300 lodge_at "$ROOT" "$FNS" install old --dist bullseye --bridge lodgebr0 >"$T/inst.out" 2>"$T/inst.err"
	rc=$?
	if [ $rc -ne 0 ] && one_error "$T/inst.err" && grep -q "^lodge: error: .*mirror does not answer.*127.0.0.1:9" "$T/inst.err" &&
	   [ ! -e "$DOMS/old.cfg" ] && [ -z "$(ls -A "$IMAGES" 2>/dev/null)" ] && ! compgen -G "$TPLDIR/bullseye-*" >/dev/null &&
	   tpl_intact && no_leftovers; then
		pass "an install whose template cannot be built: one line, no disk, no config, no template, bookworm's intact: $(grep error: "$T/inst.err")"
	else
		fail "an install from an unreachable mirror" "exit $rc; $(cat "$T/inst.err"); images: $(ls -A "$IMAGES" 2>&1); templates: $(ls -A "$TPLDIR")"
	fi
	if lodge_at "$ROOT" "$FNS" install fine --bridge lodgebr0 >"$T/fine.out" 2>&1 && [ -e "$DOMS/fine.cfg" ] && [ -s "$IMAGES/fine.img" ]; then
		pass "an install whose template is there needs no mirror (the same unreachable one set)"
	else
		fail "an install with its template, the mirror unreachable" "$(cat "$T/fine.out")"
	fi
fi
rm -f "$CONF"

# ---- a rebuild fetches no package twice ------------------------------------------------------------
# The shared build's cache (every package the template has, install.sh
# checks) copied in; apt's requests logged by a forwarding proxy.
CACHE=$ROOT/var/cache/lodge/$(basename "$TPL" .img)
mkdir -p "$CACHE"
cp -a "$BUILD/cache/template-root/var/cache/lodge/$(basename "$TPL" .img)/." "$CACHE/"
ls "$CACHE" | sort >"$T/cache.before"
cat >"$T/proxy.py" <<'EOF'
import http.client, http.server, sys, urllib.parse
log = open(sys.argv[1], "a", buffering=1)
HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade", "proxy-authorization"}
class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def relay(self, body):
        url = urllib.parse.urlsplit(self.path)
        log.write("%s %s\n" % (self.command, self.path))
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn.request(self.command, url.path + ("?" + url.query if url.query else ""), headers=headers)
        r = conn.getresponse()
        data = r.read() if body else b""
        self.send_response(r.status, r.reason)
        for k, v in r.getheaders():
            if k.lower() not in HOP and k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data) if body else r.getheader("Content-Length", "0")))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self.relay(True)
    def do_HEAD(self):
        self.relay(False)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
print(srv.server_address[1], flush=True)
srv.serve_forever()
EOF
python3 "$T/proxy.py" "$T/proxy.log" >"$T/proxy.port" 2>"$T/proxy.err" &
if ! wait_until 10 test -s "$T/proxy.port"; then
	fail "a rebuild fetches no package twice" "the logging proxy did not start: $(cat "$T/proxy.err")"
	exit 0
fi
built0=$(sed -n 's/^built=//p' "$TPLDIR"/bookworm-*.info)
t0=$SECONDS
http_proxy=http://127.0.0.1:$(cat "$T/proxy.port") LODGE_TIMEOUT=1800 lodge template-update bookworm >"$T/rebuild.out" 2>&1
rc=$?
ls "$CACHE" | sort >"$T/cache.after"
requests=$(grep -c . "$T/proxy.log" 2>/dev/null)
lists=$(grep -c '/InRelease$' "$T/proxy.log" 2>/dev/null)
# What apt fetched that the cache held: the pool's file names have no
# epoch, the cache's (apt's) have EPOCH%3a.
sed 's/_[0-9]*%3a/_/' "$T/cache.before" | sort >"$T/cache.names"
grep '\.deb$' "$T/proxy.log" 2>/dev/null | sed 's|.*/||' | sort >"$T/fetched"
twice=$(comm -12 "$T/cache.names" "$T/fetched")
built1=$(sed -n 's/^built=//p' "$TPLDIR"/bookworm-*.info)
if [ $rc -eq 0 ] && [ "${lists:-0}" -gt 0 ] && [ -z "$twice" ] && [ "$built1" != "$built0" ] &&
   [ -z "$(comm -23 "$T/cache.before" "$T/cache.after")" ]; then
	pass "a template rebuild with the cache warm ($((SECONDS - t0)) s): apt's $requests requests went through the proxy ($lists InRelease), none for any of the $(wc -l <"$T/cache.before") cached packages ($(wc -l <"$T/fetched") .debs new since the cache was filled)"
else
	fail "a rebuild fetches no package twice" "exit $rc, $requests requests ($lists InRelease); fetched again: $(tr '\n' ' ' <<<"$twice" | head -c 300); gone from the cache: $(comm -23 "$T/cache.before" "$T/cache.after" | head -5 | tr '\n' ' '); $(tail -2 "$T/rebuild.out")"
fi
