/* The networks' columns: what `lodge network-list [-o FORMAT]` (without a
 * domain) shows and what the web interface's GET /api/networks gives, one
 * table for both.  A row is a struct lodge_network. */
#ifndef LODGE_NETWORK_LIST_H
#define LODGE_NETWORK_LIST_H

#include "columns.h"
#include "lodge.h"

extern const struct out_col network_list_cols[];
extern const size_t network_list_ncols;

#endif
