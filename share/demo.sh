#!/bin/bash
# make demo: a Mini-OS domain and the dashboard, all under build/demo (no
# /etc or /run touched).  Quit the dashboard with q; the domain keeps
# running: `build/lodge --root build/demo destroy demo` ends it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
root=$build/demo
mkdir -p "$root/etc/lodge/domains"
cat >"$root/etc/lodge/domains/demo.cfg" <<CFG
# The demo guest: Lodge Mini-OS, two vCPUs.
name = "demo"
memory = 64
vcpus = 2
kernel = "$build/minios/minios.elf"
on_reboot = "restart"
CFG
if ! "$build/lodge" --root "$root" list -o tsv | grep -q '^demo'; then
	"$build/lodge" --root "$root" create demo
fi
exec "$build/lodge" --root "$root"
