#!/bin/bash
# Saved files and migration streams are untrusted input.  A stream's HEAD
# carries the domain's config, and whoever wrote the stream chose every
# path in it: a forged one (tests/stream-forge.py rewrites a real save and
# makes every CRC right again) that names a root-only host file as its
# disk, /etc/shadow as its ramdisk or a kernel of its own is refused by
# lodge restore and by lodge migrate-receive, naming what it asked for,
# and the file is not touched; what this host's own config of the domain
# names, or lodge.conf's storage_dirs and kernel_dirs allow, is lent.  A
# stream out of order (a second HEAD, device state before RAM, a page
# twice, bytes after END), a bzip2 file missing its last byte or followed
# by 256 MiB of zeros is refused before the guest runs one instruction.
# A receiver without a secret listens on a Unix socket only root reaches,
# never on TCP; silent and stalled peers are dropped after a deadline and
# do not keep a real migration out.
. "$(dirname "$0")/../lib.sh"

integ_begin "stream trust" kvm root minios "cmd:setpriv:util-linux"
RA=$T/a RB=$T/b
integ_root "$RA"
integ_root "$RB"
FORGE="python3 $TOP/tests/stream-forge.py"
la() { timeout 60 "$LODGE" --root "$RA" "$@"; }
lb() { timeout 60 "$LODGE" --root "$RB" "$@"; }
one_line() { tr '\r\n' '  ' | cut -c1-400; }
listed() { timeout 20 "$LODGE" --root "$1" list -o tsv 2>/dev/null | awk -F'\t' -v n="$2" '$1 == n { f = 1 } END { exit !f }'; }
nothing_of() {  # ROOT NAME: not listed, no runtime directory
	! listed "$1" "$2" && [ ! -e "$1/run/lodge/$2" ]
}
conlog() { timeout 20 "$LODGE" --root "$1" console --log "$2" 2>/dev/null | tr -d '\r'; }
shows() { conlog "$1" "$2" | grep -Eq -- "$3"; }

mkdir -p "$RA/etc/lodge/domains" "$RB/etc/lodge/domains" "$T/images" "$T/shared" "$T/evil"
# The victim: a root-only file a forged stream would have written.
head -c 1M /dev/urandom >"$T/victim" && chmod 600 "$T/victim"
victim_sum=$(sha256sum <"$T/victim")
victim_intact() { [ "$(sha256sum <"$T/victim")" = "$victim_sum" ]; }
truncate -s 16M "$T/images/v.img"
cfg() {  # ROOT NAME DISK [more lines]: a domain config
	local root=$1 name=$2 disk=$3
	shift 3
	{
		printf 'name = "%s"\nmemory = 32\nkernel = "%s"\ncmdline = "run=\\"counter 500\\""\n' "$name" "$MINIOS"
		printf 'disk = [ "file:%s,vda,w" ]\n' "$disk"
		printf '%s\n' "$@"
	} >"$root/etc/lodge/domains/$name.cfg"
}

# ---- a real save to forge from ---------------------------------------------------------------
cfg "$RA" v "$T/images/v.img"
if ! la create v >"$T/create.out" 2>&1 || ! wait_until 30 shows "$RA" v '^counter 2$'; then
	fail "stream trust" "the guest did not boot: $(one_line <"$T/create.out") $(conlog "$RA" v | tail -2 | one_line)"
	exit 0
fi
if ! la save v "$T/v.sav" >"$T/save.out" 2>&1; then
	fail "stream trust" "could not save: $(one_line <"$T/save.out")"; exit 0
fi
if la restore "$T/v.sav" >/dev/null 2>&1 && listed "$RA" v; then
	pass "a genuine save restores: its disk, kernel and bridge are what this host's config of v names"
else
	fail "genuine restore" "$(la restore "$T/v.sav" 2>&1 | one_line)"
fi
la destroy v >/dev/null 2>&1
wait_until 10 nothing_of "$RA" v

