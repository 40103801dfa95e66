#!/bin/bash
# One interface-name rule (schema.h's ifname_check) behind every face a
# bridge's name enters by (issue 31, defect 9): the web create form made a
# host bridge named atk"x that network-create refused.  Each bad name is
# sent to lodge bridge-create, network-create --bridge, install --bridge, a
# config's vif = [ "bridge=..." ] (lodge check), the dashboard's create
# form (test-lib-form, the library form its fields call; and once the
# dashboard itself in tmux) and the web's create form (POST /api/domains
# with bridge new:NAME): every one refuses
# it with the same words, "'NAME' is not an interface name (RULE)", and no
# such interface is made.
. "$(dirname "$0")/../lib.sh"

integ_begin "interface-name rule" kvm root minios "cmd:curl" "cmd:python3" "cmd:ip"
FORM=$BUILD/tests/test-lib-form
[ -x "$FORM" ] || { skip "interface-name rule" "$FORM not built (make $FORM)"; exit 0; }
RULE="1 to 15 characters of A-Z a-z 0-9 _ . -, not . or .."
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
mkdir -p "$ROOT/etc/lodge"
printf 'kernel_dirs = [ "%s" ]\n' "$(dirname "$MINIOS")" >>"$ROOT/etc/lodge/lodge.conf"
printf 'alice-secret-1\n' | lodge web-passwd alice >"$T/pw.out" 2>&1 || { fail "ifname" "$(cat "$T/pw.out")"; exit 0; }
"$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
up() { curl -s -o /dev/null "$URL/"; }
wait_until 20 up || { fail "interface-name rule" "lodge web did not answer: $(cat "$T/web.log")"; exit 0; }
curl -s -c "$T/jar" -o "$T/login" -H 'Content-Type: application/json' \
	-d '{"user":"alice","password":"alice-secret-1"}' "$URL/api/login"
CSRF=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/login")

n=0
for bad in 'atk"x' 'br*' 'a b' 'abcdefghijklmnop' "br'1" 'x/y'; do
	n=$((n + 1))
	at_exit "ip link del '${bad//\'/\'\\\'\'}' 2>/dev/null"
	want="'$bad' is not an interface name ($RULE)"
	declare -A said=()
	said[bridge-create]=$(lodge bridge-create "$bad" 2>&1)
	said[network-create]=$(lodge network-create -s 10.213.$n.0/24 -b "$bad" ifn$n 2>&1)
	said[install]=$(lodge install -b "$bad" ifn-inst$n 2>&1)
	printf 'name = "ifn%s"\nkernel = "%s"\nvif = [ %s ]\n' "$n" "$MINIOS" \
		"$(python3 -c 'import json,sys; print(json.dumps("bridge=" + sys.argv[1]))' "$bad")" >"$T/ifn$n.cfg"
	said[config]=$(lodge check "$T/ifn$n.cfg" 2>&1)
	said[dashboard-form]=$("$FORM" --root "$ROOT" name=ifn$n kernel="$MINIOS" bridge="new:$bad" 2>&1)
	body=$(python3 -c 'import json,sys; print(json.dumps({"name": "ifn" + sys.argv[2], "kernel": sys.argv[3], "bridge": "new:" + sys.argv[1]}))' \
		"$bad" "$n" "$MINIOS")
	code=$(curl -s -o "$T/web-body" -w '%{http_code}' -b "$T/jar" -H "X-CSRF-Token: $CSRF" \
		-H 'Content-Type: application/json' -d "$body" "$URL/api/domains")
	said[web]="$code $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("error", ""))' "$T/web-body" 2>&1)"
	bad_faces=
	for face in bridge-create network-create install config dashboard-form web; do
		grep -qF -- "$want" <<<"${said[$face]}" || bad_faces+=" $face: ${said[$face]};"
	done
	[ "${said[web]%% *}" = 400 ] || bad_faces+=" web status ${said[web]%% *};"
	ip link show dev "$bad" >/dev/null 2>&1 && bad_faces+=" an interface named $bad exists;"
	[ -e "$ROOT/etc/lodge/networks/ifn$n.cfg" ] && bad_faces+=" network ifn$n was written;"
	if [ -z "$bad_faces" ]; then
		pass "bridge name $bad: refused by bridge-create, network-create, install, a config, the dashboard's and the web's forms, each saying: $want"
	else
		fail "bridge name $bad" "$bad_faces"
	fi
	unset said
done

# The dashboard's create form, in tmux (a server of the test's own): the
# bridge field's message under the form is the same.
if command -v tmux >/dev/null; then
	tmux_begin "lodge-ifname-$$"
	tmux_open dashboard 200 30 "TERM=xterm $LODGE --root $ROOT -d 0.5; sleep 120"
	want="'atk\"x' is not an interface name ($RULE)"
	# to_bridge: Down until the field the cursor is on is Bridge (the
	# form's fields differ by host): a mark typed shows on its line.
	on_bridge() { has '^Bridge +zq( |$)'; }
	to_bridge() {
		local i
		for i in $(seq 14); do
			press Down
			type_text zq
			shows 5 zq || return 1
			on_bridge && { press BSpace BSpace; return 0; }
			press BSpace BSpace
			hides 5 zq || return 1
		done
		return 1
	}
	if shows 10 Domain-0 && press n && shows 5 'Create a domain' &&
	   type_text ifdash && shows 5 ifdash && to_bridge &&
	   type_text 'new:atk"x' && wait_until 10 has_text "$want"; then
		pass "the dashboard's create form, bridge new:atk\"x: $want"
	else
		fail "dashboard form" "$(screen | sed -n 1,25p | tr '\n' '|')"
	fi
	ip link show dev 'atk"x' >/dev/null 2>&1 && fail "dashboard form" "an interface named atk\"x exists"
else
	skip "dashboard form" "tmux not installed"
fi
exit 0
