/* flood/crowd/dns.h: the crowd's name server (--dns ADDR:PORT), for targets that take no
 * proxy: Docker's `dns:`, systemd-resolved's per-domain routing or a network namespace's
 * resolv.conf send the crowd's names here.
 *
 * The zone is the crowd and nothing else: a query for a crowd name gets A or AAAA with the
 * crowd's address (or, with --source-ips, instance i's own address A+i-1), NOERROR with no
 * data (NODATA) for any other type of a crowd name, and REFUSED for every other name. It
 * never forwards (no network in a lab, and routing other names is the target's resolver's
 * job). UDP and TCP (RFC 1035 4.2.2: each message after a two-byte length).
 *
 * The wire format is ldns's (NLnet Labs, Debian libldns-dev): ldns_wire2pkt parses a query,
 * ldns_pkt2wire writes the answer. A packet ldns refuses, a response (QR set), a TCP
 * length under a header or a message with two TSIG records (ldns would lose the first's
 * memory: ldns issue 317) is dropped and counted (malformed); a query with another opcode
 * gets NOTIMP, one without exactly one question FORMERR. */
#ifndef FLOOD_DNS_H
#define FLOOD_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sign/err.h"
#include "webfinger/wf.h"

#define DNS_TTL     60   /* seconds the answers may be cached */
#define DNS_MSG_MAX 4096 /* the largest answer written (a query's EDNS size is capped here) */

/* What the zone answers: the crowd's names and the address(es) they resolve to. */
struct dns_zone {
    const struct wf_crowd *wf; /* borrowed: the crowd's names */
    int family;                /* AF_INET or AF_INET6: which of A/AAAA carries addr */
    uint8_t addr[16];          /* the crowd's address (4 or 16 bytes, network order) */
    uint32_t src_base;         /* --source-ips: instance i's A is src_base + (i-1) % src_count */
    uint32_t src_count;        /* 0: every instance has addr (host order base) */
};

/* The outcome of one message, the counters' index. */
enum dns_result {
    DNS_ADDRESS = 0, /* a crowd name's A or AAAA answered */
    DNS_NODATA,      /* a crowd name, a type without data (AAAA of an IPv4 crowd, MX, ANY...) */
    DNS_REFUSED,     /* not a crowd name, or a class other than IN */
    DNS_NOTIMP,      /* an opcode other than QUERY */
    DNS_FORMERR,     /* not exactly one question */
    DNS_MALFORMED,   /* dropped: not a DNS query */
    DNS__RESULTS
};

/* "address", "nodata", "refused", "notimp", "formerr", "malformed". */
const char *dns_result_name(enum dns_result r);

/* The answer to the query msg[len] into out[out_max] (*out_len its length), with max_udp
 * the size the answer may take (512, or the query's EDNS size, for UDP; 65535 for TCP):
 * an answer that does not fit goes with TC set and no records. Pure: no I/O.
 * Returns the outcome; DNS_MALFORMED means nothing to send (*out_len 0). */
enum dns_result dns_answer(const struct dns_zone *z, const uint8_t *msg, size_t len, int tcp,
                           uint8_t *out, size_t out_max, size_t *out_len);

/* The server's counters: queries by transport and by outcome. */
struct dns_stats {
    unsigned long long udp, tcp; /* messages received */
    unsigned long long by_result[DNS__RESULTS];
    unsigned long long tcp_refused; /* TCP connections closed at once: DNS_TCP_MAX open */
};

struct dns;

/* Fill z->family and z->addr from the crowd's bound address: that address, or when the
 * crowd listens on every address (0.0.0.0, ::) the name server's own listen address
 * (dns_listen "ADDR:PORT"). -1 and err when both are wildcards (no address to give). */
int dns_zone_address(struct dns_zone *z, const struct sockaddr_storage *crowd,
                     const char *dns_listen, struct flood_err *err) FLOOD_WUR;

/* Listen on listen ("ADDR:PORT", port 0 picks one: the same port for UDP and TCP) and
 * answer z in a thread of its own. z is copied (z->wf stays borrowed for the server's life).
 * A new server (dns_stop), or NULL and err ("--dns: cannot listen on '...': ..."). */
struct dns *dns_start(const char *listen, const struct dns_zone *z,
                      struct flood_err *err) FLOOD_WUR;
/* "ADDR:PORT" bound (borrowed). */
const char *dns_address(const struct dns *d);
int dns_port(const struct dns *d);
/* The counters (zero for d NULL). */
void dns_get_stats(struct dns *d, struct dns_stats *out);
/* The outcomes split by transport: out[0] UDP, out[1] TCP. */
void dns_get_split(struct dns *d, uint64_t out[2][DNS__RESULTS]);
/* Stop the thread, close every socket and free d (NULL is fine). */
void dns_stop(struct dns *d);

#endif
