/* A network's packet filter and NAT rules (netfilter.h), through
 * libnftables: text built from the table of rule templates below and
 * applied as one nftables transaction per add or delete.
 *
 * Every network has its own base chains in Lodge's own table, `table inet
 * lodge`: NAME_input, NAME_forward and (NAT) NAME_postrouting, each with
 * policy accept, so that our chains decide only about traffic of that
 * network's bridge and let everything else of the host pass on to the
 * host's own rules as if we were not there.  The rules follow libvirt's
 * (util/viriptables.c) in nftables words:
 *
 *   input        DHCP (udp 67) and DNS (udp and tcp 53) from the bridge
 *                to the host: accepted, every mode.
 *   forward      NAT and routed: the subnet's traffic out of the bridge;
 *                the bridge to itself (routed back out): accepted;
 *                NAT: only replies (ct established,related) in;
 *                routed: any traffic to the subnet in (it is reachable);
 *                anything else into or out of the bridge: dropped and
 *                counted (a forged source, new connections into a NAT
 *                subnet, every forward of an isolated network; IPv6 too:
 *                the networks are IPv4 only).
 *   postrouting  NAT: masquerade of the subnet leaving by any interface
 *                but its bridge, in libvirt's order: not to
 *                224.0.0.0/24 or 255.255.255.255, tcp and udp onto
 *                ports 1024-65535, then the rest.
 *
 * The host's own policy still holds.  nftables runs every base chain of
 * a hook, table after table, and a packet passes only if none drops it:
 * an `accept` in our chain ends our chain's verdict, not the hook's.  So
 * where another table (the host's firewall, iptables-nft's filter FORWARD
 * with policy DROP, Docker's) drops forwarded traffic, a NAT or routed
 * network's guests do not get out, and where it drops input they get no
 * DHCP or DNS, until the host's rules accept the bridge's traffic, e.g.
 * in its own nftables forward chain
 *     iifname "BR" accept
 *     oifname "BR" ct state established,related accept
 * (with iptables: -I FORWARD -i BR -j ACCEPT and -I FORWARD -o BR -m
 * conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT), and in its input
 * chain udp dport 67 and udp/tcp dport 53 from BR.  We never edit another
 * table to make room: nothing else on the host is touched (lodge.conf(5),
 * NETWORK SETTINGS, says so).  tests/integ/netfilter.sh shows a host
 * forward chain with policy drop winning over our accept.
 *
 * What a config holds reaches the rule text only through the name rules
 * of schema.h (network_name_valid, ifname_valid) and numbers we
 * print ourselves: no quote, space, brace or semicolon of a config can
 * end up as nft syntax. */
#include "netfilter-rules.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "schema.h"

#define IP_FORWARD "/proc/sys/net/ipv4/ip_forward"
/* Held while a transaction is built from the table's current chains and
 * run: without it, a delete that saw only its own chains could take the
 * table away with a network another lodge had just added. */
#define NETFILTER_LOCK "/run/lock/lodge-netfilter.lock"

enum nf_chain { NF_INPUT, NF_FORWARD, NF_POSTROUTING, NF_NCHAINS };

static const struct {
	const char *suffix;            /* NAME_suffix */
	const char *spec;              /* the base chain's hook */
} nf_chains[NF_NCHAINS] = {
	[NF_INPUT] = { "input", "type filter hook input priority filter; policy accept;" },
	[NF_FORWARD] = { "forward", "type filter hook forward priority filter; policy accept;" },
	[NF_POSTROUTING] = { "postrouting", "type nat hook postrouting priority srcnat; policy accept;" },
};

#define M_NAT      (1u << LODGE_NET_NAT)
#define M_ROUTED   (1u << LODGE_NET_ROUTED)
#define M_ISOLATED (1u << LODGE_NET_ISOLATED)
#define M_ALL      (M_NAT | M_ROUTED | M_ISOLATED)
#define NF_MODES   3

