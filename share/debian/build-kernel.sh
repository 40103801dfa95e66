#!/bin/bash
# Debian's cloud kernel for Lodge guests, without installing it on the host:
# download linux-image-cloud-amd64's kernel package, unpack it, and write
#   OUT/vmlinuz         the bzImage (Linux boot protocol)
#   OUT/vmlinux         the uncompressed ELF with its PVH entry note
#   OUT/kernel-version
#   OUT/modules/*.ko    virtio (pci, blk, net, balloon) and ext4 with their
#                       dependencies, OUT/modules/order listing load order
# Usage: share/debian/build-kernel.sh [OUT]   (default build/debian)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build/debian}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/.work
mkdir -p "$work"

pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
if [ -z "$pkg" ]; then
	echo "build-kernel: cannot resolve linux-image-cloud-amd64 (run apt-get update; is Debian's archive reachable?)" >&2
	exit 1
fi
deb=$(ls "$work"/"$pkg"_*.deb 2>/dev/null | head -1 || true)
if [ -z "$deb" ]; then
	(cd "$work" && apt-get download "$pkg" >/dev/null 2>&1) || {
		echo "build-kernel: cannot download $pkg from Debian's archive" >&2
		exit 1
	}
	deb=$(ls "$work"/"$pkg"_*.deb | head -1)
fi
if [ -f "$out/vmlinux" ] && [ "$out/vmlinux" -nt "$deb" ] && [ -f "$out/modules/order" ]; then
	exit 0
fi
rm -rf "$work/root"
dpkg-deb -x "$deb" "$work/root"
version=${pkg#linux-image-}
cp "$work/root/boot/vmlinuz-$version" "$out/vmlinuz"
echo "$version" >"$out/kernel-version"

# vmlinux: the compressed payload named by the setup header
# (payload_offset at 0x248, payload_length at 0x24c, relative to the
# protected-mode code at (setup_sects + 1) * 512).
read -r start length < <(python3 - "$out/vmlinuz" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
sects = d[0x1f1] or 4
print((sects + 1) * 512 + struct.unpack_from('<I', d, 0x248)[0], struct.unpack_from('<I', d, 0x24c)[0])
PY
)
magic=$(od -An -tx1 -N4 -j "$start" "$out/vmlinuz" | tr -d ' ')
extract() { tail -c +"$((start + 1))" "$out/vmlinuz" | head -c "$length"; }
case $magic in
	02214c18) extract | lz4 -dc >"$out/vmlinux" 2>/dev/null || true ;;
	fd377a58) extract | xz -dc >"$out/vmlinux" 2>/dev/null || true ;;
	28b52ffd) extract | zstd -dc >"$out/vmlinux" 2>/dev/null || true ;;
	1f8b*)    extract | gzip -dc >"$out/vmlinux" 2>/dev/null || true ;;
	*) echo "build-kernel: unknown payload compression (magic $magic)" >&2; exit 1 ;;
esac
if ! readelf -n "$out/vmlinux" 2>/dev/null | grep -q 'Xen.*0x00000012\|Unknown note type: (0x00000012)'; then
	echo "build-kernel: $out/vmlinux has no Xen PVH entry note" >&2
	exit 1
fi

# Modules and their dependencies: the package ships no modules.dep (the
# installer makes it with depmod), so read each module's own "depends="
# entry from its .modinfo section.
moddir=$work/root/lib/modules/$version
rm -rf "$out/modules"
mkdir -p "$out/modules"
python3 - "$moddir" "$out/modules" virtio_pci virtio_blk virtio_net virtio_balloon ext4 <<'PY'
import lzma, os, re, shutil, sys
moddir, dest, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
path, deps = {}, {}
for root, _, files in os.walk(os.path.join(moddir, 'kernel')):
    for f in files:
        if '.ko' not in f:
            continue
        name = f.split('.ko')[0].replace('-', '_')
        p = os.path.join(root, f)
        data = open(p, 'rb').read()
        if f.endswith('.xz'):
            data = lzma.decompress(data)
        path[name] = p
        m = re.search(rb'\0depends=([^\0]*)\0', data)
        deps[name] = [d.decode().replace('-', '_') for d in m.group(1).split(b',') if d] if m else []
order = []
def visit(name):
    if name in order or name not in path:
        return
    for d in deps[name]:
        visit(d)
    order.append(name)
builtin = set()
try:
    for line in open(os.path.join(moddir, 'modules.builtin')):
        builtin.add(os.path.basename(line.strip()).split('.ko')[0].replace('-', '_'))
except OSError:
    pass
for w in wanted:
    if w in path:
        visit(w)
    elif w not in builtin:
        sys.exit('build-kernel: module %s is neither in the package nor built in' % w)
with open(os.path.join(dest, 'order'), 'w') as f:
    for name in order:
        shutil.copy(path[name], os.path.join(dest, os.path.basename(path[name])))
        f.write(os.path.basename(path[name]) + '\n')
PY
# Compressed modules would need busybox insmod with decompression.
for m in "$out"/modules/*.ko.xz; do [ -e "$m" ] && xz -d "$m" && sed -i "s/$(basename "$m")/$(basename "${m%.xz}")/" "$out/modules/order"; done
echo "build-kernel: $version: $out/vmlinuz, $out/vmlinux, $(wc -l <"$out/modules/order") modules"
