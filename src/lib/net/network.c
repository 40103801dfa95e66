/* Networks behind the host (issue 21): the model.  A network is a file,
 * ROOT/etc/lodge/networks/NAME.cfg, read through the same key-table
 * machinery as a domain's (config.c; FILE:LINE: KEY: why), and what runs
 * for it (network-run.c): a bridge holding the gateway address, dnsmasq,
 * and its nftables rules (netfilter.c). */
#include "config-keys.h"
#include "internal.h"
#include "netlink.h"
#include "network.h"
#include "mkdirs.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const mode_names[LODGE_NET_MODES] = {
	[LODGE_NET_NAT] = "nat", [LODGE_NET_ROUTED] = "routed", [LODGE_NET_ISOLATED] = "isolated",
};

const char *lodge_net_mode_name(enum lodge_net_mode m)
{
	return (unsigned)m < LODGE_NET_MODES ? mode_names[m] : "?";
}

int lodge_net_mode_parse(const char *word, enum lodge_net_mode *m)
{
	unsigned i;

	for (i = 0; i < LODGE_NET_MODES; i++)
		if (!strcmp(word, mode_names[i])) {
			*m = (enum lodge_net_mode)i;
			return 0;
		}
	return -EINVAL;
}

bool lodge_network_name_ok(const char *name)
{
	return network_name_valid(name);
}

/* ---- addresses ---------------------------------------------------------------- */

/* "A.B.C.D" strictly (inet_pton: no shorthand, no leading zeros): host order. */
static int parse_ip4(const char *s, uint32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*ip = ntohl(a.s_addr);
	return 0;
}

void net_ip4_text(uint32_t ip, char out[16])
{
	struct in_addr a = { htonl(ip) };

	inet_ntop(AF_INET, &a, out, 16);
}

static uint32_t prefix_mask(unsigned prefix)
{
	return prefix ? ~(~0u >> prefix) : 0;
}

int net_parse_cidr(const char *s, uint32_t *net, unsigned *prefix, char *why, size_t whylen)
{
	char addr[20], *end, shown[16];
	const char *slash = strchr(s, '/');
	unsigned long p;

	if (!slash || (size_t)(slash - s) >= sizeof(addr) || !slash[1]) {
		snprintf(why, whylen, "'%.40s' is not a subnet (A.B.C.D/N, e.g. 10.77.0.0/24)", s);
		return -EINVAL;
	}
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	p = strtoul(slash + 1, &end, 10);
	if (parse_ip4(addr, net) || *end || slash[1] < '0' || slash[1] > '9' || (slash[1] == '0' && slash[2])) {
		snprintf(why, whylen, "'%.40s' is not a subnet (A.B.C.D/N, e.g. 10.77.0.0/24)", s);
		return -EINVAL;
	}
	if (p < NETWORK_PREFIX_MIN || p > NETWORK_PREFIX_MAX) {
		snprintf(why, whylen, "subnet %.40s: a prefix of /%d to /%d", s, NETWORK_PREFIX_MIN, NETWORK_PREFIX_MAX);
		return -ERANGE;
	}
	*prefix = (unsigned)p;
	if (*net & ~prefix_mask(*prefix)) {
		net_ip4_text(*net & prefix_mask(*prefix), shown);
		snprintf(why, whylen, "subnet %.40s has host bits set (the network is %s/%u)", s, shown, *prefix);
		return -EINVAL;
	}
	return 0;
}