/* Every rule of every mode, in the order they go into their chains;
 * @B is the bridge, @S the subnet (10.77.0.0/24).  A mode's chain is
 * made only if one of its rules is for that mode. */
static const struct rule_tmpl {
	enum nf_chain chain;
	unsigned modes;
	const char *text;
} nf_rules[] = {
	{ NF_INPUT, M_ALL, "iifname \"@B\" udp dport 67 accept" },
	{ NF_INPUT, M_ALL, "iifname \"@B\" udp dport 53 accept" },
	{ NF_INPUT, M_ALL, "iifname \"@B\" tcp dport 53 accept" },

	/* The guests' traffic out first: every frame of it passes here, and
	 * each expression is an indirect call (tests/bench/nat.py). */
	{ NF_FORWARD, M_NAT | M_ROUTED, "iifname \"@B\" ip saddr @S accept" },
	{ NF_FORWARD, M_ALL, "iifname \"@B\" oifname \"@B\" accept" },
	{ NF_FORWARD, M_NAT, "oifname \"@B\" ip daddr @S ct state established,related accept" },
	{ NF_FORWARD, M_ROUTED, "oifname \"@B\" ip daddr @S accept" },
	{ NF_FORWARD, M_ALL, "iifname \"@B\" counter drop" },
	{ NF_FORWARD, M_ALL, "oifname \"@B\" counter drop" },

	{ NF_POSTROUTING, M_NAT, "ip saddr @S ip daddr 224.0.0.0/24 return" },
	{ NF_POSTROUTING, M_NAT, "ip saddr @S ip daddr 255.255.255.255 return" },
	{ NF_POSTROUTING, M_NAT,
	  "ip saddr @S ip daddr != @S oifname != \"@B\" meta l4proto tcp masquerade to :1024-65535" },
	{ NF_POSTROUTING, M_NAT,
	  "ip saddr @S ip daddr != @S oifname != \"@B\" meta l4proto udp masquerade to :1024-65535" },
	{ NF_POSTROUTING, M_NAT, "ip saddr @S ip daddr != @S oifname != \"@B\" masquerade" },
};
#define NF_NRULES (sizeof(nf_rules) / sizeof(nf_rules[0]))

/* ---- the text ------------------------------------------------------------------------------ */

/* A refused name as a message may show it: its first bytes, each one
 * that is not printable ASCII as '?' (it may hold a terminal's escapes). */
