#!/bin/bash
# lodge seed (issue 20): a guest's cloud-init NoCloud seed, read back as
# cloud-init would find it: a vfat disk labelled cidata with meta-data
# (a fresh instance-id, the hostname) and user-data (the ssh key, the
# packages, a yescrypt hash that verifies with the password and no
# plaintext anywhere in the disk, the user's own #cloud-config byte for
# byte), which cloud-init schema finds valid; a disk line a config
# loads; bad input refused in one line with nothing left, a full disk
# mid-build too.
. "$(dirname "$0")/../lib.sh"

integ_begin "cloud-init seed" cmd:mkfs.vfat:dosfstools cmd:mtype:mtools cmd:ssh-keygen:openssh-client \
	cmd:python3 cmd:perl
if ! python3 -c 'import yaml' 2>/dev/null; then
	skip "cloud-init seed" "python3-yaml not installed (reads the seed's YAML back)"
	exit 0
fi
out=$T/out
err=$T/err
mkdir -p "$T/seeds"
ssh-keygen -q -t ed25519 -N '' -C 'me@lodge test' -f "$T/id" || { fail "ssh-keygen" "no key"; exit 0; }
printf 'pa55 "w0rd"\n' >"$T/pw"
cat >"$T/mine.yaml" <<'EOF'
#cloud-config
# the user's own
runcmd:
  - [touch, /run/lodge-was-here]
packages: [htop]
write_files:
  - path: /etc/motd
    content: "welcome, José\n"
EOF

# ---- a seed with everything ----------------------------------------------------------------
img=$T/seeds/web-seed.img
if lodge seed web --hostname web-1.example.org --ssh-key "$T/id.pub" --password-file "$T/pw" \
	--packages vim,tree --user-data "$T/mine.yaml" -o "$img" >"$out" 2>"$err" && [ -s "$img" ] && [ ! -s "$err" ]; then
	cp "$out" "$T/first"
	pass "lodge seed writes the seed: $(head -1 "$out")"
else
	fail "lodge seed" "exit $?, $(cat "$err")"
	exit 0
fi
label=$(blkid -o value -s LABEL "$img") type=$(blkid -o value -s TYPE "$img")
if [ "$label" = cidata ] && [ "$type" = vfat ]; then
	pass "the seed is vfat labelled cidata (blkid), as NoCloud looks for"
else
	fail "the seed's label" "LABEL '$label' TYPE '$type'"
fi
if mdir -b -i "$img" :: >"$out" 2>&1 && [ "$(sort "$out" | tr '\n' ' ')" = "::/meta-data ::/user-data " ]; then
	pass "its root holds meta-data and user-data (mdir)"
else
	fail "the seed's files" "$(cat "$out")"
fi
mtype -i "$img" ::meta-data >"$T/meta-data" 2>&1
mtype -i "$img" ::user-data >"$T/user-data" 2>&1

# ---- meta-data, user-data ----------------------------------------------------------------------
# The seed's YAML read as cloud-init reads it (PyYAML, the email package
# for the multipart): one line "OK" or what differs.
check_seed() {
	python3 - "$T/meta-data" "$T/user-data" "$T/id.pub" "$T/mine.yaml" "$T" <<'EOF'
import email, re, sys, yaml
meta_path, ud_path, pub_path, mine_path, tdir = sys.argv[1:]
meta = yaml.safe_load(open(meta_path))
bad = []
if not re.fullmatch(r"web-[0-9a-f]{16}", str(meta.get("instance-id"))):
    bad.append("instance-id %r" % meta.get("instance-id"))
if meta.get("local-hostname") != "web-1.example.org":
    bad.append("local-hostname %r" % meta.get("local-hostname"))
raw = open(ud_path, "rb").read()
msg = email.message_from_bytes(raw)
parts = [p for p in msg.walk() if p.get_content_type() == "text/cloud-config"]
if len(parts) != 2:
    bad.append("%d cloud-config parts" % len(parts))
else:
    user, lodge = (p.get_payload(decode=True) for p in parts)
    if user != open(mine_path, "rb").read():
        bad.append("the user's part is not their file")
    if parts[1].get("Merge-Type") != "list(append)+dict(no_replace,recurse_list)+str()":
        bad.append("Merge-Type %r" % parts[1].get("Merge-Type"))
    cfg = yaml.safe_load(lodge)
    if not lodge.startswith(b"#cloud-config\n"):
        bad.append("Lodge's part does not start #cloud-config")
    if cfg.get("ssh_authorized_keys") != [open(pub_path).read().strip()]:
        bad.append("keys %r" % cfg.get("ssh_authorized_keys"))
    if cfg.get("packages") != ["vim", "tree"]:
        bad.append("packages %r" % cfg.get("packages"))
    user_cfg = cfg.get("user") or {}
    h = str(user_cfg.get("hashed_passwd"))
    if not h.startswith("$y$") or user_cfg.get("lock_passwd") is not False or user_cfg.get("name") != "debian":
        bad.append("user %r" % user_cfg)
    open(tdir + "/hash", "w").write(h)
    open(tdir + "/part-user.yaml", "wb").write(user)
    open(tdir + "/part-lodge.yaml", "wb").write(lodge)
print("OK" if not bad else "; ".join(bad))
EOF
}
res=$(check_seed 2>&1)
if [ "$res" = OK ]; then
	pass "meta-data: instance-id web-<16 hex>, local-hostname; user-data: the user's part byte for byte, then Lodge's with the key, the packages, a \$y\$ hash, its Merge-Type"
