#!/bin/bash
# Scripting output: -o json is one JSON document python3's json module
# reads (an array of objects for a list, one object for lodge info), with
# numbers as numbers, and it agrees with the text table a user reads;
# -o tsv -H gives a first line of the JSON keys, then the same rows.  Two
# Mini-OS domains, one with a disk and a vif on a bridge of a namespace
# of the test's own: list, list -l, info, vcpu-list, block-list,
# network-list, bridge-list and addr.
. "$(dirname "$0")/../lib.sh"

integ_begin "json output" kvm root minios cmd:python3
integ_netns
BR=jbr$$
BR=${BR:0:15}
MAC=02:4c:00:00:31:01
in_ns ip link set lo up
in_ns "$LODGE" bridge-create "$BR" >/dev/null && in_ns ip addr add 10.81.0.1/24 dev "$BR"
truncate -s 8M "$T/j1.img"
cat >"$DOMS/j1.cfg" <<CFG
name = "j1"
memory = 48
kernel = "$MINIOS"
extra = "ip=10.81.0.2/24"
disk = [ "$T/j1.img,raw,xvda,rw" ]
vif = [ "bridge=$BR,mac=$MAC" ]
CFG
printf 'name = "j2"\nmemory = 96\nvcpus = 2\nkernel = "%s"\n' "$MINIOS" >"$DOMS/j2.cfg"
for d in j1 j2; do
	if ! lodge create $d >"$T/create-$d" 2>&1; then
		fail "json output" "create $d: $(tail -2 "$T/create-$d")"
		exit 0
	fi
done
wait_for "$RUN/j1/console.log" 'minios> ' 30

# py FILE SCRIPT [ARG...]: SCRIPT with doc = the JSON in FILE (sys.argv[2:]: ARG...).
py() { local f=$1 s=$2; shift 2; python3 -c "import json, sys; doc = json.load(open(sys.argv[1])); $s" "$f" "$@"; }

lodge list >"$T/list.txt"
if lodge list -o json >"$T/list.json" &&
   py "$T/list.json" 'assert isinstance(doc, list) and all(isinstance(d["id"], int) and isinstance(d["memory_mib"], int) and isinstance(d["cpu_s"], float) for d in doc)' &&
   [ "$(py "$T/list.json" 'print("\n".join("%s %d %d %d" % (d["name"], d["id"], d["memory_mib"], d["vcpus"]) for d in doc))')" = \
     "$(awk 'NR > 1 { print $1, $2, $3, $4 }' "$T/list.txt")" ]; then
	pass "list -o json: names, IDs, memory and vCPUs as numbers, the same as lodge list shows"
else
	fail "list -o json" "$(cat "$T/list.json" "$T/list.txt" | tr '\n' ' ')"
fi
if py "$T/list.json" 'j2 = [d for d in doc if d["name"] == "j2"][0]; assert j2["memory_mib"] == 96 and j2["vcpus"] == 2 and j2["state"] == "running"'; then
	pass "list -o json: j2's memory_mib 96, vcpus 2, state running"
else
	fail "list -o json j2" "$(tr '\n' ' ' <"$T/list.json")"
