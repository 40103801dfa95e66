/* What etcd.c lends etcd-watch.c: the gateway's JSON conventions. */
#ifndef LODGE_POOL_ETCD_INTERNAL_H
#define LODGE_POOL_ETCD_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>

#include "etcd.h"

/* An int64 the gateway writes as a string; 0 if absent. */
int64_t etcd_num(json_t *o, const char *name);
json_t *etcd_num_json(int64_t v);
/* {"key": key[, "range_end": past every key under it]} */
json_t *etcd_range_json(const char *key, bool prefix);
/* A kv object into kv (key and value malloc'd): 0 or -EPROTO. */
int etcd_kv_from_json(json_t *o, struct etcd_kv *kv);
unsigned etcd_nendpoints(const struct etcd *e);
/* A request's TLS files, protocol and auth header on curl (headers: the
 * list to free after the request, or NULL). */
void etcd_curl_setup(struct etcd *e, CURL *curl, struct curl_slist **headers);
const char *etcd_nth_endpoint(const struct etcd *e, unsigned i);

#endif