int net_parse_range(const char *s, uint32_t net, unsigned prefix, uint32_t *lo, uint32_t *hi, char *why,
		    size_t whylen)
{
	char a[20], b[20];
	const char *dash = strchr(s, '-');
	uint32_t mask = prefix_mask(prefix), gw = net + 1, bcast = net | ~mask;

	if (!dash || (size_t)(dash - s) >= sizeof(a) || strlen(dash + 1) >= sizeof(b)) {
		snprintf(why, whylen, "'%.40s' is not an address range (A.B.C.D-A.B.C.D)", s);
		return -EINVAL;
	}
	memcpy(a, s, (size_t)(dash - s));
	a[dash - s] = '\0';
	strcpy(b, dash + 1);
	if (parse_ip4(a, lo) || parse_ip4(b, hi)) {
		snprintf(why, whylen, "'%.40s' is not an address range (A.B.C.D-A.B.C.D)", s);
		return -EINVAL;
	}
	if (*lo > *hi) {
		snprintf(why, whylen, "range %.40s ends before it starts", s);
		return -EINVAL;
	}
	/* Within the subnet's hosts, the gateway (its first) left out. */
	if ((*lo & mask) != net || (*hi & mask) != net || *lo <= gw || *hi >= bcast) {
		char first[16], last[16];

		net_ip4_text(gw + 1, first);
		net_ip4_text(bcast - 1, last);
		snprintf(why, whylen, "DHCP range %.40s is not within the subnet's hosts after the gateway (%s-%s)", s,
			 first, last);
		return -ERANGE;
	}
	return 0;
}

