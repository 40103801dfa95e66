/* The pool's domains' columns: what `lodge list --pool [-o FORMAT]` shows
 * and what the web interface's GET /api/pool gives, one table for both.
 * A row is a struct pool_domain_row (src/pool/lodge-pool.h). */
#ifndef LODGE_POOL_LIST_H
#define LODGE_POOL_LIST_H

#include "columns.h"
#include "lodge-pool.h"

extern const struct out_col pool_list_cols[];
extern const size_t pool_list_ncols;

#endif
