#!/bin/bash
# Static analysis at zero findings: shellcheck over tests/ and share/,
# cppcheck over src/.  What make install ships, checked as a packager would: every man page is
# clean under mandoc -T lint; `make install PREFIX=/usr` writes units that
# run /usr/sbin/lodge (not /usr/local), the example domain's kernel where it
# put it, the host's directories, a section 8 page for each program in sbin;
# and systemd-analyze verify finds nothing in any unit as installed.
. "$(dirname "$0")/../lib.sh"

integ_begin "lint"

# ---- man pages ------------------------------------------------------------------
if command -v mandoc >/dev/null; then
	for m in "$TOP"/man/*.[1-8]; do
		out=$(mandoc -T lint "$m" 2>&1)
		if [ -z "$out" ]; then
			pass "mandoc -T lint: ${m##*/} is clean"
		else
			fail "mandoc -T lint: ${m##*/}" "$(head -3 <<<"$out" | tr '\n' ' ')"
		fi
	done
else
	skip "mandoc -T lint" "mandoc not installed (make deps)"
fi

# ---- shellcheck over tests/ and share/ --------------------------------------------------
# At zero findings down to style notes (unquoted expansions, useless cats,
# $? tested after the fact...): .shellcheckrc at the top names the codes
# this codebase's style disables, and why; a line that means word splitting
# says so in its own `# shellcheck disable=` with the reason; any other
# finding fails here.
if command -v shellcheck >/dev/null; then
	out=$(cd "$TOP" && { find tests share -name '*.sh'; echo share/debian/init; } | sort |
		xargs -P2 -n8 shellcheck -S style -f gcc 2>&1)
	if [ -z "$out" ]; then
		pass "shellcheck -S style: tests/ and share/ are clean"
	else
		fail "shellcheck -S style: $(wc -l <<<"$out") findings" "$(head -5 <<<"$out" | tr '\n' ' ')"
	fi
else
	skip "shellcheck" "shellcheck not installed (make deps)"
fi

# ---- cppcheck over src/ -----------------------------------------------------------------
# At zero findings of warning, portability and error; tests/cppcheck.supp
# is the short list of suppressions, each with the reason it is one.
if command -v cppcheck >/dev/null; then
	# liblodge's public include/ and each of its folders, as the Makefile's LIB_PRIVATE.
	mapfile -t lib_dirs < <(cd "$TOP" && find src/lib -mindepth 1 -type d -not -path 'src/lib/include/*' -printf '-I%p\n' | sort)
	out=$(cd "$TOP" && cppcheck -q -j2 --std=c11 --enable=warning,portability --inline-suppr \
		--suppressions-list=tests/cppcheck.supp -D__GNUC__ -D_GNU_SOURCE -D__x86_64__ \
		-Isrc/common "${lib_dirs[@]}" -Isrc/hyp -Isrc/agent -Isrc/face -Isrc/pool -Isrc/tui -Isrc/web \
		--template='{file}:{line}: {severity}: {message} [{id}]' src/ 2>&1)
	if [ -z "$out" ]; then
		pass "cppcheck: src/ is clean"
	else
		fail "cppcheck: $(wc -l <<<"$out") findings" "$(head -5 <<<"$out" | tr '\n' ' ')"
	fi
else
	skip "cppcheck" "cppcheck not installed (make deps)"
fi

# ---- make install PREFIX=/usr ----------------------------------------------------------
D=$T/dest
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP" BUILD="$BUILD" install PREFIX=/usr DESTDIR="$D" \
	>"$T/install.log" 2>&1; then
	fail "make install PREFIX=/usr DESTDIR=..." "$(tail -3 "$T/install.log" | tr '\n' ' ')"
	exit 0
fi
units=("$D"/usr/lib/systemd/system/*.service)
if [ ! -f "${units[0]}" ]; then
	fail "make install installs the units" "none in $D/usr/lib/systemd/system"
	exit 0
fi
bad=$(grep -H -E '^Exec' "${units[@]}" | grep -v -E '^[^:]+:Exec[A-Za-z]+=[-@:+!]*/usr/sbin/lodge( |$)' | sed "s|$D/[^:]*/||")
if [ -z "$bad" ] && ! grep -q /usr/local "${units[@]}"; then
	pass "make install PREFIX=/usr: the units run /usr/sbin/lodge, nothing in /usr/local"
else
	fail "make install PREFIX=/usr: the units run /usr/sbin/lodge" \
		"$(tr '\n' ' ' <<<"$bad")/usr/local in: $(grep -l /usr/local "${units[@]}" | sed 's|.*/||' | tr '\n' ' ')"
fi
kernel=$(sed -n 's/^kernel = "\(.*\)"$/\1/p' "$D/etc/lodge/domains/minios.cfg")
if [ "$kernel" = /usr/share/lodge/minios.elf ] && [ -f "$D$kernel" ]; then
	pass "make install PREFIX=/usr: the example domain names the kernel it installed"
else
	fail "make install PREFIX=/usr: the example domain's kernel" "kernel = '$kernel'"
fi
missing=
for d in etc/lodge/domains var/lib/lodge/images var/lib/lodge/save var/lib/lodge/crash var/log/lodge; do
	[ -d "$D/$d" ] || missing+=" /$d"
done
if [ -z "$missing" ] && [ -f "$D/etc/lodge/lodge.conf" ]; then
	pass "make install makes the host's directories and installs lodge.conf"
else
	fail "make install makes the host's directories" "missing:$missing"
fi
missing=
for p in "$D"/usr/sbin/*; do
	[ -f "$D/usr/share/man/man8/${p##*/}.8" ] || missing+=" ${p##*/}"
done
if [ -z "$missing" ]; then
	pass "every program installed in sbin has its page in section 8"
else
	fail "every program in sbin has its page in section 8" "none for:$missing"
fi

# ---- systemd-analyze verify ---------------------------------------------------------------
# Each unit as installed, with its programs where the unit says they are:
# in a mount namespace of its own, the installed sbin over /usr/sbin (and
# the installed man pages for the units' Documentation=).
if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze verify" "systemd-analyze not installed"
	exit 0
fi
need_root "systemd-analyze verify (a mount namespace)" || exit 0
for u in "${units[@]}"; do
	out=$(unshare --mount --propagation private /bin/bash -c \
		'mount --bind "$1/usr/sbin" /usr/sbin && MANPATH=$1/usr/share/man exec systemd-analyze verify "$2"' \
		verify "$D" "$u" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then
		pass "systemd-analyze verify: ${u##*/} is clean"
	else
		fail "systemd-analyze verify: ${u##*/}" "status $rc: $(head -3 <<<"$out" | tr '\n' ' ')"
	fi
done
