/* The migrated guest's announcement (announce.h). */
#include "save/announce.h"
#include "save/state.h"
#include "backend/tap.h"
#include "domain.h"
#include "hotplug.h"
#include "log.h"
#include "netwatch/netwatch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ANNOUNCE_MAX_ADDRS 16          /* per vif */
#define VNET_HDR_LEN 12                /* every tap frame's virtio-net header (tap.c) */

#define ANNOUNCE_MAX_VIFS 8
_Static_assert(DOMAIN_VIFS_MAX <= ANNOUNCE_MAX_VIFS, "every vif is announced");

static struct {
	struct domain *dom;
	/* Loaded from the stream: each vif's IPv4 addresses. */
	struct in_addr addr[ANNOUNCE_MAX_VIFS][ANNOUNCE_MAX_ADDRS];
	unsigned naddr[ANNOUNCE_MAX_VIFS];
} an;

static int announce_save(void *obj, struct state_buf *b)
{
	const char *vifs[DOMAIN_VIFS_MAX];
	unsigned nvifs = hotplug_vif_names(an.dom, vifs, DOMAIN_VIFS_MAX);
	char buf[4096];

	netwatch_format_addrs(an.dom->netwatch, vifs, nvifs, buf, sizeof(buf));
	state_put_blob(b, buf, (uint32_t)strlen(buf));
	return 0;
}

/* "vifN_addrs ADDR,HOW,AGE ..." lines; only IPv4 is announced by ARP. */
static int announce_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	char buf[4097], *line, *save = NULL;
	uint32_t len = state_get_blob_max(in, buf, sizeof(buf) - 1);

	if (in->bad)
		return -EBADMSG;
	buf[len] = '\0';
	memset(an.naddr, 0, sizeof(an.naddr));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tok, *save2 = NULL;
		unsigned vif;

		if (sscanf(line, "vif%u_addrs", &vif) != 1 || vif >= ANNOUNCE_MAX_VIFS)
			continue;
		strtok_r(line, " ", &save2);
		while ((tok = strtok_r(NULL, " ", &save2))) {
			char *comma = strchr(tok, ',');
			struct in_addr a;

			if (comma)
				*comma = '\0';
			if (an.naddr[vif] < ANNOUNCE_MAX_ADDRS && inet_pton(AF_INET, tok, &a) == 1)
				an.addr[vif][an.naddr[vif]++] = a;
		}
	}
	return 0;
}

static const struct state_ops announce_ops = {
	.save = announce_save, .load = announce_load, .version = 1,
};

int announce_register(struct domain *dom)
{
	an.dom = dom;
	return state_register("announce", &announce_ops, NULL);
}

/* An ARP-shaped frame (RARP and ARP share the layout), padded to 60 bytes. */
static void send_frame(const struct tap *t, uint16_t ethertype, uint16_t op,
		       const uint8_t *spa, const uint8_t *tha, const uint8_t *tpa)
{
	uint8_t f[VNET_HDR_LEN + 60] = { 0 }, *e = f + VNET_HDR_LEN, *a = e + 14;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	memcpy(e, bcast, 6);
	memcpy(e + 6, t->mac, 6);
	e[12] = ethertype >> 8;
	e[13] = ethertype & 0xff;
	a[0] = 0; a[1] = 1;                 /* Ethernet */
	a[2] = 0x08; a[3] = 0x00;           /* IPv4 */
	a[4] = 6; a[5] = 4;
	a[6] = op >> 8; a[7] = op & 0xff;
	memcpy(a + 8, t->mac, 6);
	memcpy(a + 14, spa, 4);
	memcpy(a + 18, tha, 6);
	memcpy(a + 24, tpa, 4);
	if (write(t->fd, f, sizeof(f)) != (ssize_t)sizeof(f))
		log_debug("announce on %s: %m", t->name);
}

/* One round: on every vif a RARP "request reverse" (who has this MAC: any
 * bridge on the way learns the port it came in on) and a gratuitous ARP
 * for each of its addresses (sender and target address both the guest's). */
static void send_round(const struct tap *nics, unsigned nnics)
{
	static const uint8_t zero[6];
	unsigned i, k;

	for (i = 0; i < nnics; i++) {
		const struct tap *t = &nics[i];

		if (t->fd < 0)
			continue;
		send_frame(t, 0x8035, 3, zero, t->mac, zero);
		for (k = 0; k < an.naddr[i]; k++)
			send_frame(t, 0x0806, 1, (const uint8_t *)&an.addr[i][k], zero,
				   (const uint8_t *)&an.addr[i][k]);
	}
}

/* A frame can be lost (a switch port still learning, a bridge's new port
 * not yet forwarding), and a lost RARP leaves the network sending to the
 * old host until its forwarding entry ages out (300 s on Linux).  So the
 * announcement is repeated as QEMU repeats it (announce-rounds 5, the
 * first again after 50 ms, each later one 100 ms after the one before),
 * by a thread of its own on its own copies of the taps' descriptors: the
 * domain may end meanwhile and close its own. */
#define ANNOUNCE_ROUNDS   5
#define ANNOUNCE_FIRST_MS 50
#define ANNOUNCE_STEP_MS  100

static struct {
	struct tap nics[ANNOUNCE_MAX_VIFS];
	unsigned nnics;
} rounds;

static void *announce_rounds(void *arg)
{
	unsigned r, i, ms = ANNOUNCE_FIRST_MS;

	for (r = 1; r < ANNOUNCE_ROUNDS; r++, ms += ANNOUNCE_STEP_MS) {
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
		send_round(rounds.nics, rounds.nnics);
	}
	for (i = 0; i < rounds.nnics; i++)
		if (rounds.nics[i].fd >= 0)
			close(rounds.nics[i].fd);
	return NULL;
}

void announce_send(void)
{
	pthread_attr_t attr;
	pthread_t thread;
	unsigned i;

	send_round(an.dom->nics, an.dom->nnics);
	rounds.nnics = an.dom->nnics < ANNOUNCE_MAX_VIFS ? an.dom->nnics : ANNOUNCE_MAX_VIFS;
	for (i = 0; i < rounds.nnics; i++) {
		rounds.nics[i] = an.dom->nics[i];
		if (rounds.nics[i].fd >= 0)
			rounds.nics[i].fd = fcntl(an.dom->nics[i].fd, F_DUPFD_CLOEXEC, 0);
	}
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&thread, &attr, announce_rounds, NULL) == 0) {
			pthread_attr_destroy(&attr);
			return;
		}
		pthread_attr_destroy(&attr);
	}
	log_debug("announce: no thread for the later rounds; the first was sent");
	for (i = 0; i < rounds.nnics; i++)
		if (rounds.nics[i].fd >= 0)
			close(rounds.nics[i].fd);
}
