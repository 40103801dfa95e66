#!/bin/bash
# Every fuzz harness (tests/fuzz) replays its corpus and every crash ever
# found (tests/fuzz/crashes/NAME/) as a regression test: each input must
# run to the end without tripping the harness's checks.
. "$(dirname "$0")/../lib.sh"

found=0
for src in "$TOP"/tests/fuzz/fuzz-*.c; do
	name=$(basename "$src" .c)
	bin=$BUILD/fuzz/replay-$name
	found=1
	if [ ! -x "$bin" ]; then
		fail "fuzz corpus: $name" "$bin not built (make check builds it)"
		continue
	fi
	dirs=()
	for d in "$TOP/tests/fuzz/corpus/$name" "$TOP/tests/fuzz/crashes/$name"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	if [ ${#dirs[@]} -eq 0 ]; then
		fail "fuzz corpus: $name" "no corpus in tests/fuzz/corpus/$name"
		continue
	fi
	if out=$("$bin" "${dirs[@]}" 2>&1); then
		pass "fuzz corpus: $name ($(tail -1 <<<"$out"))"
	else
		fail "fuzz corpus: $name" "$(grep -m1 'fuzz:' <<<"$out" || tail -1 <<<"$out")"
	fi
done
[ $found = 1 ] || fail "fuzz corpus" "no harnesses in tests/fuzz"
