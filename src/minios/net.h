/* What net.c offers the protocols beside it (dhcp.c). */
#ifndef MINIOS_NET_H
#define MINIOS_NET_H

#include <stdint.h>

static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
static inline void put_be16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static inline void put_be32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

/* net.c */
int net_is_up(void);
const uint8_t *net_mac(void);
/* The interface's address and mask (host byte order). */
void net_set_addr(uint32_t ip, uint32_t mask);
/* eth0's router, for destinations off its subnet (0: none). */
void net_set_gateway(uint32_t gw);
/* One IPv4/UDP datagram from src_ip (0.0.0.0 before a lease) to the
 * broadcast address, in a broadcast frame. 0, or -1 if the queue is full. */
int net_udp_broadcast(uint32_t src_ip, uint16_t sport, uint16_t dport, const uint8_t *payload, unsigned len);
/* One IPv4/UDP datagram to dst (through the router if it is off the
 * subnet): 0, or -1 if no MAC answers for it or the queue is full. */
int net_udp_send(uint32_t dst, uint16_t sport, uint16_t dport, const uint8_t *payload, unsigned len);
/* Poll the device for up to ms milliseconds until cond(arg) holds. */
int net_wait_ms(uint64_t ms, int (*cond)(void *), void *arg);
void print_ip(const char *prefix, uint32_t ip);

/* dhcp.c */
void dhcp_init(void);
/* A UDP datagram to port 68 arrived (payload only). */
void dhcp_input(const uint8_t *msg, unsigned len);
/* DISCOVER, OFFER, REQUEST, ACK; sets the address. 0 or -1. */
int dhcp_run(void);

/* dns.c */
#define DNS_CLIENT_PORT 49153
void dns_init(void);
/* A UDP datagram to DNS_CLIENT_PORT arrived from src (payload only). */
void dns_input(uint32_t src, const uint8_t *msg, unsigned len);
/* dhcp.c tells it the lease's DNS server (option 6; 0: none). */
void dns_set_server(uint32_t server);

#endif