else
	fail "the seed's meta-data and user-data" "$res"
fi
hash=$(cat "$T/hash" 2>/dev/null)
verify() { perl -e 'exit(crypt($ARGV[0], $ARGV[1]) eq $ARGV[1] ? 0 : 1)' "$1" "$hash"; }
if [ -n "$hash" ] && verify 'pa55 "w0rd"' && ! verify 'pa55 "w0rd"x' && ! verify ''; then
	pass "the yescrypt hash verifies with the password (crypt(3)) and not with another"
else
	fail "the password hash" "'$hash' does not verify"
fi
if ! grep -aq 'pa55' "$img" "$T/user-data"; then
	pass "the plaintext password is nowhere in the seed disk"
else
	fail "the plaintext password" "found in the seed"
fi

# ---- cloud-init schema --------------------------------------------------------------------------
if command -v cloud-init >/dev/null; then
	ok=1
	for f in part-user part-lodge; do
		cloud-init schema --config-file "$T/$f.yaml" >"$out" 2>&1 || ok=0
		grep -q 'Valid cloud-config' "$out" || ok=0
	done
	if [ $ok = 1 ] && grep -q 'checked with cloud-init schema' <(lodge seed web -H web -P vim -o "$img" 2>&1); then
		pass "cloud-init schema says both parts are valid cloud-config, and lodge seed says it checked"
	else
		fail "cloud-init schema" "$(cat "$out")"
	fi
	printf '#cloud-config\npackages: 5\n' >"$T/bad-schema.yaml"
	lodge seed web -u "$T/bad-schema.yaml" -o "$T/seeds/bad.img" >"$out" 2>"$err"; rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$err")" = 1 ] && grep -q "is not valid cloud-config (cloud-init schema): .*packages" "$err" &&
	   [ ! -e "$T/seeds/bad.img" ]; then
		pass "user-data that is YAML but not valid cloud-config is refused with cloud-init's words: $(cat "$err")"
	else
		fail "user-data cloud-init schema refuses" "exit $rc: $(cat "$err")"
	fi
else
	skip "cloud-init schema" "cloud-init not installed: lodge seed says '$(grep -o 'not checked.*' "$T/first" || true)'"
