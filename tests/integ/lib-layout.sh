#!/bin/bash
# liblodge's shape, as README's Layout gives it: each public header of
# src/lib/include compiles alone (with src/common, nothing of the
# library's own folders); the faces are compiled against src/lib/include
# alone; and src/lib's folders are layers, each object file taking
# symbols (nm) only from its own folder or one listed before it, so no
# two folders tie each other in a circle.
. "$(dirname "$0")/../lib.sh"

integ_begin "lib-layout" cmd:nm cmd:cc
# Bottom first: the order README.md's Layout lists them in.
LAYERS="config client net trust domain migrate host install form"

cd "$TOP" || exit 1
bad=
for h in src/lib/include/*.h src/lib/include/lodge/*.h; do
	rel=${h#src/lib/include/}
	printf '#include "%s"\n' "$rel" |
		cc -std=gnu11 -D_GNU_SOURCE -Wall -Werror -fsyntax-only -Isrc/common -Isrc/lib/include -x c - \
			>"$T/cc.out" 2>&1 || bad="$bad $rel: $(grep -m1 error "$T/cc.out")"
done
if [ -z "$bad" ]; then
	pass "every public header compiles alone"
else
	fail "public headers" "$bad"
fi

# The faces' include path, as make prints it (-n: nothing is built).
flags=$(make -s -n -B BUILD="$BUILD" "$BUILD/src/agent/main.o" "$BUILD/src/tui/tui.o" "$BUILD/src/web/main.o" \
	"$BUILD/src/face/columns.o" "$BUILD/src/pool/agent.o" 2>/dev/null | grep -o -- '-Isrc/lib[^ ]*' | sort -u)
if [ "$flags" = "-Isrc/lib/include" ]; then
	pass "the faces see src/lib/include alone"
else
	fail "the faces' include path" "${flags//$'\n'/ }"
fi

# Which folder defines each global symbol, and which folder's file uses it.
objs=$(find "$BUILD/src/lib" -name '*.o' 2>/dev/null)
if [ -z "$objs" ]; then
	fail "layers" "no objects under $BUILD/src/lib: make all first"
	exit 0
fi
for o in $objs; do
	dir=${o#"$BUILD"/src/lib/}
	dir=${dir%%/*}
	nm -g "$o" | awk -v d="$dir" -v f="${o##*/}" '
		NF == 3 && $2 ~ /[TDBR]/ { print "def", $3, d, f }
		NF == 2 && $1 == "U" { print "use", $2, d, f }'
done >"$T/syms"
up=$(awk -v layers="$LAYERS" '
	BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
	$1 == "def" { where[$2] = $3; file[$2] = $4 }
	$1 == "use" { use[++u] = $0 }
	END {
		for (i = 1; i <= u; i++) {
			split(use[i], a, " ")
			s = a[2]; d = a[3]
			if (!(s in where) || where[s] == d) continue
			if (!(d in rank)) { print d "/ is no layer"; continue }
			if (!(where[s] in rank)) { print where[s] "/ is no layer"; continue }
			if (rank[where[s]] > rank[d])
				print d "/" a[4] " uses " s " of " where[s] "/" file[s]
		}
	}' "$T/syms" | sort -u)
if [ -z "$up" ]; then
	pass "src/lib's folders are layers: every arrow points down ($LAYERS)"
else
	fail "src/lib's layers" "$(echo "$up" | head -5 | tr '\n' ';')"
fi