/* A DNS domain: dot-separated labels of a-z A-Z 0-9 -, each 1 to 63. */
static bool dns_domain_ok(const char *d)
{
	size_t label = 0;

	if (!*d || strlen(d) >= NETWORK_DOMAIN_MAX)
		return false;
	for (; *d; d++) {
		if (*d == '.') {
			if (!label || d[-1] == '-')
				return false;
			label = 0;
		} else if ((*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z') || (*d >= '0' && *d <= '9') ||
			   (*d == '-' && label)) {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label && d[-1] != '-';
}

bool net_dns_label_ok(const char *name)
{
	return !strchr(name, '.') && dns_domain_ok(name);
}

/* ---- the file: its key table ---------------------------------------------------- */

static int check_subnet(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	uint32_t net;
	unsigned prefix;

	return net_parse_cidr(v->s, &net, &prefix, why, whylen);
}

static int check_mode(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	enum lodge_net_mode m;

	if (lodge_net_mode_parse(v->s, &m)) {
		snprintf(why, whylen, "'%.32s' is not nat, routed or isolated", v->s);
		return -EINVAL;
	}
	return 0;
}

static int check_range_text(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;
	uint32_t lo, hi;
	int rc;

	/* Here its form; whether it is inside the subnet is checked with the
	 * subnet, after the parse. */
	if (!*s || !(rc = net_parse_range(s, 0, 0, &lo, &hi, why, whylen)) || rc == -ERANGE)
		return 0;
	return rc;
}

static int check_domain(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *d = v->s;

	if (*d && !dns_domain_ok(d)) {
		snprintf(why, whylen, "'%.64s' is not a DNS domain (labels of a-z 0-9 - joined by dots)", d);
		return -EINVAL;
	}
	return 0;
}

static int check_bridge(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *b = v->s;

	if (*b && ifname_check(b, why, whylen))
		return -EINVAL;
	return 0;
}

const struct cfg_key network_keys[] = {
	{ .name = "subnet", .type = KT_STR, .required = "a network needs its IPv4 subnet", .check = check_subnet,
	  .help = "its IPv4 subnet, A.B.C.D/N (/8 to /30); the first host is the gateway, on the bridge" },
	{ .name = "mode", .type = KT_STR, .def = "nat", .check = check_mode,
	  .help = "nat (masqueraded out of the host), routed (forwarded with the guests' own addresses) "
		  "or isolated (the host's DHCP and DNS only)" },
	{ .name = "dhcp_range", .type = KT_STR, .def = "", .check = check_range_text,
	  .help = "the addresses DHCP gives, A.B.C.D-A.B.C.D; empty: every host of the subnet after the gateway" },
	{ .name = "domain", .type = KT_STR, .def = "", .max = NETWORK_DOMAIN_MAX - 1, .check = check_domain,
	  .help = "DNS domain: a domain NAME on the network resolves as NAME.DOMAIN; empty: NAME alone" },
	{ .name = "bridge", .type = KT_STR, .def = "", .check = check_bridge,
	  .help = "its bridge; empty: " NETWORK_BRIDGE_PREFIX "NAME" },
	{ .name = "autostart", .type = KT_BOOL, .def = "false", .help = "lodge autostart starts it at boot" },
	{ .name = "dns_forward", .type = KT_BOOL, .def = "false",
	  .help = "names dnsmasq does not know are asked of the host's resolv.conf servers; "
		  "false: it answers for its own names only" },
	{ .name = NULL }
};

int net_paths(const struct lodge *lg, const char *name, struct net_paths *p)
{
	const char *root = cfg_root();
	int n = 0;

	n |= snprintf(p->cfg_dir, sizeof(p->cfg_dir), "%s/etc/lodge/networks", root) >= (int)sizeof(p->cfg_dir);
	n |= snprintf(p->cfg, sizeof(p->cfg), "%s/%s.cfg", p->cfg_dir, name) >= (int)sizeof(p->cfg);
	n |= snprintf(p->state_dir, sizeof(p->state_dir), "%s/var/lib/lodge/networks", root) >=
	     (int)sizeof(p->state_dir);
	n |= snprintf(p->hosts, sizeof(p->hosts), "%s/%s.hosts", p->state_dir, name) >= (int)sizeof(p->hosts);
	n |= snprintf(p->addn, sizeof(p->addn), "%s/%s.addnhosts", p->state_dir, name) >= (int)sizeof(p->addn);
	n |= snprintf(p->lock, sizeof(p->lock), "%s/%s.lock", p->state_dir, name) >= (int)sizeof(p->lock);
	n |= snprintf(p->run_dir, sizeof(p->run_dir), "%s/" NET_RUN_SUBDIR "/%s", lg->hc.runtime_dir, name) >=
	     (int)sizeof(p->run_dir);
	n |= snprintf(p->conf, sizeof(p->conf), "%s/dnsmasq.conf", p->run_dir) >= (int)sizeof(p->conf);
	n |= snprintf(p->pid, sizeof(p->pid), "%s/dnsmasq.pid", p->run_dir) >= (int)sizeof(p->pid);
	n |= snprintf(p->leases, sizeof(p->leases), "%s/dnsmasq.leases", p->run_dir) >= (int)sizeof(p->leases);
	return n ? -ENAMETOOLONG : 0;
}

/* Fill n's config part from its file. */
static int net_read(const struct lodge *lg, const char *name, struct lodge_network *n, struct lodge_err *err)
{
	static struct load_ctx ctx;        /* large: not on the stack */
	struct net_paths p;
	char msg[LODGE_ERR_MAX], why[256];
	uint32_t lo, hi;
	cfg_t *cfg;
	int rc;

	memset(n, 0, sizeof(*n));
	if (!lodge_network_name_ok(name))
		return lodge_fail(err, -EINVAL, "'%.64s' is not a network name (%s)", name, network_name_rule());
	if (net_paths(lg, name, &p))
		return lodge_fail(err, -ENAMETOOLONG, "network %s: its paths are too long", name);
	if (access(p.cfg, F_OK))
		return lodge_fail(err, -ENOENT, "no network named %s (%s)", name, p.cfg);
	if (!(cfg = cfg_load_file(&ctx, p.cfg, network_keys, msg, sizeof(msg))))
		return lodge_fail(err, -EINVAL, "%s", msg);
	snprintf(n->name, sizeof(n->name), "%s", name);
	snprintf(n->file, sizeof(n->file), "%.4000s", p.cfg);
	snprintf(n->subnet, sizeof(n->subnet), "%s", cfg_getstr(cfg, "subnet"));
	lodge_net_mode_parse(cfg_getstr(cfg, "mode"), &n->mode);
	snprintf(n->domain, sizeof(n->domain), "%s", cfg_getstr(cfg, "domain"));
	snprintf(n->bridge, sizeof(n->bridge), "%s", cfg_getstr(cfg, "bridge"));
	n->autostart = cfg_getbool(cfg, "autostart");
	n->dns_forward = cfg_getbool(cfg, "dns_forward");
	net_parse_cidr(n->subnet, &n->net, &n->prefix, why, sizeof(why));
	net_ip4_text(n->net + 1, n->gateway);
	rc = 0;
	if (cfg_getstr(cfg, "dhcp_range")[0]) {
		if ((rc = net_parse_range(cfg_getstr(cfg, "dhcp_range"), n->net, n->prefix, &lo, &hi, why, sizeof(why)))) {
			cfg_fail(&ctx, cfg_key_line(&ctx, "dhcp_range", 0), "dhcp_range", "%s", why);
			lodge_fail(err, rc, "%s", msg);
		}
	} else {
		lo = n->net + 2;
		hi = (n->net | ~prefix_mask(n->prefix)) - 1;
	}
	n->range_lo = lo;
	n->range_hi = hi;
	net_ip4_text(lo, n->range_start);
	net_ip4_text(hi, n->range_end);
	if (!rc && !n->bridge[0]) {
		if (strlen(NETWORK_BRIDGE_PREFIX) + strlen(name) >= IFNAMSIZ) {
			cfg_fail(&ctx, 1, "bridge", "the network's name is too long for its bridge "
				 NETWORK_BRIDGE_PREFIX "%s (%d characters at most): set bridge", name, IFNAMSIZ - 1);
			rc = lodge_fail(err, -ENAMETOOLONG, "%s", msg);
		}
		snprintf(n->bridge, sizeof(n->bridge), NETWORK_BRIDGE_PREFIX "%.*s",
			 (int)(IFNAMSIZ - 1 - strlen(NETWORK_BRIDGE_PREFIX)), name);
	}
	cfg_free(cfg);
	return rc;
}

int net_bridge_of(const char *name, char bridge[IFNAMSIZ])
{
	static const struct lodge nolg;   /* the file's path needs only the root */
	struct lodge_network n;
	int rc = net_read(&nolg, name, &n, NULL);

	if (!rc)
		memcpy(bridge, n.bridge, IFNAMSIZ);
	return rc;
}

int lodge_network_get(const struct lodge *lg, const char *name, struct lodge_network *out, struct lodge_err *err)
{
	int rc = net_read(lg, name, out, err);

	if (!rc)
		net_state(lg, out);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct lodge_network *)a)->name, ((const struct lodge_network *)b)->name);
}