static const char *shown(const char *s, char out[NETWORK_NAME_MAX + 4])
{
	size_t i;

	for (i = 0; s && s[i] && i < NETWORK_NAME_MAX; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(out + i, s && s[i] ? "..." : "");
	return out;
}

static int check_name(const char *name, struct lodge_err *err)
{
	char buf[NETWORK_NAME_MAX + 4];

	if (!name || !network_name_valid(name))
		return lodge_fail(err, -EINVAL, "network name '%s' is not %s", shown(name, buf),
				  network_name_rule());
	return 0;
}

/* A template with @B and @S filled in, onto f. */
static void put_rule(FILE *f, const char *tmpl, const char *bridge, const char *subnet)
{
	const char *p;

	for (p = tmpl; *p; p++) {
		if (p[0] == '@' && p[1] == 'B') {
			fputs(bridge, f);
			p++;
		} else if (p[0] == '@' && p[1] == 'S') {
			fputs(subnet, f);
			p++;
		} else {
			fputc(*p, f);
		}
	}
	fputc('\n', f);
}

int netfilter_add_text(const struct netfilter_net *n, char **text, struct lodge_err *err)
{
	char subnet[INET_ADDRSTRLEN + 4], addr[INET_ADDRSTRLEN], buf[NETWORK_NAME_MAX + 4];
	unsigned mode_bit, c;
	uint32_t host_bits;
	size_t i, len;
	bool used;
	FILE *f;
	int rc;

	*text = NULL;
	if ((rc = check_name(n->name, err)))
		return rc;
	if (!n->bridge || !ifname_valid(n->bridge))
		return lodge_fail(err, -EINVAL, "network %s: bridge name '%s' is not %s", n->name,
				  shown(n->bridge, buf), ifname_rule());
	if ((unsigned)n->mode >= NF_MODES)
		return lodge_fail(err, -EINVAL, "network %s: no such mode (%d)", n->name, (int)n->mode);
	if (n->prefix < 1 || n->prefix > 30)
		return lodge_fail(err, -EINVAL, "network %s: prefix /%u is not 1 to 30", n->name, n->prefix);
	host_bits = ntohl(n->subnet.s_addr) & (UINT32_MAX >> n->prefix);
	inet_ntop(AF_INET, &n->subnet, addr, sizeof(addr));
	if (host_bits)
		return lodge_fail(err, -EINVAL, "network %s: %s/%u has host bits set", n->name, addr, n->prefix);
	snprintf(subnet, sizeof(subnet), "%s/%u", addr, n->prefix);

	mode_bit = 1u << n->mode;
	if (!(f = open_memstream(text, &len)))
		return lodge_fail(err, -errno, "network %s: %s", n->name, strerror(errno));
	fprintf(f, "add table inet %s\n", NETFILTER_TABLE);
	for (c = 0; c < NF_NCHAINS; c++) {
		/* add then flush: the chain is there and empty whether or
		 * not it was, so a second add replaces, never duplicates. */
		fprintf(f, "add chain inet %s %s_%s { %s }\n", NETFILTER_TABLE, n->name, nf_chains[c].suffix,
			nf_chains[c].spec);
		fprintf(f, "flush chain inet %s %s_%s\n", NETFILTER_TABLE, n->name, nf_chains[c].suffix);
		used = false;
		for (i = 0; i < NF_NRULES; i++) {
			if (nf_rules[i].chain != c || !(nf_rules[i].modes & mode_bit))
				continue;
			fprintf(f, "add rule inet %s %s_%s ", NETFILTER_TABLE, n->name, nf_chains[c].suffix);
			put_rule(f, nf_rules[i].text, n->bridge, subnet);
			used = true;
		}
		/* A chain this mode has no rule in (a NAT network made
		 * isolated) goes, rather than hooking packets for nothing. */
		if (!used)
			fprintf(f, "delete chain inet %s %s_%s\n", NETFILTER_TABLE, n->name, nf_chains[c].suffix);
	}
	if (fclose(f)) {
		free(*text);
		*text = NULL;
		return lodge_fail(err, -ENOMEM, "network %s: out of memory", n->name);
	}
	return 0;
}

/* Whether chain is one of network name's: NAME_suffix. */
static bool chain_of(const char *chain, const char *name)
{
	size_t len = strlen(name);
	unsigned c;

	if (strncmp(chain, name, len) || chain[len] != '_')
		return false;
	for (c = 0; c < NF_NCHAINS; c++)
		if (!strcmp(chain + len + 1, nf_chains[c].suffix))
			return true;
	return false;
}

int netfilter_del_text(const char *name, const char *const *chains, size_t nchains, char **text,
		       struct lodge_err *err)
{
	size_t i, ours = 0, len;
	FILE *f;
	int rc;

	*text = NULL;
	if ((rc = check_name(name, err)))
		return rc;
	for (i = 0; i < nchains; i++)
		ours += chain_of(chains[i], name);
	if (!ours)
		return 0;
	if (!(f = open_memstream(text, &len)))
		return lodge_fail(err, -errno, "network %s: %s", name, strerror(errno));
	if (ours == nchains) {
		/* The last network: the table goes with it, so the ruleset
		 * is again what it was before Lodge's first network. */
		fprintf(f, "delete table inet %s\n", NETFILTER_TABLE);
	} else {
		for (i = 0; i < nchains; i++)
			if (chain_of(chains[i], name))
				fprintf(f, "delete chain inet %s %s\n", NETFILTER_TABLE, chains[i]);
	}
	if (fclose(f)) {
		free(*text);
		*text = NULL;
		return lodge_fail(err, -ENOMEM, "network %s: out of memory", name);
	}
	return 0;
}

/* ---- running it through libnftables ----------------------------------------------------------- */

/* libnftables' own words, one line ("Could not process rule: Operation
 * not permitted"), into err with the errno they name. */
static int nft_failed(struct nft_ctx *ctx, const char *name, struct lodge_err *err)
{
	const char *buf = nft_ctx_get_error_buffer(ctx), *line, *e;
	size_t len, elen;
	int rc = -EIO, i;

	line = buf && *buf ? buf : "libnftables failed without a reason";
	if ((e = strstr(line, "Error: ")) && (size_t)(e - line) < strcspn(line, "\n"))
		line = e + strlen("Error: ");
	len = strcspn(line, "\n");
	/* The errno: the strerror() text that ends the line (libnftables
	 * writes strerror(errno) there; Linux's errnos end at 133). */
	for (i = 1; i < 134; i++) {
		e = strerror(i);
		elen = strlen(e);
		if (len >= elen && !strncmp(line + len - elen, e, elen) && (len == elen || line[len - elen - 1] == ' ')) {
			rc = -i;
			break;
		}
	}
	return lodge_fail(err, rc, "network %s's nftables rules: %.*s", name, (int)len, line);
}

/* Whether this process may change the ruleset (CAP_NET_ADMIN). */
static bool net_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, caps))
		return true;       /* let nftables say */
	return caps[CAP_TO_INDEX(CAP_NET_ADMIN)].effective & CAP_TO_MASK(CAP_NET_ADMIN);
}

