#!/bin/bash
# README.md as written (issue 35, point 6): every indented command block,
# in order, on a fresh root (nothing under it yet), as one shell script
# each with `set -e`, from the source tree (where the Quick start leaves
# the build).  Paths under the test's root: lodge runs with --root, and the
# host paths a block names (/etc/lodge, /var/lib/lodge, /var/log/lodge,
# /var/cache/lodge, /run/lodge, /tmp, ~) are read as the root's, in a
# network namespace of the test's own (entered by nsenter: ip netns exec
# would mount a sysfs of its own, without the host's cgroups, which the
# CPU block uses).  A block that cannot run in a test
# says so in README.md, in an HTML comment just before it:
#     <!-- readme.sh: not run: WHY -->       a SKIP line with WHY
#     <!-- readme.sh: needs WHAT... -->      run when each is here, else SKIP:
#                                            hw-kvm, cgroup-cpu, template (bookworm's)
#     <!-- readme.sh: not commands -->       a listing (Layout): not a block
. "$(dirname "$0")/../lib.sh"

integ_begin "README" root kvm minios netns cmd:python3 cmd:nsenter
rm -rf "$ROOT"
mkdir -p "$ROOT" "$T/home" "$T/tmp" "$T/blocks"
at_exit 'lodge network-delete lan >/dev/null 2>&1; lodge network-delete default >/dev/null 2>&1'

# Each block into $T/blocks/N.sh, its section and marker into N.meta.
python3 - "$TOP/README.md" "$T/blocks" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
out, section, marker, n, i = sys.argv[2], "", "", 0, 0
while i < len(lines):
    l = lines[i]
    if l.startswith("## ") or l.startswith("### "):
        section, marker = l.lstrip("# "), ""
    m = re.match(r"<!-- readme\.sh: (.*) -->$", l)
    if m:
        marker = m.group(1)
    if l.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
        block = []
        while i < len(lines) and (lines[i].startswith("    ") or (not lines[i].strip() and i + 1 < len(lines) and lines[i + 1].startswith("    "))):
            block.append(lines[i][4:])
            i += 1
        n += 1
        open(f"{out}/{n:02d}.sh", "w").write("\n".join(block) + "\n")
        open(f"{out}/{n:02d}.meta", "w").write(f"{section}\n{marker}\n")
        marker = ""
        continue
    i += 1
PY

cgroup_cpu() {
	grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null ||
		awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { ok = 1 } END { exit !ok }' /proc/mounts
}
# why_not NEED...: empty when each is here, else why not.
why_not() {
	local need
	for need; do
		case $need in
		hw-kvm) [ "$(kvm_backend)" = pvm ] && { echo "needs hardware KVM (this host's is PVM: a stock kernel boots, but a whole Debian system takes far too long under its emulation)"; return; } ;;
		cgroup-cpu) cgroup_cpu || { echo "needs a cgroup CPU controller (none is mounted here)"; return; } ;;
		template) template_cached bookworm || { echo "needs bookworm's template: $TEMPLATE_WHY"; return; } ;;
		*) echo "unknown need '$need' in README.md"; return ;;
		esac
	done
}

mkdir -p "$T/bin"
cat >"$T/bin/lodge" <<EOF2
#!/bin/sh
exec "$LODGE" --root "$ROOT" "\$@"
EOF2
chmod +x "$T/bin/lodge"
ran=0
for f in "$T"/blocks/*.sh; do
	meta=${f%.sh}.meta
	section=$(sed -n 1p "$meta") marker=$(sed -n 2p "$meta")
	label="README block $(basename "$f" .sh) ($section: $(grep -m1 -v '^#' "$f" | cut -c1-50))"
	case $marker in
	"not commands") continue ;;
	"not run: "*) skip "$label" "${marker#not run: }"; continue ;;
	"needs "*)
		# shellcheck disable=SC2086
		why=$(why_not ${marker#needs })
		[ -n "$why" ] && { skip "$label" "$why"; continue; }
		;;
	"") ;;
	*) fail "$label" "unknown marker '$marker'"; continue ;;
	esac
	# Never the host's packages or a make run from a test.
	if grep -Eq '(^|[;&|] *)(apt-get|apt|make) ' "$f"; then
		fail "$label" "it runs apt-get or make: mark it not run in README.md"
		continue
	fi
	# The host's paths as the root's.
	sed -e "s|/tmp/|$T/tmp/|g" -e "s|/etc/lodge|$ROOT/etc/lodge|g" -e "s|/var/lib/lodge|$ROOT/var/lib/lodge|g" \
	    -e "s|/var/log/lodge|$ROOT/var/log/lodge|g" -e "s|/var/cache/lodge|$ROOT/var/cache/lodge|g" \
	    -e "s|/run/lodge|$ROOT/run/lodge|g" "$f" >"$f.run"
	if (cd "$TOP" && HOME=$T/home PATH=$T/bin:$PATH timeout 300 nsenter --net="/run/netns/$NS" bash -e "$f.run") \
		</dev/null >"$f.out" 2>&1; then
		pass "$label: ran as written"
		ran=$((ran + 1))
	else
		fail "$label" "exit $?: $(tail -6 "$f.out" | tr '\n' '|')"
	fi
done
[ "$ran" -ge 4 ] || fail "README blocks" "only $ran ran"