/* Every network's name, the configs' order: calls fn for each; how many. */
static int net_each(const struct lodge *lg, int (*fn)(const char *name, void *arg), void *arg)
{
	struct net_paths p;
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (net_paths(lg, "x", &p) || !(d = opendir(p.cfg_dir)))
		return 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char name[NETWORK_NAME_MAX];

		if (len < 5 || len - 4 >= sizeof(name) || strcmp(de->d_name + len - 4, ".cfg"))
			continue;
		memcpy(name, de->d_name, len - 4);
		name[len - 4] = '\0';
		if (!lodge_network_name_ok(name))
			continue;
		n++;
		if (fn(name, arg))
			break;
	}
	closedir(d);
	return n;
}

struct list_ctx {
	const struct lodge *lg;
	struct lodge_network *out;
	unsigned max, n;
};

static int list_one(const char *name, void *arg)
{
	struct list_ctx *c = arg;
	struct lodge_network tmp;

	if (c->n < c->max) {
		/* A file that does not read is still listed: by name, mode "?". */
		if (net_read(c->lg, name, &c->out[c->n], NULL)) {
			memset(&tmp, 0, sizeof(tmp));
			snprintf(tmp.name, sizeof(tmp.name), "%s", name);
			tmp.mode = (enum lodge_net_mode)-1;
			c->out[c->n] = tmp;
		} else {
			net_state(c->lg, &c->out[c->n]);
		}
	}
	c->n++;
	return 0;
}

int lodge_network_list(const struct lodge *lg, struct lodge_network *out, unsigned max, struct lodge_err *err)
{
	struct list_ctx c = { lg, out, max, 0 };

	net_each(lg, list_one, &c);
	qsort(out, c.n < max ? c.n : max, sizeof(*out), by_name);
	return (int)c.n;
}

/* ---- create and delete -------------------------------------------------------- */

struct overlap_ctx {
	const struct lodge *lg;
	const char *self;
	uint32_t net;
	unsigned prefix;
	const char *bridge;
	char clash[NETWORK_NAME_MAX + 64];
};

