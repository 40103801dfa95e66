#!/bin/bash
# The pool as a library (src/pool/lodge-pool.h, issue 33): pool_domains(),
# the one call the command line, the dashboard and the web page make for
# the pool's domains, returns what etcd holds (a real cluster: the
# fixture's, under a prefix of this test's own).
. "$(dirname "$0")/../lib.sh"
integ_begin pool-faces root
CHECK=$BUILD/tests/pool/domains-check
[ -x "$CHECK" ] || { fail pool-faces "$CHECK not built (make all)"; exit 1; }

pool_etcd_up
"$CHECK" "$POOL_ETCD_URLS" "$(pool_prefix)" "$(pool_free_port)"