fi
one() { lodge list -o json "$@" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(len(d), d[0]["name"])'; }
if [ "$(one j2)" = "1 j2" ]; then
	pass "list -o json j2: an array of that one domain"
else
	fail "list -o json j2" "$(one j2 2>&1)"
fi

pid_of() { lodge list -o tsv | awk -F'\t' -v n="$1" '$1 == n { print $9 }'; }
if lodge list -l -o json >"$T/long.json" &&
   py "$T/long.json" 'j1 = [d for d in doc if d["name"] == "j1"][0]; assert j1["rss_kib"] > 0 and j1["maxmem_mib"] == 48 and isinstance(j1["addresses"], list)' &&
   [ "$(py "$T/long.json" 'print([d for d in doc if d["name"] == "j1"][0]["pid"])')" = "$(pid_of j1)" ]; then
	pass "list -l -o json: RSS in KiB, maxmem, the pid lodge list -o tsv gives, addresses as an array"
else
	fail "list -l -o json" "$(tr '\n' ' ' <"$T/long.json")"
fi

# tsv with a header: the keys first, then the rows JSON has, field by field.
lodge list -o tsv -H >"$T/list.tsv"
if [ "$(head -1 "$T/list.tsv")" = "$(py "$T/long.json" 'print("\t".join(doc[0].keys()))')" ] &&
   python3 - "$T/list.tsv" "$T/long.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
doc = json.load(open(sys.argv[2]))
assert [r["name"] for r in rows] == [d["name"] for d in doc], (rows, doc)
for r, d in zip(rows, doc):
    for k in ("id", "memory_mib", "vcpus", "maxmem_mib", "pid"):
        assert int(r[k]) == d[k], (k, r, d)
PY
then
	pass "list -o tsv -H: a header of the JSON keys, then rows that agree with -o json"
else
	fail "list -o tsv -H" "$(tr '\n\t' '| ' <"$T/list.tsv")"
fi
if [ "$(lodge list -o tsv | head -1 | cut -f1)" = Domain-0 ]; then
	pass "list -o tsv without -H: no header, Domain-0 first as before"
else
	fail "list -o tsv without -H" "$(lodge list -o tsv | head -1)"
fi
out=$(lodge list -H 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- '--header goes with -o tsv' <<<"$out"; then
	pass "-H without -o tsv is refused: $out"
else
	fail "-H without tsv" "rc $rc: $out"
fi
out=$(lodge list -o yaml 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "is not one of: text tsv json" <<<"$out"; then
	pass "-o yaml is refused, naming the formats"
else
	fail "-o yaml" "rc $rc: $out"
fi

if lodge info -o json >"$T/info.json" &&
   py "$T/info.json" 'assert isinstance(doc, dict) and doc["domains"] == 2 and doc["nr_cpus"] >= 1 and doc["total_memory_mib"] > 0 and doc["domain_memory_assigned_mib"] == 144' &&
   [ "$(lodge info -o tsv -H | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "domains") c = i } NR == 2 { print $c }')" = 2 ]; then
	pass "info -o json: one object, 2 domains holding 144 MiB; -o tsv -H agrees"
else
	fail "info -o json" "$(tr '\n' ' ' <"$T/info.json")"
fi

if lodge vcpu-list -o json >"$T/vcpu.json" &&
   py "$T/vcpu.json" 'v = [d for d in doc if d["name"] == "j2"]; assert [d["vcpu"] for d in v] == [0, 1] and all(isinstance(d["time_s"], float) for d in v)' &&
   [ "$(lodge vcpu-list -o tsv -H j2 | head -1 | cut -f1-4)" = "$(printf 'name\tid\tvcpu\tcpu')" ]; then
	pass "vcpu-list -o json: j2's two vCPUs; tsv -H names the columns"
else
	fail "vcpu-list -o json" "$(tr '\n' ' ' <"$T/vcpu.json")"
fi

if lodge block-list -o json j1 >"$T/blk.json" &&
   py "$T/blk.json" 'assert len(doc) == 1 and doc[0]["vdev"] == "xvda" and doc[0]["mode"] == "rw" and doc[0]["backend"] == sys.argv[2] and isinstance(doc[0]["rd_bytes"], int)' "$T/j1.img"; then
	pass "block-list -o json: the disk, its mode, its backing file, counters as numbers"
else
	fail "block-list -o json" "$(tr '\n' ' ' <"$T/blk.json")"
fi
if lodge network-list -o json j1 >"$T/net.json" &&
   py "$T/net.json" 'assert len(doc) == 1 and doc[0]["mac"] == sys.argv[2] and doc[0]["bridge"] == sys.argv[3] and doc[0]["idx"] == 0' "$MAC" "$BR"; then
	pass "network-list -o json: the vif's MAC and bridge"
else
	fail "network-list -o json" "$(tr '\n' ' ' <"$T/net.json")"
fi
if lodge bridge-list -o json >"$T/br.json" &&
   py "$T/br.json" 'b = [d for d in doc if d["bridge"] == sys.argv[2]]; assert len(b) == 1 and b[0]["ports"] >= 1 and b[0]["state"] in ("up", "down")' "$BR"; then
	pass "bridge-list -o json: the test's bridge with its vif's port"
else
	fail "bridge-list -o json" "$(tr '\n' ' ' <"$T/br.json")"
fi

# addr: the guest's address once it answered a ping.
addr_json() {
	lodge addr -o json j1 >"$T/addr.json" 2>/dev/null &&
	py "$T/addr.json" 'assert any(d["address"] == "10.81.0.2" and d["from"] == "arp" and isinstance(d["age_s"], int) and d["claimed_by"] == [] for d in doc)' 2>/dev/null
}
in_ns ping -c 1 -W 3 10.81.0.2 >/dev/null
if wait_until 10 addr_json; then
	pass "addr -o json: the address the guest claimed, learned from ARP, with its age"
else
	fail "addr -o json" "$(tr '\n' ' ' <"$T/addr.json"); $(lodge addr j1 2>&1 | tr '\n' '|')"
fi
out=$(lodge addr -t -o json j1 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- '--traffic is text only' <<<"$out"; then
	pass "addr -t -o json is refused in one line"
else
	fail "addr -t -o json" "rc $rc: $out"
fi
