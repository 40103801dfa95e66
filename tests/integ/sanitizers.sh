#!/bin/bash
# The guest-facing code under AddressSanitizer and UBSan, in every
# `make check`: a second tree ($BUILD-asan, as `make check SANITIZE=1`
# builds it) runs the unit tests, the fuzz corpora, a boot, virtio-blk,
# the hostile guest, save and restore, and live migration; any sanitizer
# report from any process, the detached lodge-hyps included, fails.  `make check SANITIZE=1` runs everything so.
. "$(dirname "$0")/../lib.sh"

if [ "${SANITIZE:-}" = 1 ]; then
	skip "sanitizers" "this whole run is already sanitized (make check SANITIZE=1)"
	exit 0
fi
ASAN=$BUILD-asan
units=$(cd "$TOP" && ls tests/unit/test-*.c | sed 's|tests/unit/\(.*\)\.c|'"$ASAN"'/tests/\1|')
fuzz=$(cd "$TOP" && ls tests/fuzz/fuzz-*.c | sed 's|tests/fuzz/\(.*\)\.c|'"$ASAN"'/fuzz/replay-\1|')
# The tree is named to make as `make check SANITIZE=1` names it (relative
# to the top), so both share one set of dependency files.
rel() { for f in "$@"; do echo "${f#"$TOP"/}"; done; }
# shellcheck disable=SC2046,SC2086 # lists of paths made here, no spaces
if ! make -s -C "$TOP" -j2 BUILD="$(rel "$ASAN")" SANITIZE=1 all $(rel $units $fuzz) >"$TMPDIR_TEST/build.log" 2>&1; then
	fail "sanitizers: build with ASan and UBSan" "$(grep -m1 -E 'error' "$TMPDIR_TEST/build.log" || tail -1 "$TMPDIR_TEST/build.log")"
	exit 0
fi
san=$ASAN/sanitizer
rm -rf "$san"
mkdir -p "$san"
export ASAN_OPTIONS="detect_leaks=0:log_path=$san/asan"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$san/ubsan"

for t in $units; do
	out=$("$t" 2>&1)
	rc=$?
	n=$(grep -c '^PASS: ' <<<"$out")
	if [ $rc -eq 0 ] && ! grep -q '^FAIL: ' <<<"$out"; then
		pass "ASan+UBSan: unit $(basename "$t") ($n checks)"
	else
		fail "ASan+UBSan: unit $(basename "$t")" "$(grep -m1 '^FAIL: ' <<<"$out" || tail -1 <<<"$out")"
	fi
done
for f in $fuzz; do
	name=${f##*/replay-}
	# shellcheck disable=SC2046 # none or one directory, no spaces
	if out=$("$f" "$TOP/tests/fuzz/corpus/$name" $(ls -d "$TOP/tests/fuzz/crashes/$name" 2>/dev/null) 2>&1); then
		pass "ASan+UBSan: fuzz corpus $name ($(tail -1 <<<"$out"))"
	else
		fail "ASan+UBSan: fuzz corpus $name" "$(grep -m1 -E 'fuzz:|ERROR' <<<"$out")"
	fi
done
for t in boot blk hostile save migrate; do
	out=$(BUILD=$ASAN MINIOS=$ASAN/minios/minios.elf HYP=$ASAN/lodge-hyp HOSTILE_SECONDS=15 bash "$TOP/tests/integ/$t.sh" 2>&1)
	p=$(grep -c '^PASS: ' <<<"$out")
	f=$(grep '^FAIL: ' <<<"$out")
	if [ -z "$f" ] && [ "$p" -gt 0 ]; then
		pass "ASan+UBSan: integ $t ($p checks)"
	elif [ -z "$f" ]; then
		skip "ASan+UBSan: integ $t" "$(grep -m1 '^SKIP: ' <<<"$out" | cut -d: -f3-)"
	else
		fail "ASan+UBSan: integ $t" "$(head -1 <<<"$f" | cut -c7-)"
	fi
done
reports=0
for r in "$san"/*; do
	[ -f "$r" ] || continue
	reports=$((reports + 1))
	fail "sanitizer report" "$(grep -m1 -E 'ERROR|runtime error' "$r" | cut -c1-200) (full report: $r)"
done
[ $reports -eq 0 ] && pass "no ASan or UBSan report from any process"
