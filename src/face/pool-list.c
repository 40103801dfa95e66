/* The pool's domains' columns (pool-list.h), moved here from the lodge
 * command's list --pool so the web interface gives the same JSON. */
#include "pool-list.h"

OUT_GETTER(get_name, struct pool_domain_row, out_str(v, r->name))
OUT_GETTER(get_host, struct pool_domain_row, r->host[0] ? out_str(v, r->host) : out_null(v))
OUT_GETTER(get_state, struct pool_domain_row, out_str(v, domain_state_name(r->state)))
OUT_GETTER(get_memory, struct pool_domain_row, out_uint(v, r->memory_mib))
OUT_GETTER(get_ha, struct pool_domain_row, out_uint(v, r->ha))
OUT_GETTER(get_note, struct pool_domain_row, r->note[0] ? out_str(v, r->note) : out_null(v))

const struct out_col pool_list_cols[] = {
	{ "Name", "name", -24, 0, 0, get_name, NULL },
	{ "Host", "host", -16, 0, 0, get_host, NULL },
	{ "State", "state", -9, 0, 0, get_state, NULL },
	{ "Mem(MiB)", "memory_mib", 8, 0, 0, get_memory, NULL },
	{ "HA", "ha", 3, 0, 0, get_ha, NULL },
	{ "Why", "why", 0, 0, 0, get_note, NULL },
};
const size_t pool_list_ncols = sizeof(pool_list_cols) / sizeof(pool_list_cols[0]);
