/* What runs for a network: its bridge holding the gateway address
 * (netlink.c), its nftables rules (netfilter.c), and dnsmasq, Debian's
 * dnsmasq-base as libvirt runs it: one per network, serving that bridge
 * alone, with a config Lodge writes under the runtime directory and its
 * own pid and lease files.  dnsmasq detaches itself, so no process of
 * Lodge's stays up for it; whether it still runs is read from its pid
 * file and /proc each time anyone asks. */
#include "internal.h"
#include "netfilter.h"
#include "netlink.h"
#include "network.h"
#include "mkdirs.h"
#include "tool.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DNSMASQ_STOP_MS 3000       /* after SIGTERM, before SIGKILL */
#define HOSTS_MAX       1024       /* fixed addresses per network */
#define DNSMASQ_USER    "dnsmasq"  /* made by dnsmasq-base's install */
#define LEASE_S         3600       /* dnsmasq's lease time (its default, written out: ages come from it) */

/* ---- dnsmasq's process ---------------------------------------------------------- */

/* Whether pid is the dnsmasq of this config: the pid file may outlive
 * it, and its number be another process's by now. */
static bool is_our_dnsmasq(pid_t pid, const char *conf)
{
	char path[64], cmd[CFG_PATH_MAX + 128], want[CFG_PATH_MAX + 100];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return false;      /* a zombie has none */
	cmd[n] = '\0';
	snprintf(want, sizeof(want), "--conf-file=%s", conf);
	/* argv[0] then its one argument, NUL-separated. */
	return strstr(cmd, "dnsmasq") && n > (ssize_t)strlen(cmd) + 1 && !strcmp(cmd + strlen(cmd) + 1, want);
}

/* > 0: the pid of its running dnsmasq; 0: none was started; -1: its pid
 * file is there but it is gone (it died). */
static int dnsmasq_pid(const struct net_paths *p)
{
	char buf[32];
	ssize_t n;
	long pid;
	int fd = open(p->pid, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid > 1 && pid < (1L << 22) && is_our_dnsmasq((pid_t)pid, p->conf) ? (int)pid : -1;
}

static void dnsmasq_stop(const struct net_paths *p)
{
	int pid = dnsmasq_pid(p);
	long end = lodge_now_ms() + DNSMASQ_STOP_MS;
	struct timespec tick = { 0, 10 * 1000000 };

	if (pid > 0) {
		kill(pid, SIGTERM);
		while (is_our_dnsmasq(pid, p->conf) && lodge_now_ms() < end)
			nanosleep(&tick, NULL);
		if (is_our_dnsmasq(pid, p->conf))
			kill(pid, SIGKILL);
	}
	unlink(p->pid);
}

static int write_file(const char *path, const char *text, size_t len)
{
	char tmp[CFG_PATH_MAX + 100];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0)
		return -errno;
	/* dnsmasq rereads the hosts files as its own user. */
	if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0)
		rc = errno ? -errno : -EIO;
	close(fd);
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* dnsmasq's config: libvirt's for a network (wave2-facts 4), this
 * network's bridge alone, neither the host's /etc/hosts nor (unless
 * dns_forward) its resolv.conf. */
