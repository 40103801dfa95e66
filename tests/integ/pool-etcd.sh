#!/bin/bash
# The pool's etcd client (src/pool/etcd.c, issue 24) against a live
# three-member cluster of Debian's etcd: kv, create-if-absent
# transactions, leases (keepalive, revoke, expiry), watch and reopening
# it where it stopped, a member that is down, no member at all.  Then on
# a cluster of its own: one member killed, the client goes on; two
# killed (no quorum), a write fails within its deadline.
. "$(dirname "$0")/../lib.sh"
integ_begin pool-etcd root
CHECK=$BUILD/tests/pool/etcd-check
[ -x "$CHECK" ] || { fail pool-etcd "$CHECK not built (make all)"; exit 1; }

pool_etcd_up
"$CHECK" "$POOL_ETCD_URLS" "$(pool_prefix)" "$(pool_free_port)"

pool_etcd_up own
pool_member_kill 1
"$CHECK" "$POOL_ETCD_URLS" "$(pool_prefix)" "$(pool_free_port)" | sed 's/^\(PASS\|FAIL\): etcd: /\1: etcd, one member of three killed: /'

pool_member_kill 2
if out=$(ETCDCTL_API=3 timeout 20 etcdctl --endpoints="$POOL_ETCD_URLS" --command-timeout=3s put /q x 2>&1); then
	fail "pool-etcd: no quorum" "a put was accepted with two members of three killed"
else
	pass "pool-etcd: no quorum: a put is refused ($(echo "$out" | grep '^Error' | cut -c1-80))"
fi