# restore_refused LABEL FILE PATTERN: lodge restore FILE fails with one line
# matching PATTERN, nothing is left and the victim is intact.
restore_refused() {
	local label=$1 file=$2 pat=$3 out rc
	out=$(la restore "$file" 2>&1); rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -Eq -- "$pat" <<<"$out" &&
	   nothing_of "$RA" v && victim_intact; then
		pass "$label: $(cut -c1-200 <<<"$out")"
	else
		fail "$label" "exit $rc, $(wc -l <<<"$out") lines: $(one_line <<<"$out"); listed: $(listed "$RA" v && echo yes); victim intact: $(victim_intact && echo yes || echo NO)"
		la destroy v >/dev/null 2>&1
	fi
}

# ---- forged configs, restored ----------------------------------------------------------------
$FORGE forge "$T/v.sav" "$T/disk.sav" --config-sub "$T/images/v.img" "$T/victim"
restore_refused "a save forged to name a root-only host file as its disk is refused, the file untouched" \
	"$T/disk.sav" "its disk $T/victim \(vda\) is not this host's to give: .*v\.cfg names no such disk.*storage_dirs"
$FORGE forge "$T/v.sav" "$T/ramdisk.sav" --config-sub "kernel = " 'ramdisk = "/etc/shadow"
kernel = '
restore_refused "a save forged to load /etc/shadow as its ramdisk is refused" \
	"$T/ramdisk.sav" "its ramdisk /etc/shadow is not this host's to give: .*kernel_dirs"
cp "$MINIOS" "$T/evil/minios.elf"
$FORGE forge "$T/v.sav" "$T/kernel.sav" --config-sub "$MINIOS" "$T/evil/minios.elf"
restore_refused "a save forged to boot a kernel of its own is refused" \
	"$T/kernel.sav" "its kernel $T/evil/minios.elf is not this host's to give"

# The strict rules, for a file this host cannot vouch for: with its key
# gone, v.sav's signature proves nothing (a file from elsewhere is the
# same), and what this host's config and lodge.conf lend decides.
mv "$RA/var/lib/lodge/host.key" "$T/a-host.key"

# This host's config lends the disk read-only: a stream asking to write is refused.
cfg "$RA" v "$T/images/v.img"
sed -i 's/,vda,w/,vda,r/' "$RA/etc/lodge/domains/v.cfg"
restore_refused "a save asking to write a disk this host's config lends read-only is refused" \
	"$T/v.sav" "its disk $T/images/v.img \(vda\) is not this host's to give: .*names it read-only"

# No config of v here: lodge.conf decides.
rm "$RA/etc/lodge/domains/v.cfg"
restore_refused "without this host's config of v, a disk outside storage_dirs is refused" \
	"$T/v.sav" "its disk $T/images/v.img \(vda\) is not this host's to give: this host has no config of domain v"
printf 'storage_dirs = [ "%s" ]\n' "$T/images" >"$RA/etc/lodge/lodge.conf"
restore_refused "... and so is a kernel outside kernel_dirs" "$T/v.sav" "its kernel $MINIOS is not this host's to give"
printf 'storage_dirs = [ "%s" ]\nkernel_dirs = [ "%s" ]\n' "$T/images" "$(dirname "$MINIOS")" >"$RA/etc/lodge/lodge.conf"
if la restore "$T/v.sav" >"$T/allowed.out" 2>&1 && listed "$RA" v; then
	pass "with its disk under storage_dirs and its kernel under kernel_dirs, the save restores"
else
	fail "restore allowed by lodge.conf" "$(one_line <"$T/allowed.out")"
fi
la destroy v >/dev/null 2>&1
wait_until 10 nothing_of "$RA" v
mv "$T/a-host.key" "$RA/var/lib/lodge/host.key"
cfg "$RA" v "$T/images/v.img"
rm -f "$RA/etc/lodge/lodge.conf"

# ---- streams out of order ----------------------------------------------------------------------
$FORGE forge "$T/v.sav" "$T/head2.sav" --dup-head
restore_refused "a stream with a second HEAD section is refused" "$T/head2.sav" "second HEAD"
$FORGE forge "$T/v.sav" "$T/devfirst.sav" --dev-first
restore_refused "a stream with device state before its RAM is refused" "$T/devfirst.sav" "out of order"
$FORGE forge "$T/v.sav" "$T/page2.sav" --dup-page
restore_refused "a saved file holding a page twice is refused" "$T/page2.sav" "in the saved file twice"
$FORGE forge "$T/v.sav" "$T/trailing.sav" --trailing "more bytes"
restore_refused "a stream with bytes after its END is refused" "$T/trailing.sav" "after its END section"