static int overlap_one(const char *name, void *arg)
{
	struct overlap_ctx *o = arg;
	struct lodge_network n;
	uint32_t common;

	if (!strcmp(name, o->self) || net_read(o->lg, name, &n, NULL))
		return 0;
	common = prefix_mask(o->prefix < n.prefix ? o->prefix : n.prefix);
	if ((o->net & common) == (n.net & common))
		snprintf(o->clash, sizeof(o->clash), "overlaps network %s (%s)", name, n.subnet);
	else if (o->bridge && !strcmp(o->bridge, n.bridge))
		snprintf(o->clash, sizeof(o->clash), "bridge %s is network %s's", n.bridge, name);
	return o->clash[0] != 0;
}

int net_check_overlap(const struct lodge *lg, const struct lodge_network *n, bool with_routes, struct lodge_err *err)
{
	struct overlap_ctx o = { lg, n->name, n->net, n->prefix, n->bridge, "" };
	char what[128], why[256];
	int rc;

	net_each(lg, overlap_one, &o);
	if (o.clash[0])
		return lodge_fail(err, -EEXIST, "network %s: subnet %s %s", n->name, n->subnet, o.clash);
	if (!with_routes)
		return 0;
	rc = nl_route4_overlap(htonl(n->net), n->prefix, n->bridge, what, sizeof(what), why, sizeof(why));
	if (rc < 0)
		return lodge_fail(err, rc, "network %s: %s", n->name, why);
	if (rc > 0)
		return lodge_fail(err, -EEXIST, "network %s: subnet %s overlaps the host's route %s", n->name,
				  n->subnet, what);
	return 0;
}

/* The config as a file of the key table's syntax, made whole under a
 * temporary name and linked into place: never half-written, and never
 * over another's. */
static int write_config(const struct net_paths *p, const struct lodge_network_opts *o, const char *range,
			struct lodge_err *err)
{
	char tmp[sizeof(p->cfg) + 16];
	FILE *f;
	int rc, fd;

	if ((rc = mkdirs(p->cfg_dir, DIR_MODE_PUBLIC, NULL, 0)))
		return lodge_fail(err, rc, "cannot create %s: %s", p->cfg_dir, strerror(-rc));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", p->cfg);
	if ((fd = mkstemp(tmp)) < 0 || !(f = fdopen(fd, "w"))) {
		rc = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return lodge_fail(err, rc, "cannot write %s: %s", p->cfg, strerror(-rc));
	}
	fchmod(fd, 0644);
	fprintf(f, "# lodge network %s (lodge.conf(5), NETWORKS)\nsubnet = ", o->name);
	cfg_put_string(f, o->subnet);
	fprintf(f, "\nmode = \"%s\"\n", lodge_net_mode_name(o->mode));
	if (range) {
		fputs("dhcp_range = ", f);
		cfg_put_string(f, range);
		fputc('\n', f);
	}
	if (o->domain) {
		fputs("domain = ", f);
		cfg_put_string(f, o->domain);
		fputc('\n', f);
	}
	if (o->bridge) {
		fputs("bridge = ", f);
		cfg_put_string(f, o->bridge);
		fputc('\n', f);
	}
	fprintf(f, "autostart = %s\n", o->autostart ? "true" : "false");
	if (o->dns_forward)
		fputs("dns_forward = true\n", f);
	rc = fflush(f) || fsync(fd) ? -errno : 0;
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && link(tmp, p->cfg) < 0)
		rc = -errno;
	unlink(tmp);
	if (rc == -EEXIST)
		return lodge_fail(err, rc, "network %s exists already (%s)", o->name, p->cfg);
	return rc ? lodge_fail(err, rc, "cannot write %s: %s", p->cfg, strerror(-rc)) : 0;
}

