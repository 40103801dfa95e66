/* The domain list's columns: what `lodge list [-l] [-o FORMAT]` shows and
 * what the web interface's GET /api/domains gives, one table for both. */
#ifndef LODGE_DOMAIN_LIST_H
#define LODGE_DOMAIN_LIST_H

#include "columns.h"
#include "lodge.h"

/* A row: a domain's status, or (st NULL) one whose lodge-hyp runs but
 * would not say how it is (too many clients, no permission, no answer):
 * listed all the same, state '?', so that a busy domain is never taken
 * for one that is gone. */
struct list_row {
	const struct lodge_status *st;
	const struct lodge_defined *def;   /* its config in domains_dir; NULL: none (or not asked) */
	const char *name;
	char gfree[24], job[24], addrs[LODGE_MAX_ADDRS * 48];
};

extern const struct out_col domain_list_cols[];
extern const size_t domain_list_ncols;
/* The same with each domain's autostart (lodge list --all, the web's
 * table): text before the addresses, tsv and JSON after them. */
extern const struct out_col domain_list_all_cols[];
extern const size_t domain_list_all_ncols;

/* The row of a domain's status (st must outlive it). */
void domain_list_row(struct list_row *r, const struct lodge_status *st);
/* The row of a defined domain that is not running: state off. */
void domain_list_row_defined(struct list_row *r, const struct lodge_defined *def);
/* The row of one that could not be asked. */
void domain_list_row_unasked(struct list_row *r, const struct lodge_unasked *u);

#endif
