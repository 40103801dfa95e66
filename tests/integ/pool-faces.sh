#!/bin/bash
# The pool as a library (src/pool/lodge-pool.h, issue 33): pool_domains(),
# the one call the command line, the dashboard and the web page make for
# the pool's domains, returns what etcd holds (a real cluster: the
# fixture's, under a prefix of this test's own).
. "$(dirname "$0")/../lib.sh"
integ_begin pool-faces root cmd:curl cmd:python3
CHECK=$BUILD/tests/pool/domains-check
[ -x "$CHECK" ] || { fail pool-faces "$CHECK not built (make all)"; exit 1; }

pool_etcd_up
"$CHECK" "$POOL_ETCD_URLS" "$(pool_prefix)" "$(pool_free_port)"

# The web page's table: GET /api/pool on a host that joined the pool
# gives the rows lodge list --pool -o json gives (one column table).
PREFIX=$(pool_prefix)-web
if ! lodge pool-join --etcd "$POOL_ETCD_URLS" --host webhost --prefix "$PREFIX" >"$T/join.out" 2>&1; then
	fail "pool-faces: web" "pool-join: $(cat "$T/join.out")"
	exit 0
fi
pool_etcdctl put "$PREFIX/domains/w1/config" '{"text":"","file":"/x/w1.cfg","memory_mib":96,"ha":true}' >/dev/null &&
pool_etcdctl put "$PREFIX/domains/w1/desired" stopped >/dev/null &&
pool_etcdctl put "$PREFIX/domains/w1/placement" webhost >/dev/null
printf 'viewer-secret-1\n' | lodge web-passwd vera --role viewer >/dev/null 2>&1
PORT=$(pool_free_port)
URL=http://127.0.0.1:$PORT
"$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
WEB_PID=$!
up() { curl -s -o /dev/null "$URL/"; }
if ! wait_until 20 up; then
	fail "pool-faces: web" "lodge web did not answer: $(cat "$T/web.log")"
	exit 0
fi
curl -s -o /dev/null -c "$T/jar" -H 'Content-Type: application/json' \
	-d '{"user":"vera","password":"viewer-secret-1"}' "$URL/api/login"
curl -s -b "$T/jar" -o "$T/pool.json" "$URL/api/pool"
lodge list --pool -o json >"$T/list.json" 2>&1
if python3 - "$T/pool.json" "$T/list.json" <<'PY'
import json, sys
web = json.load(open(sys.argv[1]))
cli = json.load(open(sys.argv[2]))
rows = web["domains"]
sys.exit(not (web["pool"] is True and rows == cli and len(rows) == 1 and rows[0]["name"] == "w1"
              and rows[0]["host"] == "webhost" and rows[0]["state"] == "stopped" and rows[0]["memory_mib"] == 96))
PY
then
	pass "pool-faces: the web page's GET /api/pool gives the pool's domains as lodge list --pool -o json does"
else
	fail "pool-faces: web" "web: $(cat "$T/pool.json"); list: $(cat "$T/list.json")"
fi
lodge pool-leave >/dev/null 2>&1
pool_etcdctl del --prefix "$PREFIX/" >/dev/null