int lodge_network_create(const struct lodge *lg, const struct lodge_network_opts *o, struct lodge_err *err)
{
	struct lodge_network n;
	struct net_paths p;
	char why[256], bridge[IFNAMSIZ + 32];
	uint32_t lo, hi;
	int rc;

	memset(&n, 0, sizeof(n));
	if (!o->name || !lodge_network_name_ok(o->name))
		return lodge_fail(err, -EINVAL, "'%.64s' is not a network name (%s)", o->name ? o->name : "",
				  network_name_rule());
	if (net_paths(lg, o->name, &p))
		return lodge_fail(err, -ENAMETOOLONG, "network %s: its paths are too long", o->name);
	if (!o->subnet)
		return lodge_fail(err, -EINVAL, "network %s: a subnet is needed (--subnet A.B.C.D/N)", o->name);
	if ((rc = net_parse_cidr(o->subnet, &n.net, &n.prefix, why, sizeof(why))))
		return lodge_fail(err, rc, "network %s: %s", o->name, why);
	if (o->dhcp_range && (rc = net_parse_range(o->dhcp_range, n.net, n.prefix, &lo, &hi, why, sizeof(why))))
		return lodge_fail(err, rc, "network %s: %s", o->name, why);
	if (o->domain && !dns_domain_ok(o->domain))
		return lodge_fail(err, -EINVAL, "network %s: '%.64s' is not a DNS domain (labels of a-z 0-9 - joined "
				  "by dots)", o->name, o->domain);
	if (o->bridge) {
		if ((rc = ifname_check(o->bridge, why, sizeof(why))))
			return lodge_fail(err, rc, "network %s: --bridge: %s", o->name, why);
		snprintf(bridge, sizeof(bridge), "%s", o->bridge);
	} else {
		snprintf(bridge, sizeof(bridge), NETWORK_BRIDGE_PREFIX "%s", o->name);
		if (strlen(bridge) >= IFNAMSIZ)
			return lodge_fail(err, -ENAMETOOLONG, "network %s: the name is too long for its bridge %s "
					  "(%d characters at most): a shorter name, or --bridge", o->name, bridge,
					  IFNAMSIZ - 1);
	}
	if (access(p.cfg, F_OK) == 0)
		return lodge_fail(err, -EEXIST, "network %s exists already (%s)", o->name, p.cfg);
	if (nl_link_exists(bridge))
		return lodge_fail(err, -EEXIST, "network %s: interface %s exists already", o->name, bridge);
	snprintf(n.name, sizeof(n.name), "%s", o->name);
	snprintf(n.subnet, sizeof(n.subnet), "%s", o->subnet);
	snprintf(n.bridge, sizeof(n.bridge), "%s", bridge);
	if ((rc = net_check_overlap(lg, &n, true, err)))
		return rc;
	if ((rc = write_config(&p, o, o->dhcp_range, err)))
		return rc;
	if ((rc = lodge_network_start(lg, o->name, err))) {
		/* Nothing half-made: what the start brought up went with its
		 * failure; the config and the runtime files go too. */
		net_remains_remove(lg, o->name);
		unlink(p.cfg);
		unlink(p.hosts);
		unlink(p.addn);
		unlink(p.lock);
		return rc;
	}
	return 0;
}

int lodge_network_delete(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	struct lodge_network n;
	struct net_paths p;
	int rc;

	if (!lodge_network_name_ok(name) || net_paths(lg, name, &p))
		return net_read(lg, name, &n, err);
	rc = net_read(lg, name, &n, err);
	if (rc == -ENOENT)
		return rc;
	if (!rc && (rc = net_down(lg, &n, err)))
		return rc;
	if (rc) {
		/* A file that does not read (edited by hand) names no bridge
		 * for sure: what its name finds goes, and the user hears of the
		 * bridge. */
		net_remains_remove(lg, name);
		lodge_warn(lg, "network %s: %s; its dnsmasq and rules are gone, its bridge (if any) is left", name,
			   err ? err->msg : "its file does not read");
	}
	if (unlink(p.cfg) < 0 && errno != ENOENT)
		return lodge_fail(err, -errno, "cannot remove %s: %s", p.cfg, strerror(errno));
	unlink(p.hosts);
	unlink(p.addn);
	unlink(p.lock);
	return 0;
}

int lodge_network_stop(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	struct lodge_network n;
	int rc;

	if ((rc = net_read(lg, name, &n, err)))
		return rc;
	return net_down(lg, &n, err);
}