static int write_conf(const struct lodge_network *n, const struct net_paths *p, struct lodge_err *err)
{
	char text[4 * CFG_PATH_MAX + 1024], mask[16];
	int len, rc;

	/* Each value is one line of dnsmasq's file: the names and numbers
	 * are checked already, the paths (under --root) are checked here. */
	if (strpbrk(p->pid, "\n\r") || strpbrk(p->leases, "\n\r") || strpbrk(p->hosts, "\n\r") ||
	    strpbrk(p->addn, "\n\r") || strpbrk(n->file, "\n\r"))
		return lodge_fail(err, -EINVAL, "network %s: a path of its files holds a line break", n->name);
	net_ip4_text(~0u << (32 - n->prefix), mask);
	len = snprintf(text, sizeof(text),
		       "# Written by lodge for network %s at each start: edit %s instead.\n"
		       "strict-order\n"
		       "pid-file=%s\n"
		       "except-interface=lo\n"
		       "bind-dynamic\n"
		       "interface=%s\n"
		       "no-hosts\n"
		       "%s"
		       "dhcp-range=%s,%s,%s,%u\n"
		       "dhcp-no-override\n"
		       "dhcp-authoritative\n"
		       "dhcp-lease-max=%u\n"
		       "dhcp-leasefile=%s\n"
		       "dhcp-hostsfile=%s\n"
		       "addn-hosts=%s\n",
		       n->name, n->file, p->pid, n->bridge, n->dns_forward ? "" : "no-resolv\n", n->range_start,
		       n->range_end, mask, LEASE_S, n->range_hi - n->range_lo + 1, p->leases, p->hosts, p->addn);
	/* Its own user, as Debian's dnsmasq package runs it (dnsmasq-base's
	 * default is nobody, whom any other nobody process could signal). */
	if (getpwnam(DNSMASQ_USER))
		len += snprintf(text + len, sizeof(text) - (size_t)len, "user=" DNSMASQ_USER "\n");
	if (n->domain[0])
		len += snprintf(text + len, sizeof(text) - (size_t)len, "domain=%s\nlocal=/%s/\n", n->domain, n->domain);
	/* An isolated network has no way out to offer: no router. */
	if (n->mode == LODGE_NET_ISOLATED)
		len += snprintf(text + len, sizeof(text) - (size_t)len, "dhcp-option=3\n");
	if ((size_t)len >= sizeof(text))
		return lodge_fail(err, -ENAMETOOLONG, "network %s: dnsmasq's config does not fit", n->name);
	if ((rc = write_file(p->conf, text, (size_t)len)))
		return lodge_fail(err, rc, "cannot write %s: %s", p->conf, strerror(-rc));
	return 0;
}

static int dnsmasq_start(const struct lodge_network *n, const struct net_paths *p, struct lodge_err *err)
{
	char arg[CFG_PATH_MAX + 100], why[TOOL_LAST_MAX + 128];
	const char *argv[] = { "dnsmasq", arg, NULL };
	struct tool_run t = { .argv = argv };
	int rc;

	snprintf(arg, sizeof(arg), "--conf-file=%s", p->conf);
	unlink(p->pid);
	/* It forks and its first process exits once the daemon serves, or
	 * with its reason (a port taken, an option refused). */
	rc = tool_run(&t);
	if (rc == -ENOENT)
		return lodge_fail(err, rc, "network %s: dnsmasq is not installed (Debian's dnsmasq-base)", n->name);
	if (rc) {
		tool_describe(&t, rc, why, sizeof(why));
		return lodge_fail(err, rc < 0 ? rc : -EIO, "network %s: %s", n->name, why);
	}
	if (dnsmasq_pid(p) <= 0)
		return lodge_fail(err, -EIO, "network %s: dnsmasq started but wrote no pid file %s", n->name, p->pid);
	return 0;
}

/* ---- leases --------------------------------------------------------------------- */

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6], i;
	char end;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &end) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

/* dnsmasq's lease file: "EXPIRY MAC ADDR HOSTNAME CLIENTID" a line. */
static unsigned read_leases(const char *network, const char *path, struct lodge_lease *out, unsigned max)
{
	char line[512], mac[32], addr[64], host[128];
	long long expires;
	unsigned n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct lodge_lease l;
		struct in_addr a;

		memset(&l, 0, sizeof(l));
		if (sscanf(line, "%lld %31s %63s %127s", &expires, mac, addr, host) < 3 || parse_mac(mac, l.mac) ||
		    inet_pton(AF_INET, addr, &a) != 1)
			continue;      /* IPv6 leases ("duid") and what is not a lease */
		if (n < max) {
			snprintf(l.network, sizeof(l.network), "%s", network);
			snprintf(l.addr, sizeof(l.addr), "%.15s", addr);
			if (strcmp(host, "*") && net_dns_label_ok(host))
				snprintf(l.hostname, sizeof(l.hostname), "%.63s", host);
			l.expires = expires;
			out[n] = l;
		}
		n++;
	}
	fclose(f);
	return n;
}

unsigned lodge_network_leases(const struct lodge *lg, struct lodge_lease *out, unsigned max)
{
	static struct lodge_network nets[64];
	unsigned i, n = 0;
	int count = lodge_network_list(lg, nets, 64, NULL);
	struct net_paths p;

	for (i = 0; (int)i < count && i < 64; i++) {
		if (nets[i].dnsmasq_pid <= 0 || net_paths(lg, nets[i].name, &p))
			continue;
		n += read_leases(nets[i].name, p.leases, n < max ? out + n : NULL, n < max ? max - n : 0);
	}
	return n < max ? n : max;
}