fi
# Where cloud-init is not installed the seed is made all the same, and
# the result says it was not checked: /usr/bin without cloud-init, in a
# mount namespace of this test's own (mcopy is mtools by its name).
if command -v cloud-init >/dev/null && need_root "a host without cloud-init"; then
	mkdir -p "$T/bin" && cp /usr/bin/mtools "$T/bin/" && ln -s mtools "$T/bin/mcopy"
	res=$(unshare -m --propagation private bash -c '
		mount --bind "$1" /usr/bin || exit 3
		"$2" --root "$3" seed web -P vim -o "$4" 2>&1; echo "exit $?"' _ "$T/bin" "$LODGE" "$ROOT" "$T/seeds/nock.img")
	if grep -q '^exit 0$' <<<"$res" && grep -q 'not checked: cloud-init (for cloud-init schema) is not installed' <<<"$res" &&
	   [ -s "$T/seeds/nock.img" ]; then
		pass "without cloud-init the seed is made, unchecked, and lodge seed says so"
	else
		fail "a host without cloud-init" "$res"
	fi
	rm -f "$T/seeds/nock.img"
fi

# ---- cloud-init's own NoCloud code reads the seed -------------------------------------------------
# Without booting: the seed as a read-only loop device, found by
# DataSourceNoCloud's device search (blkid: vfat, LABEL cidata), mounted
# and read by its callback, and user-data merged by cloud-init's own
# user-data processor and cloud-config handler, as at first boot.
if ! command -v cloud-init >/dev/null; then
	skip "cloud-init reads the seed" "cloud-init not installed"
elif need_root "cloud-init reads the seed"; then
	ci_py=$(head -1 "$(command -v cloud-init)" | sed 's/^#! *//')
	lodge seed web --hostname web-1.example.org --ssh-key "$T/id.pub" --password-file "$T/pw" \
		--packages vim,tree --user-data "$T/mine.yaml" -o "$img" >/dev/null 2>&1
	loopdev=
	if ! loop_attach loopdev "$img" -r; then
		fail "cloud-init reads the seed" "no loop device"
	else
		# This host's kernel may have no vfat (PVM test hosts do not): then
		# the files as mtools reads them stand in for the mount.
		how="mounted by NoCloud's callback"
		if ! grep -qw vfat /proc/filesystems && ! modprobe -q vfat 2>/dev/null; then
			mkdir -p "$T/mnt" && mcopy -i "$img" ::user-data ::meta-data "$T/mnt/"
			how="read with mtools (this kernel has no vfat to mount it)"
		else
			rm -rf "${T:?}/mnt"
		fi
		res=$("$ci_py" - "$loopdev" "$T/id.pub" "$T/mnt" <<'EOF' 2>&1
import os, sys, tempfile
from cloudinit import handlers, helpers, user_data, util
from cloudinit.handlers.cloud_config import CloudConfigPartHandler
from cloudinit.sources.DataSourceNoCloud import DataSourceNoCloud
dev, pub, copy = sys.argv[1:]
bad = []
if dev not in DataSourceNoCloud._get_devices(None, "cidata"):
    bad.append("NoCloud does not find %s" % dev)
want_files = {"required": ["user-data", "meta-data"], "optional": ["vendor-data", "network-config"]}
if os.path.isdir(copy):
    seeded = util.pathprefix2dict(copy, **want_files)
else:
    seeded = util.mount_cb(dev, lambda mp, d: util.pathprefix2dict(mp, **d), data=want_files)
md = util.load_yaml(seeded["meta-data"])
if md.get("local-hostname") != "web-1.example.org" or not md.get("instance-id", "").startswith("web-"):
    bad.append("meta-data %r" % md)
d = tempfile.mkdtemp()
paths = helpers.Paths({"cloud_dir": d, "run_dir": d})
h = CloudConfigPartHandler(paths)
h.handle_part(None, handlers.CONTENT_START, None, None, None, None)
for part in user_data.UserDataProcessor(paths).process(seeded["user-data"]).walk():
    if part.get_content_maintype() != "multipart":
        h.handle_part(None, part.get_content_type(), part.get_filename(), util.fully_decoded_payload(part),
                      None, dict(part))
cfg = h.cloud_buf
want = {"packages": ["htop", "vim", "tree"], "runcmd": [["touch", "/run/lodge-was-here"]],
        "ssh_authorized_keys": [open(pub).read().strip()]}
for k, v in want.items():
    if cfg.get(k) != v:
        bad.append("%s %r" % (k, cfg.get(k)))
if (cfg.get("user") or {}).get("name") != "debian" or not cfg["user"].get("hashed_passwd", "").startswith("$y$"):
    bad.append("user %r" % cfg.get("user"))
if not cfg.get("write_files") or cfg["write_files"][0]["content"] != "welcome, José\n":
    bad.append("write_files %r" % cfg.get("write_files"))
print("OK" if not bad else "; ".join(bad))
EOF
)
		if [ "$res" = OK ]; then
			pass "cloud-init's NoCloud finds the seed by its label (seed $how); its merge keeps the user's runcmd, write_files (UTF-8) and packages, then appends Lodge's packages and key, and the default user's hash"
		else
			fail "cloud-init reads the seed" "$res"
		fi
		loop_detach "$loopdev"
	fi
fi

# ---- the disk line a config takes -----------------------------------------------------------------
mkdir -p "$ROOT/var/lib/lodge/images"
: >"$T/kernel"
if lodge seed web -P vim >"$out" 2>"$err" && [ -f "$ROOT/var/lib/lodge/images/web-seed.img" ] &&
   line=$(sed -n "s/^disk += \[ '\(.*\)' \]$/\1/p" "$out") && [ "$line" = "file:$ROOT/var/lib/lodge/images/web-seed.img,vdb,r" ]; then
	pass "without -o the seed goes to the image directory as NAME-seed.img; its disk line is read-only vdb"
else
	fail "the default seed path" "$(cat "$out" "$err")"
fi
printf 'name = "web"\nkernel = "%s"\nmemory = 64\ndisk = [ "file:%s,vda,w", "%s" ]\n' "$T/kernel" "$T/kernel" "$line" >"$DOMS/web.cfg"
if lodge check web >"$out" 2>&1; then
	pass "a config with the seed's disk line loads (lodge check)"
else
	fail "the seed's disk line in a config" "$(cat "$out")"
fi

# ---- bad input: one line, nothing left -------------------------------------------------------------
mkdir -p "$T/empty"
refused() {
	local what=$1 want=$2
	shift 2
	lodge seed web -o "$T/empty/seed.img" "$@" >"$out" 2>"$err"; rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$err")" = 1 ] && grep -q -- "$want" "$err" && [ -z "$(ls -A "$T/empty")" ]; then
		pass "$what: refused in one line, nothing written ($(cat "$err"))"
	else
		fail "$what" "exit $rc, $(ls -A "$T/empty"), stderr: $(cat "$err")"
	fi
}
refused "a private key as --ssh-key" "is a private key: give its public key" --ssh-key "$T/id"
refused "a hostname with a newline" "is not a hostname" --hostname $'web\nevil'
refused "a package name with YAML syntax" "is not a Debian package name" --packages 'vim,[x]'
printf '#!/bin/sh\necho hi\n' >"$T/script"
refused "user-data that is a script" "does not start with a #cloud-config line" --user-data "$T/script"
: >"$T/empty-pw"
refused "an empty password file" "is empty" --password-file "$T/empty-pw"
if lodge seed web -o /dev/null >"$out" 2>"$err"; then
	fail "-o a device" "accepted"