bzip2 -c "$T/v.sav" >"$T/v.sav.bz2"
head -c $(($(stat -c %s "$T/v.sav.bz2") - 1)) "$T/v.sav.bz2" >"$T/short.bz2"
restore_refused "a bzip2 save missing its last byte is refused before its guest runs" "$T/short.bz2" \
	"bzip2 data is corrupt or truncated"
{ cat "$T/v.sav"; head -c 256M /dev/zero; } | bzip2 -c >"$T/bomb.bz2"
restore_refused "a bzip2 save followed by 256 MiB of zeros ($(stat -c %s "$T/bomb.bz2") bytes) is refused at the first of them" \
	"$T/bomb.bz2" "after its END section"
if la restore "$T/v.sav.bz2" >"$T/bz.out" 2>&1 && listed "$RA" v &&
   [ "$(timeout 20 "$LODGE" --root "$RA" list -o tsv | awk -F'\t' '$1 == "v" { print $5 }')" = running ]; then
	pass "the whole bzip2 save restores, and runs"
else
	fail "bzip2 restore" "$(one_line <"$T/bz.out")"
fi
la destroy v >/dev/null 2>&1
wait_until 10 nothing_of "$RA" v

# ---- the receiver without a secret: a Unix socket, root only ----------------------------------
printf 'storage_dirs = [ "%s" ]\nkernel_dirs = [ "%s" ]\n' "$T/shared" "$(dirname "$MINIOS")" >"$RB/etc/lodge/lodge.conf"
msg=$(lb migrate-receive --listen 127.0.0.1:8302 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q 'without a migration secret' <<<"$msg" && ! grep -q '^listening' <<<"$msg"; then
	pass "without a secret, migrate-receive refuses to listen on TCP, even on loopback"
else
	fail "no TCP listener without a secret" "exit $rc: $(one_line <<<"$msg")"
fi
SOCK=$RB/run/lodge/.migrate.sock
"$LODGE" --root "$RB" migrate-receive >"$T/recv.out" 2>&1 &
if wait_for "$T/recv.out" "^listening on $SOCK \\(root only\\)" 15 && [ "$(stat -c %a "$SOCK")" = 600 ]; then
	pass "without a secret, migrate-receive listens on $SOCK, mode 600"
else
	fail "Unix socket listener" "$(one_line <"$T/recv.out") mode $(stat -c %a "$SOCK" 2>&1)"
	exit 0
fi
chmod 755 "$T"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
out=$(nobody /usr/bin/python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$SOCK" 2>&1)
if grep -q 'PermissionError' <<<"$out"; then
	pass "another user cannot connect to it"
else
	fail "socket closed to other users" "$(one_line <<<"$out")"
fi
# Its mode is not the only guard: with the socket opened to all, the
# receiver still asks the kernel who the peer is.
chmod 666 "$SOCK"
out=$(nobody /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(200).decode().strip())' "$SOCK" 2>&1)
chmod 600 "$SOCK"
if grep -q '^error only root may migrate a domain to this host' <<<"$out" &&
   wait_for "$T/recv.out" 'refused a migration from uid 65534' 10; then
	pass "a user who reaches the socket anyway is refused by its uid: $out"
else
	fail "peer credentials checked" "$(one_line <<<"$out"); $(one_line <"$T/recv.out")"
fi

# A forged stream, sent by root through the socket.
out=$($FORGE send --unix "$SOCK" "$T/disk.sav" 2>&1)
if grep -q "^error its disk $T/victim (vda) is not this host's to give" <<<"$out" && victim_intact && nothing_of "$RB" v &&
   wait_for "$T/recv.out" "refused domain from a local root process .*its disk $T/victim" 10; then
	pass "migrate-receive refuses a forged stream naming a root-only file as its disk; the file is untouched"
else
	fail "forged stream over the socket" "$(one_line <<<"$out"); victim intact: $(victim_intact && echo yes || echo NO); $(tail -2 "$T/recv.out" | one_line)"
fi

# Silent and stalled peers, then a real migration beside them.
for i in 1 2; do
	$FORGE stall --unix "$SOCK" --after nothing >"$T/silent$i.out" 2>&1 &
done
$FORGE stall --unix "$SOCK" --after auth >"$T/stalled.out" 2>&1 &
wait_for "$T/stalled.out" '^auth: ok' 10
truncate -s 16M "$T/shared/m.img"
cfg "$RA" m "$T/shared/m.img"
if la create m >/dev/null 2>&1 && wait_until 30 shows "$RA" m '^counter 2$'; then
	if la migrate m "$SOCK" >"$T/mig.out" 2>&1 && grep -q "^migrated m to $SOCK in" "$T/mig.out" &&
	   wait_until 10 listed "$RB" m && wait_until 10 nothing_of "$RA" m; then
		pass "a migration through the socket succeeds while two silent peers and a stalled one are connected ($(grep -o 'downtime [0-9.]* ms' "$T/mig.out"))"
	else
		fail "migration beside silent peers" "$(one_line <"$T/mig.out"); $(tail -3 "$T/recv.out" | one_line)"
	fi
	lb destroy m >/dev/null 2>&1
else
	fail "migration beside silent peers" "m did not boot on host a"
fi
if wait_for "$T/silent1.out" '^closed by the receiver' 30 && wait_for "$T/silent2.out" '^closed by the receiver' 30 &&
   wait_for "$T/stalled.out" '^closed by the receiver' 30 && wait_for "$T/recv.out" 'did not authenticate within' 5; then
	pass "the receiver drops the silent peers and the one that stalled after authenticating ($(grep -o 'its header did not come within [0-9]* s' "$T/recv.out" | head -1))"
else
	fail "silent peers dropped" "$(cat "$T"/silent*.out "$T/stalled.out" | one_line); $(tail -3 "$T/recv.out" | one_line)"
fi

# More connections at once than it serves: the ninth is told so.
for i in 1 2 3 4 5 6 7 8; do
	$FORGE stall --unix "$SOCK" --after nothing >"$T/many$i.out" 2>&1 &
done
for i in 1 2 3 4 5 6 7 8; do wait_for "$T/many$i.out" '^connected' 10; done
out=$($FORGE send --unix "$SOCK" "$T/v.sav" 2>&1)
if grep -q 'busy' <<<"$out"; then
	pass "with 8 connections being served, the next one is refused at once: $out"
else
	fail "connection cap" "$(one_line <<<"$out")"
fi

# ---- with a secret, over TCP: an authenticated peer is no more trusted -------------------------
head -c 32 /dev/urandom | base64 >"$T/secret" && chmod 600 "$T/secret"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$LODGE" --root "$RB" migrate-receive --secret-file "$T/secret" --listen "127.0.0.1:$PORT" >"$T/recv2.out" 2>&1 &
if wait_for "$T/recv2.out" "^listening on 127.0.0.1:$PORT \\(secret required\\)" 15; then
	out=$($FORGE send --tcp "127.0.0.1:$PORT" --secret "$T/secret" "$T/disk.sav" 2>&1)
	if grep -q "^error its disk $T/victim (vda) is not this host's to give" <<<"$out" && victim_intact && nothing_of "$RB" v; then
		pass "a peer that knows the secret still cannot name a host file as a disk: the forged stream is refused"
	else
		fail "forged stream from an authenticated peer" "$(one_line <<<"$out"); victim intact: $(victim_intact && echo yes || echo NO)"
	fi
else
	fail "TCP listener with a secret" "$(one_line <"$T/recv2.out")"
fi

# ---- this host's own saves (issue 31, defect 8) -----------------------------------------------
# What this host wrote it signed with its key (ROOT/var/lib/lodge/host.key,
# made by the first save), and trusts to name what it named: a domain
# created from a config of its own elsewhere, its disk outside
# storage_dirs and its kernel outside kernel_dirs, restores here.  The
# same file with one byte of its config changed (CRC made good), or
# restored on another host, gets the strict rules and is refused.  A
# migration to a peer that holds the secret is signed with it but still
# held to the peer's lodge.conf.
mkdir -p "$T/some"
truncate -s 16M "$T/some/x.img"
printf 'name = "x"\nmemory = 32\nkernel = "%s"\ncmdline = "run=\\"counter 500\\""\ndisk = [ "file:%s,vda,w" ]\n' \
	"$MINIOS" "$T/some/x.img" >"$T/some/x.cfg"
KEY=$RA/var/lib/lodge/host.key
if la create "$T/some/x.cfg" >"$T/x.out" 2>&1 && wait_until 30 shows "$RA" x '^counter 2$' &&
   la save x "$T/x.sav" >>"$T/x.out" 2>&1; then
	if [ "$(stat -c '%s %a %U' "$KEY" 2>&1)" = "32 600 root" ] && grep -aq '^signed [0-9a-f]\{64\}$' "$T/x.sav"; then
		pass "the first save makes the host key ($KEY: 32 bytes, 0600, root's) and signs its HEAD"
	else
		fail "the host key" "$(stat -c '%s %a %U' "$KEY" 2>&1); $(head -c 300 "$T/x.sav" | tr -c '[:print:]\n' '.' | one_line)"
	fi
	out=$(la restore "$T/x.sav" 2>&1); rc=$?
	if [ $rc -eq 0 ] && listed "$RA" x && wait_until 10 shows "$RA" x '^counter [0-9]+$'; then
		pass "a save of a domain created from $T/some/x.cfg (disk and kernel this host does not lend) restores here: $out"
	else
		fail "this host's own save restores" "exit $rc: $(one_line <<<"$out")"
	fi
	la destroy x >/dev/null 2>&1
	wait_until 10 nothing_of "$RA" x
	$FORGE forge "$T/x.sav" "$T/x1.sav" --config-sub 'Lodge domain x' 'Lodge domain y' >/dev/null
	if cmp -s "$T/x.sav" "$T/x1.sav" || [ "$(cmp -l "$T/x.sav" "$T/x1.sav" 2>/dev/null | wc -l)" -gt 5 ]; then
		fail "one byte of the config changed" "forge changed $(cmp -l "$T/x.sav" "$T/x1.sav" 2>/dev/null | wc -l) bytes"
	fi
	out=$(la restore "$T/x1.sav" 2>&1); rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] &&
	   grep -q "its disk $T/some/x.img (vda) is not this host's to give.*its signature is not this host's, or the file was changed" <<<"$out" &&
	   nothing_of "$RA" x; then
		pass "the same file with one byte of its config changed (CRC made good) is refused: $(cut -c1-220 <<<"$out")"
	else
		fail "a changed signed file is refused" "exit $rc: $(one_line <<<"$out")"
		la destroy x >/dev/null 2>&1
	fi
	out=$(lb restore "$T/x.sav" 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -q "is not this host's to give" <<<"$out" && nothing_of "$RB" x; then
		pass "another host (its own key) gives the file the strict rules: $(cut -c1-160 <<<"$out")"
	else
		fail "another host's restore is strict" "exit $rc: $(one_line <<<"$out")"
		lb destroy x >/dev/null 2>&1
	fi
	# A migration to a peer holding the secret: signed with it, which
	# proves where it came from, but the peer's lodge.conf still decides
	# what it lends (a pool's secret must not let one host's lodge.conf
	# decide another's): x's disk outside b's storage_dirs is refused.
	if la restore "$T/x.sav" >/dev/null 2>&1 && wait_until 10 listed "$RA" x; then
		out=$(la migrate --secret-file "$T/secret" x "127.0.0.1:$PORT" 2>&1); rc=$?
		if [ $rc -ne 0 ] && grep -q "its disk $T/some/x.img (vda) is not this host's to give" <<<"$out" &&
		   listed "$RA" x && nothing_of "$RB" x; then
			pass "a peer's signed migration is still held to the receiver's lodge.conf: x stays on a ($(cut -c1-120 <<<"$out"))"
		else
			fail "a peer's signed migration held to lodge.conf" "exit $rc: $(one_line <<<"$out"); $(tail -2 "$T/recv2.out" | one_line)"
		fi
	else
		fail "a peer's signed migration held to lodge.conf" "x did not restore on a"
	fi
	la destroy x >/dev/null 2>&1
	lb destroy x >/dev/null 2>&1
else
	fail "this host's own saves" "$(one_line <"$T/x.out")"
fi
exit 0