void lodge_net_leases(const struct lodge *lg, struct lodge_net *n)
{
	static struct lodge_network nets[64];
	static struct lodge_lease leases[256];
	int count = lodge_network_list(lg, nets, 64, NULL), j;
	long long now = (long long)time(NULL);
	unsigned i, k, nl;
	struct net_paths p;

	for (j = 0; j < count && j < 64; j++) {
		if (nets[j].dnsmasq_pid <= 0 || net_paths(lg, nets[j].name, &p))
			continue;
		nl = read_leases(nets[j].name, p.leases, leases, 256);
		for (i = 0; i < n->nvifs; i++) {
			struct lodge_vif_net *v = &n->vifs[i];

			if (strcmp(v->vif.bridge, nets[j].bridge))
				continue;
			for (k = 0; k < nl && k < 256; k++) {
				struct lodge_addr *a;
				long long age;

				if (memcmp(leases[k].mac, v->vif.mac, 6) || v->naddrs >= LODGE_MAX_ADDRS)
					continue;
				a = &v->addrs[v->naddrs++].a;
				memset(a, 0, sizeof(*a));
				snprintf(a->addr, sizeof(a->addr), "%s", leases[k].addr);
				snprintf(a->how, sizeof(a->how), "lease");
				a->vif = i;
				age = leases[k].expires ? LEASE_S - (leases[k].expires - now) : 0;
				a->age_s = age > 0 ? (unsigned long)age : 0;
			}
		}
	}
}

/* ---- state ---------------------------------------------------------------------- */

struct port_find { const char *bridge; int ports; bool found; };

static void port_visit(const char *name, int ports, bool up, void *arg)
{
	struct port_find *f = arg;

	if (!strcmp(name, f->bridge)) {
		f->ports = ports;
		f->found = true;
	}
}

void net_state(const struct lodge *lg, struct lodge_network *n)
{
	struct port_find f = { n->bridge, 0, false };
	struct lodge_lease none[1];
	struct net_paths p;
	int pid, present;

	if (net_paths(lg, n->name, &p))
		return;
	lodge_bridge_list(port_visit, &f, NULL);
	n->bridge_up = f.found;
	n->ports = f.ports;
	pid = dnsmasq_pid(&p);
	n->dnsmasq_pid = pid > 0 ? pid : 0;
	n->dnsmasq_died = pid < 0;
	present = netfilter_net_present(n->name, NULL);
	n->rules = present < 0 ? -1 : present > 0;
	n->leases = pid > 0 ? read_leases(n->name, p.leases, none, 0) : 0;
}

/* ---- up and down ---------------------------------------------------------------- */

static int empty_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* N's paths in P and its state as it is now (net_state): where net_up and
 * net_down begin. */
static int net_look(const struct lodge *lg, struct lodge_network *n, struct net_paths *p, struct lodge_err *err)
{
	if (net_paths(lg, n->name, p))
		return lodge_fail(err, -ENAMETOOLONG, "network %s: its paths are too long", n->name);
	net_state(lg, n);
	return 0;
}