/* A libnftables context whose output and errors are kept for us: 0, or
 * -errno with why. */
static int nft_open(struct nft_ctx **ctx, const char *name, struct lodge_err *err)
{
	/* libnftables itself prints "Operation not permitted (you must be
	 * root)" on stdout when it is refused (it would land in the middle
	 * of lodge -o json): refused here first, in our words. */
	if (!net_admin())
		return lodge_fail(err, -EPERM, "network %s's nftables rules: not permitted (root, CAP_NET_ADMIN)",
				  name);
	if (!(*ctx = nft_ctx_new(NFT_CTX_DEFAULT)))
		return lodge_fail(err, -ENOMEM, "network %s: cannot start libnftables", name);
	if (nft_ctx_buffer_output(*ctx) || nft_ctx_buffer_error(*ctx)) {
		nft_ctx_free(*ctx);
		return lodge_fail(err, -ENOMEM, "network %s: cannot start libnftables", name);
	}
	return 0;
}

static int nft_run(struct nft_ctx *ctx, const char *cmds, const char *name, struct lodge_err *err)
{
	return nft_run_cmd_from_buffer(ctx, cmds) ? nft_failed(ctx, name, err) : 0;
}

/* The chains of table inet lodge into *chains (each malloc'd): how many,
 * 0 when there is no such table, or -errno. */
static int list_chains(struct nft_ctx *ctx, const char *name, char ***chains, struct lodge_err *err)
{
	const char *out, *p;
	char **v = NULL, **nv, chain[NETWORK_NAME_MAX + 32];
	int n = 0, rc;

	*chains = NULL;
	if ((rc = nft_run(ctx, "list table inet " NETFILTER_TABLE, name, err)))
		return rc == -ENOENT ? 0 : rc;
	out = nft_ctx_get_output_buffer(ctx);
	for (p = out; p && *p; p += strcspn(p, "\n"), p += *p == '\n') {
		/* "\tchain NAME {" (not sscanf's "\t", which would skip a
		 * blank line and read the next line's chain twice). */
		if (strncmp(p, "\tchain ", 7) || sscanf(p + 7, "%63s", chain) != 1)
			continue;
		if (!(nv = realloc(v, (n + 1) * sizeof(*v))) || !(nv[n] = strdup(chain))) {
			v = nv ? nv : v;
			while (n > 0)
				free(v[--n]);
			free(v);
			return lodge_fail(err, -ENOMEM, "network %s: out of memory", name);
		}
		v = nv;
		n++;
	}
	*chains = v;
	return n;
}