else
	[ -c /dev/null ] && pass "-o naming a device is refused: $(cat "$err")" || fail "-o /dev/null" "/dev/null was replaced"
fi

# ---- a second seed replaces the first, with a new instance-id -----------------------------------
id1=$(mtype -i "$img" ::meta-data | sed -n 's/^instance-id: "\(.*\)"$/\1/p')
lodge seed web -o "$img" >/dev/null 2>&1
id2=$(mtype -i "$img" ::meta-data | sed -n 's/^instance-id: "\(.*\)"$/\1/p')
if [ -n "$id1" ] && [ -n "$id2" ] && [ "$id1" != "$id2" ] && [ "$(ls -A "$T/seeds")" = web-seed.img ]; then
	pass "a seed made again replaces the file with a fresh instance-id ($id1, then $id2), no temporary left"
else
	fail "a second seed" "'$id1' '$id2'; $(ls -A "$T/seeds")"
fi

# 600 KiB of user-data (a YAML comment): long for cloud-init schema to
# read, and more than a small disk holds.
{ echo '#cloud-config'; printf '# '; head -c 614400 /dev/zero | tr '\0' x; echo; echo 'packages: [htop]'; } >"$T/big.yaml"

# ---- killed while the seed is made --------------------------------------------------------------
# Caught while one of its tools runs (cloud-init schema on the big
# user-data, mkfs.vfat or mcopy), lodge seed is killed: its tool ends with
# it and no file is left.
mkdir -p "$T/killed"
"$LODGE" --root "$ROOT" seed web -u "$T/big.yaml" -o "$T/killed/seed.img" >/dev/null 2>&1 &
pid=$!
has_child() { kid=$(pgrep -P "$pid" | head -1); [ -n "$kid" ] || ! kill -0 "$pid" 2>/dev/null; }
wait_until 30 has_child
if [ -z "$kid" ]; then
	wait "$pid"
	skip "killed mid-build" "lodge seed ended before one of its tools could be seen running"
else
	what=$(cat "/proc/$kid/comm" 2>/dev/null)
	kill -TERM "$pid"
	wait "$pid"; st=$?
	kid_gone() { ! kill -0 "$kid" 2>/dev/null; }
	if [ $st = 0 ]; then
		skip "killed mid-build" "lodge seed ended (its last tool, $what, done) before the kill reached it"
	elif wait_until 10 kid_gone && [ -z "$(ls -A "$T/killed")" ]; then
		pass "lodge seed killed while $what ran: $what ended with it, nothing left"
	else
		fail "killed mid-build" "$what ($kid) $(kill -0 "$kid" 2>/dev/null && echo still runs); left: $(ls -A "$T/killed")"
	fi
fi

# ---- a full disk while the seed is made -----------------------------------------------------------
if need_root "a full disk mid-build"; then
	# The big user-data cannot go into a 256 KiB tmpfs: mkfs.vfat's few
	# tables fit, mcopy's copy does not.
	res=$(unshare -m --propagation private bash -c '
		mount -t tmpfs -o size=256k lodge-seed-full "$1" || exit 3
		"$2" --root "$3" seed web -u "$4" -o "$1/seed.img" 2>&1; echo "exit $?"
		ls -A "$1"' _ "$T/empty" "$LODGE" "$ROOT" "$T/big.yaml")
	if grep -q '^exit 1$' <<<"$res" && [ "$(grep -vc '^exit' <<<"$res")" = 1 ] && grep -q 'failed' <<<"$res"; then
		pass "a disk full while the seed is made: one message, nothing left ($(head -1 <<<"$res"))"
	else
		fail "a disk full mid-build" "$res"
	fi
fi