int net_up(const struct lodge *lg, struct lodge_network *n, struct lodge_err *err)
{
	struct netfilter_net nf = { n->name, n->bridge, { htonl(n->net) }, n->prefix, n->mode };
	bool made_bridge = false, made_rules = false, made_dnsmasq = false;
	char why[LODGE_ERR_MAX];
	struct net_paths p;
	int rc;

	if ((rc = net_look(lg, n, &p, err)))
		return rc;
	if ((rc = mkdirs(p.run_dir, DIR_MODE_PUBLIC, NULL, 0)) || (rc = mkdirs(p.state_dir, DIR_MODE_PUBLIC, NULL, 0)) ||
	    (rc = empty_file(p.hosts)) ||
	    (rc = empty_file(p.addn)))
		return lodge_fail(err, rc, "network %s: cannot make its files under %s and %s: %s", n->name, p.run_dir,
				  p.state_dir, strerror(-rc));
	if (!n->bridge_up) {
		/* The host may have gained a route into the subnet since it was made. */
		if ((rc = net_check_overlap(lg, n, true, err)))
			return rc;
		if ((rc = nl_bridge_create(n->bridge, why, sizeof(why))))
			return lodge_fail(err, rc, "network %s: %s", n->name, why);
		made_bridge = true;
	}
	if ((rc = nl_addr4_add(n->bridge, htonl(n->net + 1), n->prefix, why, sizeof(why)))) {
		lodge_fail(err, rc, "network %s: %s", n->name, why);
		goto undo;
	}
	made_rules = n->rules == 0;
	if ((rc = netfilter_net_add(&nf, err)))
		goto undo;
	if (n->dnsmasq_pid <= 0) {
		if ((rc = write_conf(n, &p, err)) || (rc = dnsmasq_start(n, &p, err)))
			goto undo;
		made_dnsmasq = true;
	}
	/* Last: the one change of the host's own that a failure would not
	 * take back. */
	if (n->mode != LODGE_NET_ISOLATED) {
		rc = netfilter_ip_forward_on(err);
		if (rc < 0)
			goto undo;
		if (rc > 0)
			lodge_warn(lg, "IPv4 forwarding turned on (net.ipv4.ip_forward = 1) for network %s", n->name);
	}
	net_state(lg, n);
	return 0;
undo:
	if (made_dnsmasq)
		dnsmasq_stop(&p);
	if (made_rules)
		netfilter_net_del(n->name, NULL);
	if (made_bridge)
		nl_bridge_delete(n->bridge, why, sizeof(why));
	return rc;
}

int net_down(const struct lodge *lg, struct lodge_network *n, struct lodge_err *err)
{
	char why[LODGE_ERR_MAX];
	struct net_paths p;
	int rc;

	if ((rc = net_look(lg, n, &p, err)))
		return rc;
	if (n->ports)
		return lodge_fail(err, -EBUSY, "network %s: %d vif%s on its bridge %s: destroy %s domains first",
				  n->name, n->ports, n->ports == 1 ? " is" : "s are", n->bridge,
				  n->ports == 1 ? "its" : "their");
	/* The rules first: a caller who may not change them (not root) is
	 * refused before anything is stopped. */
	if ((rc = netfilter_net_del(n->name, err)) < 0)
		return rc;
	dnsmasq_stop(&p);
	if (n->bridge_up && (rc = nl_bridge_delete(n->bridge, why, sizeof(why))) && rc != -ENODEV)
		return lodge_fail(err, rc, "network %s: %s", n->name, why);
	unlink(p.conf);
	unlink(p.leases);
	rmdir(p.run_dir);
	net_state(lg, n);
	return 0;
}

void net_remains_remove(const struct lodge *lg, const char *name)
{
	struct net_paths p;

	if (net_paths(lg, name, &p))
		return;
	dnsmasq_stop(&p);
	netfilter_net_del(name, NULL);
	unlink(p.conf);
	unlink(p.leases);
	rmdir(p.run_dir);
}

/* ---- fixed addresses ------------------------------------------------------------- */

struct host_entry {
	uint8_t mac[6];
	uint32_t ip;
	char name[64];
};

/* dnsmasq's dhcp-hostsfile as Lodge writes it: "MAC,ADDR[,NAME]" a line. */
static unsigned read_hosts(const char *path, struct host_entry *out, unsigned max)
{
	char line[256], *f[3], *s;
	unsigned n = 0, k;
	FILE *fp = fopen(path, "re");
	struct in_addr a;

	if (!fp)
		return 0;
	while (n < max && fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\r\n")] = '\0';
		for (k = 0, s = line; k < 3 && s; k++) {
			f[k] = s;
			if ((s = strchr(s, ',')))
				*s++ = '\0';
		}
		if (k < 2 || parse_mac(f[0], out[n].mac) || inet_pton(AF_INET, f[1], &a) != 1)
			continue;
		out[n].ip = ntohl(a.s_addr);
		snprintf(out[n].name, sizeof(out[n].name), "%s", k == 3 ? f[2] : "");
		n++;
	}
	fclose(fp);
	return n;
}

