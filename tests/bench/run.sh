#!/bin/bash
# make bench: every benchmark, side by side with QEMU (lodge install: with
# debootstrap and xen-create-image's steps) in the same run.
# Results are printed and kept in build/bench/results.md for the README.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
mkdir -p "$BUILD/bench"
out=$BUILD/bench/results.md
{
	echo "## Boot (tests/bench/boot.py)"
	echo
	python3 "$TOP/tests/bench/boot.py" "$BUILD/lodge-hyp" "$BUILD/minios/minios.elf"
	echo
	echo "## virtio-blk (tests/bench/blk.py)"
	echo
	python3 "$TOP/tests/bench/blk.py" "$BUILD/lodge-hyp" "$BUILD/minios/minios.elf"
	echo
	echo "## virtio-net (tests/bench/net.py)"
	echo
	python3 "$TOP/tests/bench/net.py" "$BUILD/lodge-hyp" "$BUILD/minios/minios.elf"
	echo
	echo "## The VMM's own CPU per request and per frame (tests/bench/vmmcpu.py)"
	echo
	python3 "$TOP/tests/bench/vmmcpu.py" "$BUILD/lodge-hyp" "$BUILD/minios/minios.elf"
	echo
	echo "## NAT network against bridged (tests/bench/nat.py)"
	echo
	python3 "$TOP/tests/bench/nat.py" "$BUILD/tests/test-lib-netfilter"
	echo
	echo "## Networks with Mini-OS guests: create to address, NAT against bridged (tests/bench/network.py)"
	echo
	python3 "$TOP/tests/bench/network.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## Network watcher (tests/bench/netwatch.py)"
	echo
	python3 "$TOP/tests/bench/netwatch.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## Domain lifecycle (tests/bench/lifecycle.py)"
	echo
	python3 "$TOP/tests/bench/lifecycle.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## Scaling with domains: 1, 10, 50 and 100 (tests/bench/scale.py)"
	echo
	python3 "$TOP/tests/bench/scale.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## The VMM's own memory outside guest RAM (tests/bench/vmmmem.py)"
	echo
	python3 "$TOP/tests/bench/vmmmem.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## Density and ballooning (tests/bench/density.py)"
	echo
	python3 "$TOP/tests/bench/density.py" "$BUILD/lodge-hyp" "$BUILD/minios/minios.elf"
	echo
	echo "## Live migration, save and restore (tests/bench/migrate.py)"
	echo
	python3 "$TOP/tests/bench/migrate.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## Dashboard (tests/bench/tui.py)"
	echo
	python3 "$TOP/tests/bench/tui.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## A pool of hosts on etcd (tests/bench/pool.sh)"
	echo
	BUILD=$BUILD bash "$TOP/tests/bench/pool.sh"
	echo
	echo "## The pool under faults (tests/bench/pool-faults.py)"
	echo
	BUILD=$BUILD python3 "$TOP/tests/bench/pool-faults.py" 3
	echo
	echo "## Web interface (tests/bench/web.py)"
	echo
	/usr/bin/python3 "$TOP/tests/bench/web.py" "$BUILD/lodge" "$BUILD/minios/minios.elf"
	echo
	echo "## Debian install (tests/bench/install.py)"
	echo
	python3 "$TOP/tests/bench/install.py" "$BUILD/lodge"
} | tee "$out"
echo
echo "results: $out"
