#!/bin/bash
# The pool's etcd over TLS with client certificates, and with etcd's own
# user authentication (issue 31, defect 1; SECURITY.md "The pool's etcd"):
# an etcd of the test's own on a loopback port (https, --client-cert-auth,
# certificates made here with openssl), stopped by its pid.
#   - a client without a certificate is refused by etcd (curl);
#   - pool-join refuses in one line: an https URL without --cacert, a CA
#     that did not sign etcd's certificate, a key others can read;
#   - pool-join with the right files records them in lodge.conf, and the
#     host's agent runs a domain placed on it;
#   - with etcd's authentication on (a user whose role may read and write
#     the pool's prefix alone), --user with its --password-file joins, and
#     the agent keeps its host up and runs a domain after a password
#     change made etcd drop its token; a wrong password is said in one
#     line, nothing written; --user alone asks the password on the
#     terminal and keeps it in a root-only file; a request without a
#     token is refused.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-tls kvm root minios cmd:etcd:etcd-server cmd:etcdctl:etcd-client cmd:openssl cmd:curl
PREFIX=/lodge-test/pool-tls-$$
D=$T/pki
mkdir -m 700 "$D"

# ---- certificates: a CA, etcd's server certificate, a host's client one;
# another CA that signed none of them.  etcd 3.4's gateway dials its own
# gRPC side with the server's certificate (so clientAuth too), and with
# its authentication on refuses a client certificate that has a CN (it
# would not be the user): the host's has none, its user is --user's.
ca() {   # NAME
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$1" \
		-keyout "$D/$1.key" -out "$D/$1.pem" 2>/dev/null
}
signed() {   # NAME CN EXT
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/O=lodge-test${2:+/CN=$2}" \
		-keyout "$D/$1.key" -out "$D/$1.csr" 2>/dev/null &&
	openssl x509 -req -in "$D/$1.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" -CAcreateserial -days 2 \
		-extfile <(printf '%s\n' "$3") -out "$D/$1.pem" 2>/dev/null
}
ca ca && ca otherca &&
	signed server etcd "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth" &&
	signed host "" "extendedKeyUsage=clientAuth" &&
	chmod 600 "$D"/*.key || { fail pool-tls "openssl could not make the certificates"; exit 1; }

# ---- the test's own etcd, https only, client certificates required
port_free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }
for try in $(seq 50); do
	CP=$((21000 + RANDOM % 9000)); PP=$((CP + 1))
	port_free $CP && port_free $PP && break
done
URL=https://127.0.0.1:$CP
# start_etcd [MORE FLAGS]: its pid in ETCD_PID (a session of its own)
start_etcd() {
	setsid etcd --name t --data-dir "$T/tls.etcd" \
		--listen-client-urls "$URL" --advertise-client-urls "$URL" \
		--listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
		--initial-cluster "t=http://127.0.0.1:$PP" --initial-cluster-state new \
		--cert-file "$D/server.pem" --key-file "$D/server.key" --trusted-ca-file "$D/ca.pem" \
		--client-cert-auth "$@" >>"$T/etcd.log" 2>&1 </dev/null &
	ETCD_PID=$!
}
stop_etcd() {
	case ${ETCD_PID:-} in ''|*[!0-9]*) return 0 ;; esac
	tr '\0' ' ' 2>/dev/null <"/proc/$ETCD_PID/cmdline" | grep -qF -- "--data-dir $T/tls.etcd" &&
		kill -KILL "$ETCD_PID" 2>/dev/null
	wait "$ETCD_PID" 2>/dev/null
}
at_exit stop_etcd
ectl() { ETCDCTL_API=3 etcdctl --endpoints="$URL" --cacert "$D/ca.pem" --cert "$D/host.pem" --key "$D/host.key" \
	--command-timeout=5s "$@"; }
start_etcd
wait_until 30 eval 'ectl endpoint health >/dev/null 2>&1' ||
	{ fail pool-tls "the test's etcd did not come up: $(tail -n 3 "$T/etcd.log" | tr '\n' ' ')"; exit 1; }

# pool helpers (tests/pool-lib.sh) on this etcd
POOL_ETCD_URLS=$URL
pool_etcdctl() { ectl "$@"; }
at_exit pool_procs_end

# ---- etcd refuses a client without a certificate
out=$(curl -sS --max-time 5 --cacert "$D/ca.pem" -X POST "$URL/v3/kv/range" -d '{"key":"Lw=="}' 2>&1); rc=$?
[ $rc -ne 0 ] && ! echo "$out" | grep -q '"header"' &&
	pass "pool-tls: a client without a certificate is refused by etcd (curl: $(echo "$out" | head -n 1 | cut -c1-80))" ||
	fail "pool-tls: no certificate" "curl rc $rc: $out"

# ---- pool-join's refusals: one line each, lodge.conf untouched
integ_root "$(pool_root a)"
mkdir -p "$(pool_root a)/etc/lodge/domains"
conf() { cat "$(pool_root a)/etc/lodge/lodge.conf" 2>/dev/null; }
join_refused() {   # LABEL PATTERN ARGS...
	local label=$1 pat=$2 out rc
	shift 2
	out=$(pool_lh a pool-join --etcd "$URL" --host a --prefix "$PREFIX" "$@" 2>&1); rc=$?
	if [ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q -- "$pat" &&
	   ! conf | grep -q '^pool_' && [ -z "$(ectl get --prefix "$PREFIX/" --keys-only)" ]; then
		pass "pool-tls: pool-join refused in one line: $label ($out)"
	else
		fail "pool-tls: pool-join refused: $label" "rc $rc, said: $out; lodge.conf: $(conf | grep pool_ | tr '\n' ' ')"
	fi
}
join_refused "an https URL without --cacert" "need the CA that signed etcd's certificate"
join_refused "a CA that did not sign etcd's certificate" "certificate" \
	--cacert "$D/otherca.pem" --cert "$D/host.pem" --key "$D/host.key"
# (TLS 1.3: etcd's alert comes after the handshake; curl says it as a
# failed read naming the alert, or, when the socket is gone first, a
# failed send: the words differ, the one line names the endpoint)
join_refused "no client certificate" "etcd at $URL: " --cacert "$D/ca.pem"
cp "$D/host.key" "$D/open.key" && chmod 644 "$D/open.key"
join_refused "a key others can read" "only root can read" --cacert "$D/ca.pem" --cert "$D/host.pem" --key "$D/open.key"

# ---- the right files: joined, recorded, the agent up, a domain runs
out=$(pool_lh a pool-join --etcd "$URL" --host a --prefix "$PREFIX" --cacert "$D/ca.pem" --cert "$D/host.pem" \
	--key "$D/host.key" 2>&1); rc=$?
[ $rc -eq 0 ] && conf | grep -qx "pool_cacert = \"$D/ca.pem\"" && conf | grep -qx "pool_cert = \"$D/host.pem\"" &&
	conf | grep -qx "pool_key = \"$D/host.key\"" &&
	pass "pool-tls: pool-join with the CA, certificate and key joins; lodge.conf names the files" ||
	{ fail "pool-tls: pool-join over TLS" "rc $rc: $out; lodge.conf: $(conf | tr '\n' ' ')"; exit 1; }
pool_host_timing a 3 2 1
printf 'kernel_dirs = [ "%s" ]\n' "$(dirname "$MINIOS")" >>"$(pool_root a)/etc/lodge/lodge.conf"
POOL_HOSTS=a
pool_agent_start a
pool_wait_agents a
pool_minios_cfg t1 0
out=$(pool_lh a create t1 2>&1) && [ "$(pool_runs_on t1)" = a ] && [ "$(pool_dom_field t1 3)" = running ] &&
	pass "pool-tls: the agent over TLS runs a domain placed on its host" ||
	fail "pool-tls: a domain over TLS" "$out; $(tail -n 3 "$T/agent-a.log" | tr '\n' '|')"
pool_lh a destroy t1 >/dev/null 2>&1
wait_until 20 eval '[ -z "$(pool_runs_on t1)" ]'
pool_agent_kill a
# its lease ends (TTL 3 s): the host may join again as itself
wait_until 15 eval '[ -z "$(ectl get --keys-only "$PREFIX/hosts/a")" ]'

# ---- etcd's own authentication: a user whose role may use the prefix alone
R=(--user root:rootpw)
ectl user add root:rootpw >/dev/null && ectl "${R[@]}" role add root >/dev/null 2>&1; ectl user grant-role root root >/dev/null &&
	ectl user add lodge-a:a-secret >/dev/null && ectl role add lodgepool >/dev/null &&
	ectl role grant-permission lodgepool --prefix=true readwrite "$PREFIX/" >/dev/null &&
	ectl user grant-role lodge-a lodgepool >/dev/null && ectl auth enable >/dev/null ||
	{ fail pool-tls "cannot turn etcd's authentication on: $(tail -n 2 "$T/etcd.log" | tr '\n' ' ')"; exit 1; }
printf 'a-secret\n' >"$T/pw" && chmod 600 "$T/pw"
printf 'wrong\n' >"$T/badpw" && chmod 600 "$T/badpw"
sed -i '/^pool_/d' "$(pool_root a)/etc/lodge/lodge.conf"
out=$(pool_lh a pool-join --etcd "$URL" --host a --prefix "$PREFIX" --cacert "$D/ca.pem" --cert "$D/host.pem" \
	--key "$D/host.key" --user lodge-a --password-file "$T/badpw" 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "did not accept user lodge-a" &&
	! conf | grep -q '^pool_' &&
	pass "pool-tls: a wrong password is said in one line, nothing written ($out)" ||
	fail "pool-tls: wrong password" "rc $rc: $out"
out=$(pool_lh a pool-join --etcd "$URL" --host a --prefix "$PREFIX" --cacert "$D/ca.pem" --cert "$D/host.pem" \
	--key "$D/host.key" --user lodge-a 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q "password-file" &&
	pass "pool-tls: --user without --password-file is refused (no password on the command line)" ||
	fail "pool-tls: --user alone" "rc $rc: $out"
out=$(pool_lh a pool-join --etcd "$URL" --host a --prefix "$PREFIX" --cacert "$D/ca.pem" --cert "$D/host.pem" \
	--key "$D/host.key" --user lodge-a --password-file "$T/pw" 2>&1); rc=$?
[ $rc -eq 0 ] && conf | grep -qx 'pool_user = "lodge-a"' && conf | grep -qx "pool_password_file = \"$T/pw\"" &&
	! tr '\0' ' ' </proc/self/cmdline | grep -q a-secret &&
	pass "pool-tls: pool-join --user with its password file joins; lodge.conf names the user and the file" ||
	{ fail "pool-tls: pool-join --user" "rc $rc: $out"; exit 1; }
pool_host_timing a 3 2 1          # (the sed above took them; kernel_dirs stays)
pool_agent_start a
pool_wait_agents a
# A new password (the file first, then etcd): etcd drops the user's
# tokens at once; the agent, told its token is invalid, asks for a new
# one with the file's password and goes on.  Up 2 lease TTLs later (a
# host that could not renew would be lost by then), and a domain placed
# after that runs.
printf 'new-secret\n' >"$T/pw"
ectl "${R[@]}" user passwd lodge-a --interactive=false <<<new-secret >/dev/null ||
	fail "pool-tls: etcdctl user passwd" "refused"
start_s=$SECONDS
wait_until 30 eval '[ $((SECONDS - start_s)) -ge 6 ]'
out=$(pool_lh a create t1 2>&1) && [ "$(pool_runs_on t1)" = a ] && pool_all_up a &&
	[ "$(ectl "${R[@]}" get --print-value-only "$PREFIX/hosts/a" | grep -o '"state":"[a-z]*"')" = '"state":"up"' ] &&
	pass "pool-tls: with etcd's authentication, the agent keeps its host up across a password change (its token asked for again) and runs a domain" ||
	fail "pool-tls: domain with auth" "$out; $(tail -n 4 "$T/agent-a.log" | tr '\n' '|')"
# ---- --user without --password-file, on a terminal: asked without echo,
# kept in ROOT/etc/lodge/pool-password (mode 600) once etcd took it.
# ask_join PASSWORD: host b's pool-join on a pseudo-terminal, the password
# typed at its prompt; its output, and its exit status.
integ_root "$(pool_root b)"
mkdir -p "$(pool_root b)/etc/lodge"
ask_join() {
	python3 - "$1" "$LODGE" --root "$(pool_root b)" pool-join --etcd "$URL" --host b --prefix "$PREFIX" \
		--cacert "$D/ca.pem" --cert "$D/host.pem" --key "$D/host.key" --user lodge-a <<'PY'
import os, pty, signal, sys
signal.alarm(60)
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out = b""
while b"password for lodge-a: " not in out:
    out += os.read(fd, 1024)
os.write(fd, sys.argv[1].encode() + b"\n")
while True:
    try:
        d = os.read(fd, 1024)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
sys.exit(os.waitstatus_to_exitcode(st))
PY
}
PWF=$(pool_root b)/etc/lodge/pool-password
out=$(ask_join wrong 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q "did not accept user lodge-a" && [ ! -e "$PWF" ] && [ ! -e "$PWF.new" ] &&
	! grep -q '^pool_' "$(pool_root b)/etc/lodge/lodge.conf" 2>/dev/null &&
	pass "pool-tls: a wrong password typed at pool-join's prompt is refused, no password file left" ||
	fail "pool-tls: prompt, wrong password" "rc $rc: $out; $(ls "$(pool_root b)/etc/lodge")"
out=$(ask_join new-secret 2>&1); rc=$?
[ $rc -eq 0 ] && ! echo "$out" | grep -q new-secret && [ "$(stat -c %a:%u "$PWF")" = 600:0 ] &&
	[ "$(cat "$PWF")" = new-secret ] && grep -qx "pool_password_file = \"$PWF\"" "$(pool_root b)/etc/lodge/lodge.conf" &&
	pass "pool-tls: --user alone asks the password on the terminal (not echoed), keeps it root's (600) in $PWF" ||
	fail "pool-tls: prompt" "rc $rc: $out; $(stat -c %a:%u "$PWF" 2>&1)"
pool_etcdctl() { ectl "${R[@]}" "$@"; }
pool_lh b pool-leave >/dev/null 2>&1

out=$(curl -sS --max-time 5 --cacert "$D/ca.pem" --cert "$D/host.pem" --key "$D/host.key" -X POST "$URL/v3/kv/range" \
	-d "{\"key\":\"$(printf '%s/version' "$PREFIX" | base64 -w0)\"}" 2>&1)
echo "$out" | grep -q '"error"' &&
	pass "pool-tls: with authentication on, a request without a token is refused" ||
	fail "pool-tls: no token" "$out"
pool_lh a destroy t1 >/dev/null 2>&1
pool_hosts_local