static int write_hosts(const struct lodge_network *n, const struct net_paths *p, const struct host_entry *h,
		       unsigned count)
{
	static char hosts[HOSTS_MAX * 128], addn[HOSTS_MAX * 200];
	size_t hl = 0, al = 0;
	char ip[16];
	unsigned i;
	int rc;

	for (i = 0; i < count; i++) {
		const uint8_t *m = h[i].mac;

		net_ip4_text(h[i].ip, ip);
		hl += (size_t)snprintf(hosts + hl, sizeof(hosts) - hl, "%02x:%02x:%02x:%02x:%02x:%02x,%s%s%s\n", m[0],
				       m[1], m[2], m[3], m[4], m[5], ip, h[i].name[0] ? "," : "", h[i].name);
		if (h[i].name[0] && n->domain[0])
			al += (size_t)snprintf(addn + al, sizeof(addn) - al, "%s %s.%s %s\n", ip, h[i].name, n->domain,
					       h[i].name);
		else if (h[i].name[0])
			al += (size_t)snprintf(addn + al, sizeof(addn) - al, "%s %s\n", ip, h[i].name);
	}
	if ((rc = write_file(p->hosts, hosts, hl)))
		return rc;
	return write_file(p->addn, addn, al);
}

int net_vif_attach(const struct lodge *lg, const char *network, const char *domain, const uint8_t mac[6],
		   char bridge[IFNAMSIZ], char addr[16], struct lodge_err *err)
{
	static struct host_entry hosts[HOSTS_MAX];
	static struct lodge_lease leases[HOSTS_MAX];
	struct lodge_network n;
	struct net_paths p;
	unsigned count, nleases, i, j;
	uint32_t ip = 0;
	int rc, lock;

	if ((rc = lodge_network_get(lg, network, &n, err)))
		return rc;
	if (!n.bridge_up || n.dnsmasq_pid <= 0)
		return lodge_fail(err, -ENETDOWN, "network %s is not running%s (lodge network-start %s)", network,
				  n.dnsmasq_died ? ": its dnsmasq died" : "", network);
	if (net_paths(lg, network, &p))
		return lodge_fail(err, -ENAMETOOLONG, "network %s: its paths are too long", network);
	if ((lock = open(p.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 || flock(lock, LOCK_EX) < 0) {
		rc = -errno;
		if (lock >= 0)
			close(lock);
		return lodge_fail(err, rc, "network %s: cannot lock %s: %s", network, p.lock, strerror(-rc));
	}
	count = read_hosts(p.hosts, hosts, HOSTS_MAX);
	for (i = 0; i < count && memcmp(hosts[i].mac, mac, 6); i++)
		;
	if (i < count && (hosts[i].ip < n.range_lo || hosts[i].ip > n.range_hi)) {
		/* The range changed since: it gets a new one. */
		hosts[i] = hosts[--count];
		i = count;
	}
	if (i == count) {
		nleases = read_leases(network, p.leases, leases, HOSTS_MAX);
		if (nleases > HOSTS_MAX)
			nleases = HOSTS_MAX;
		for (ip = n.range_lo; ip <= n.range_hi && ip; ip++) {
			struct in_addr a = { htonl(ip) };
			char text[16];
			bool used = false;

			inet_ntop(AF_INET, &a, text, sizeof(text));
			for (j = 0; j < count && !used; j++)
				used = hosts[j].ip == ip;
			for (j = 0; j < nleases && !used; j++)
				used = !strcmp(leases[j].addr, text) && memcmp(leases[j].mac, mac, 6);
			if (!used)
				break;
		}
		if (ip > n.range_hi || !ip || count == HOSTS_MAX) {
			close(lock);
			return lodge_fail(err, -ENOSPC, "network %s: no free address left in its range %s-%s", network,
					  n.range_start, n.range_end);
		}
		memcpy(hosts[count].mac, mac, 6);
		hosts[count].ip = ip;
		count++;
	}
	snprintf(hosts[i].name, sizeof(hosts[i].name), "%s", net_dns_label_ok(domain) ? domain : "");
	rc = write_hosts(&n, &p, hosts, count);
	close(lock);
	if (rc)
		return lodge_fail(err, rc, "network %s: cannot write %s: %s", network, p.hosts, strerror(-rc));
	/* dnsmasq rereads dhcp-hostsfile and addn-hosts on SIGHUP. */
	kill(n.dnsmasq_pid, SIGHUP);
	snprintf(bridge, IFNAMSIZ, "%s", n.bridge);
	net_ip4_text(hosts[i].ip, addr);
	return 0;
}