static void free_chains(char **chains, int n)
{
	while (n > 0)
		free(chains[--n]);
	free(chains);
}

/* The lock of NETFILTER_LOCK: its fd; -1 where it cannot be opened (not
 * root: then nftables refuses the caller too, in its own words, which say
 * more than the lock's), or -errno. */
static int nf_lock(const char *name, struct lodge_err *err)
{
	int fd = open(NETFILTER_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			int rc = -errno;

			close(fd);
			return lodge_fail(err, rc, "network %s: %s: %s", name, NETFILTER_LOCK, strerror(-rc));
		}
	}
	return fd;
}

static void nf_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

int netfilter_net_add(const struct netfilter_net *n, struct lodge_err *err)
{
	struct nft_ctx *ctx;
	char *text;
	int rc, lock;

	if ((rc = netfilter_add_text(n, &text, err)))
		return rc;
	if ((lock = nf_lock(n->name, err)) < -1) {
		free(text);
		return lock;
	}
	if (!(rc = nft_open(&ctx, n->name, err))) {
		rc = nft_run(ctx, text, n->name, err);
		nft_ctx_free(ctx);
	}
	nf_unlock(lock);
	free(text);
	return rc;
}

int netfilter_net_del(const char *name, struct lodge_err *err)
{
	struct nft_ctx *ctx;
	char **chains, *text = NULL;
	int rc, n, lock;

	if ((rc = check_name(name, err)))
		return rc;
	if ((lock = nf_lock(name, err)) < -1)
		return lock;
	if ((rc = nft_open(&ctx, name, err))) {
		nf_unlock(lock);
		return rc;
	}
	if ((n = rc = list_chains(ctx, name, &chains, err)) >= 0) {
		rc = netfilter_del_text(name, (const char *const *)chains, (size_t)n, &text, err);
		if (!rc && text)
			rc = nft_run(ctx, text, name, err);
		free_chains(chains, n);
	}
	free(text);
	nft_ctx_free(ctx);
	nf_unlock(lock);
	return rc;
}

int netfilter_net_present(const char *name, struct lodge_err *err)
{
	char **chains, forward[NETWORK_NAME_MAX + 16];
	struct nft_ctx *ctx;
	int rc, n, i;

	if ((rc = check_name(name, err)))
		return rc;
	if ((rc = nft_open(&ctx, name, err)))
		return rc;
	n = rc = list_chains(ctx, name, &chains, err);
	if (n >= 0) {
		/* Every mode has its forward chain. */
		snprintf(forward, sizeof(forward), "%s_%s", name, nf_chains[NF_FORWARD].suffix);
		for (rc = 0, i = 0; i < n; i++)
			rc |= !strcmp(chains[i], forward);
		free_chains(chains, n);
	}
	nft_ctx_free(ctx);
	return rc;
}

int netfilter_ip_forward_on(struct lodge_err *err)
{
	char now = 0;
	int fd, rc;

	/* Per network namespace: this is the namespace lodge runs in. */
	if ((fd = open(IP_FORWARD, O_RDWR | O_CLOEXEC)) < 0)
		return lodge_fail(err, -errno, "%s: %s", IP_FORWARD, strerror(errno));
	if (read(fd, &now, 1) != 1) {
		rc = -errno;
		close(fd);
		return lodge_fail(err, rc ? rc : -EIO, "%s: %s", IP_FORWARD, strerror(rc ? -rc : EIO));
	}
	if (now == '1') {
		close(fd);
		return 0;
	}
	if (pwrite(fd, "1\n", 2, 0) != 2) {
		rc = -errno;
		close(fd);
		return lodge_fail(err, rc, "cannot turn IPv4 forwarding on (%s): %s", IP_FORWARD, strerror(-rc));
	}
	close(fd);
	return 1;
}
