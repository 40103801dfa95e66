#!/bin/bash
# A disk path is opened once (issue 31, defect 4): a web user's
# block-attach of a file in storage_dirs, while whoever may write that
# directory swaps the file for a symlink to a root-only file outside it
# as fast as it can, never gives the domain the root-only file.  The
# check of what lodge.conf lends is made on the descriptor lodge-hyp gets,
# not on a name looked up a second time.  Checked after every attach: no
# descriptor of the domain's lodge-hyp processes is the root-only file's
# inode, and the disk the runtime config names is the file in storage.
# Also: the symlink left in place is refused (403), the CLI's attach
# names the disk by the file it opened (its real path), and a domain's
# start hands lodge-hyp its disk as a descriptor: a reboot after the
# disk's name was swapped for a symlink to the root-only file still holds
# the file it was created with.
. "$(dirname "$0")/../lib.sh"

integ_begin "attach race" kvm root minios netns "cmd:curl" "cmd:python3"
PORT=$(in_ns python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
J='Content-Type: application/json'
TRIES=${ATTACH_RACE_TRIES:-40}

STORE=$T/store
mkdir -p "$STORE"
truncate -s 4M "$STORE/real.img"
cp "$STORE/real.img" "$STORE/data.img"
# The root-only file: outside storage_dirs, 0600.
SECRET=$T/secret/root-only.img
mkdir -p "$T/secret"
truncate -s 4M "$SECRET"
chmod 600 "$SECRET"
SECRET_ID=$(stat -c '%d:%i' "$SECRET")
printf 'storage_dirs = [ "%s" ]\n' "$STORE" >"$ROOT/etc/lodge/lodge.conf"
printf 'alice-secret-1\n' | lodge web-passwd alice >/dev/null 2>&1
in_ns ip link set lo up
printf 'name = "ar"\nmemory = 32\nvcpus = 1\nkernel = "%s"\n' "$MINIOS" >"$DOMS/ar.cfg"
conlog() { lodge console --log "$1" 2>/dev/null | tr -d '\r'; }
if ! lodge create ar >/dev/null 2>&1 || ! wait_until 30 eval 'conlog ar | grep -q "hotplug: PCI hot-plug on GPE 1"'; then
	fail "attach race" "the guest did not boot: $(conlog ar | tail -3)"
	exit 0
fi
HYP_PID=$(field ar 9)
track_pid "$HYP_PID" $(pgrep -P "$HYP_PID")
ip netns exec "$NS" "$LODGE" --root "$ROOT" web --listen "127.0.0.1:$PORT" >"$T/web.log" 2>&1 &
WEB_PID=$!
if ! wait_until 20 in_ns curl -s -o /dev/null "$URL/"; then
	fail "attach race" "lodge web did not answer: $(cat "$T/web.log")"
	exit 0
fi
code() { in_ns curl -s -o "$T/body" -w '%{http_code}' "$@"; }
code -c "$T/alice.jar" -H "$J" -d '{"user":"alice","password":"alice-secret-1"}' "$URL/api/login" >/dev/null
CSRF=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' "$T/body")
A=(-b "$T/alice.jar" -H "X-CSRF-Token: $CSRF" -H "$J")
D=$URL/api/domains/ar

# The inodes the domain's lodge-hyp processes hold open, one per line.
held() {
	local p fd
	for p in "$HYP_PID" $(pgrep -P "$HYP_PID"); do
		for fd in /proc/"$p"/fd/*; do stat -L -c '%d:%i' "$fd" 2>/dev/null; done
	done
}
holds_secret() { held | grep -qx "$SECRET_ID"; }
listed() { lodge block-list ar 2>/dev/null | tail -n +2 | awk '{ print $1 }' | tr '\n' ' '; }
detached() { [ -z "$(listed)" ]; }

# ---- a symlink out of storage_dirs, left in place ---------------------------------
ln -s "$SECRET" "$STORE/link.img"
c=$(code "${A[@]}" -d "{\"disk\":\"$STORE/link.img,raw,vdb,rw\"}" "$D/block-attach")
if [ "$c" = 403 ] && grep -q storage_dirs "$T/body" && ! holds_secret && detached; then
	pass "a symlink in storage_dirs to a root-only file: refused (403: $(cat "$T/body"))"
else
	fail "a symlink out of storage_dirs" "$c $(cat "$T/body"); disks $(listed)"
fi

# ---- the race -------------------------------------------------------------------
# The swapper: data.img is, in turn, the file in storage (a hard link of
# real.img) and a symlink to the root-only file, each put in place by one
# rename; it stops when $T/stop appears.
python3 - "$STORE" "$SECRET" "$T/stop" "$T/swaps" <<'EOF' &
import os, sys
store, secret, stop, count = sys.argv[1:]
data, tmp = os.path.join(store, "data.img"), os.path.join(store, ".swap")
n = 0
while not os.path.exists(stop):
    for make in (lambda: os.link(os.path.join(store, "real.img"), tmp), lambda: os.symlink(secret, tmp)):
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        make()
        os.rename(tmp, data)
        n += 1
open(count, "w").write(str(n))
EOF
SWAPPER=$!
spec="{\"disk\":\"$STORE/data.img,raw,vdb,rw\"}"
attached=0 refused=0 other=0 leaks=0 wrong=0 why=""
for ((i = 0; i < TRIES; i++)); do
	c=$(code "${A[@]}" -d "$spec" "$D/block-attach")
	case $c in
	200)
		attached=$((attached + 1))
		if holds_secret; then
			leaks=$((leaks + 1))
			why="try $i: lodge-hyp holds the root-only file ($SECRET_ID)"
		fi
		if grep -q root-only "$RUN/ar/config"; then
			wrong=$((wrong + 1))
			why="try $i: the runtime config names the root-only file: $(grep root-only "$RUN/ar/config")"
		fi
		code "${A[@]}" -d '{"vdev":"vdb","force":true}' "$D/block-detach" >/dev/null
		wait_until 20 detached || { why="try $i: vdb not detached: $(listed)"; other=$((other + 1)); break; }
		;;
	403 | 409) refused=$((refused + 1)) ;;
	*) other=$((other + 1)); why="try $i: $c $(cat "$T/body")" ;;
	esac
done
touch "$T/stop"
wait "$SWAPPER"
swaps=$(cat "$T/swaps" 2>/dev/null)
if [ "$leaks" = 0 ] && [ "$wrong" = 0 ] && [ "$other" = 0 ] && [ "$attached" -gt 0 ] && [ "${swaps:-0}" -gt "$TRIES" ]; then
	pass "$TRIES web block-attaches while data.img and a symlink to a root-only file swap ($swaps swaps): $attached attached the file in storage, $refused refused (403: the symlink; 409: changed while opened), the root-only file never"
else
	fail "attach race" "$attached attached ($leaks held the root-only file, $wrong named another disk), $refused refused, $other other; $swaps swaps; $why"
fi

# ---- the CLI: the disk it attaches is what it opened -------------------------------
ln -sfn "$STORE/real.img" "$T/alias.img"
if lodge block-attach ar "$T/alias.img,raw,vdc,rw" >"$T/cli.out" 2>&1 &&
	grep -q "$STORE/real.img" "$RUN/ar/config" && ! grep -q alias.img "$RUN/ar/config"; then
	pass "lodge block-attach through a symlink: the domain's disk is named by the file opened ($STORE/real.img)"
else
	fail "CLI block-attach through a symlink" "$(cat "$T/cli.out"); $(lodge block-list ar 2>&1)"
fi
lodge destroy ar >/dev/null 2>&1

# ---- a start: lodge-hyp is given its disks, and opens none by name ------------------
# Each boot of a domain used to open its disks by path again: a reboot
# after the name was swapped for a symlink gave the guest whatever the
# name led to then.  Now the supervisor holds what create opened and
# each boot takes a copy.
cp "$STORE/real.img" "$STORE/boot.img"
BOOT_ID=$(stat -c '%d:%i' "$STORE/boot.img")
printf 'name = "ar2"\nmemory = 32\nvcpus = 1\nkernel = "%s"\ndisk = [ "file:%s,xvda,w" ]\non_reboot = "restart"\n' \
	"$MINIOS" "$STORE/boot.img" >"$DOMS/ar2.cfg"
boots() { conlog ar2 | grep -c 'Lodge Mini-OS'; }
if lodge create ar2 >"$T/create2.out" 2>&1 && wait_until 30 eval '[ "$(boots)" -ge 1 ]' && [ -n "$(field ar2 9)" ]; then
	P2=$(field ar2 9)
	SUP2=$(awk '/^PPid:/ { print $2 }' "/proc/$P2/status")
	track_pid "$SUP2" "$P2"
	hyp_cmd=$(tr '\0' ' ' <"/proc/$SUP2/cmdline")
	mv "$STORE/boot.img" "$STORE/boot.old"
	ln -s "$SECRET" "$STORE/boot.img"
	lodge reboot ar2 >/dev/null 2>&1
	if wait_until 30 eval '[ "$(boots)" -ge 2 ]' && wait_until 10 eval '[ -n "$(field ar2 9)" ] && [ "$(field ar2 9)" != "$P2" ]'; then
		P3=$(field ar2 9)
		held3=$(for p in "$SUP2" "$P3"; do for fd in /proc/"$p"/fd/*; do stat -L -c '%d:%i' "$fd" 2>/dev/null; done; done)
		if grep -q -- "--disk $STORE/boot.img,id=xvda,fd=[0-9]" <<<"$hyp_cmd" && grep -qx "$BOOT_ID" <<<"$held3" &&
			! grep -qx "$SECRET_ID" <<<"$held3"; then
			pass "create hands lodge-hyp its disk (--disk ...,fd=N); after the name is swapped for a symlink to a root-only file, the reboot still holds the file created with, never the root-only one"
		else
			fail "a reboot after the disk's name was swapped" "cmdline: $hyp_cmd; holds boot.img: $(grep -cx "$BOOT_ID" <<<"$held3"), the root-only file: $(grep -cx "$SECRET_ID" <<<"$held3")"
		fi
	else
		fail "a reboot after the disk's name was swapped" "no second boot: $(tail -3 "$RUN/ar2/lodge-hyp.log" 2>&1 | tr '\n' '|')"
	fi
else
	fail "create ar2" "$(cat "$T/create2.out")"
fi
lodge destroy ar2 >/dev/null 2>&1
kill "$WEB_PID" 2>/dev/null
wait "$WEB_PID" 2>/dev/null || true