int lodge_network_start(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	struct lodge_network n;
	int rc;

	if ((rc = net_read(lg, name, &n, err)))
		return rc;
	return net_up(lg, &n, err);
}

/* Where a default network may go, in order: libvirt's own first (a host
 * running libvirt's has its route, so the next is taken), then more of
 * the private ranges, each a /24 few LANs use. */
static const char *const default_subnets[] = {
	"192.168.122.0/24", "192.168.123.0/24", "192.168.124.0/24", "192.168.125.0/24",
	"10.122.0.0/24", "10.123.0.0/24", "172.30.122.0/24", "172.31.122.0/24",
};

static int default_subnet(const struct lodge *lg, char subnet[20], struct lodge_err *err)
{
	struct lodge_network n;
	char why[128];
	unsigned i;

	for (i = 0; i < sizeof(default_subnets) / sizeof(default_subnets[0]); i++) {
		memset(&n, 0, sizeof(n));
		snprintf(n.name, sizeof(n.name), "%s", LODGE_NETWORK_DEFAULT);
		snprintf(n.subnet, sizeof(n.subnet), "%s", default_subnets[i]);
		snprintf(n.bridge, sizeof(n.bridge), NETWORK_BRIDGE_PREFIX "%s", LODGE_NETWORK_DEFAULT);
		if (net_parse_cidr(n.subnet, &n.net, &n.prefix, why, sizeof(why)))
			continue;
		if (net_check_overlap(lg, &n, true, NULL) == 0) {
			snprintf(subnet, 20, "%s", n.subnet);
			return 0;
		}
	}
	return lodge_fail(err, -EADDRINUSE, "network %s: every subnet it may take (%s ... %s) overlaps a route of "
			  "this host or a network: lodge network-create %s --subnet A.B.C.0/24", LODGE_NETWORK_DEFAULT,
			  default_subnets[0], default_subnets[i - 1], LODGE_NETWORK_DEFAULT);
}

int lodge_network_default(const struct lodge *lg, bool dry_run, struct lodge_network_default *out,
			  struct lodge_err *err)
{
	struct lodge_network_opts o = { .name = LODGE_NETWORK_DEFAULT, .mode = LODGE_NET_NAT, .autostart = true,
					.dns_forward = true };
	struct lodge_network n;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = lodge_network_get(lg, LODGE_NETWORK_DEFAULT, &n, err);
	if (rc == 0) {
		snprintf(out->subnet, sizeof(out->subnet), "%s", n.subnet);
		out->started = !n.bridge_up || n.dnsmasq_pid <= 0;
		if (dry_run || !out->started)
			return 0;
		return lodge_network_start(lg, LODGE_NETWORK_DEFAULT, err);
	}
	if (rc != -ENOENT)
		return rc;
	if ((rc = default_subnet(lg, out->subnet, err)))
		return rc;
	out->created = true;
	if (dry_run)
		return 0;
	o.subnet = out->subnet;
	return lodge_network_create(lg, &o, err);
}

struct autostart_ctx {
	const struct lodge *lg;
	void (*fn)(const char *name, const struct lodge_err *err, void *arg);
	void *arg;
	int failed;
};

static int autostart_one(const char *name, void *arg)
{
	struct autostart_ctx *c = arg;
	struct lodge_network n;
	struct lodge_err err;

	if (net_read(c->lg, name, &n, &err)) {
		c->failed++;
		c->fn(name, &err, c->arg);
		return 0;
	}
	net_state(c->lg, &n);
	if (!n.autostart || (n.bridge_up && n.dnsmasq_pid > 0 && n.rules > 0))
		return 0;
	if (net_up(c->lg, &n, &err)) {
		c->failed++;
		c->fn(name, &err, c->arg);
	} else {
		c->fn(name, NULL, c->arg);
	}
	return 0;
}

int lodge_network_autostart(const struct lodge *lg,
			    void (*fn)(const char *name, const struct lodge_err *err, void *arg), void *arg)
{
	struct autostart_ctx c = { lg, fn, arg, 0 };

	net_each(lg, autostart_one, &c);
	return c.failed;
}
