/* flood/crowd/dns_zone.c: one DNS query in, its answer out (rules in dns.h). Pure: the wire
 * format is ldns's, the names are webfinger/'s. */
#include "flood/crowd/dns.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>
#include <sys/socket.h>

#include <ldns/ldns.h>

#define DNS_UDP_MIN 512 /* RFC 1035 4.2.1: a UDP answer without EDNS */

const char *dns_result_name(enum dns_result r)
{
    static const char *const names[DNS__RESULTS] = {"address", "nodata",  "refused",
                                                    "notimp",  "formerr", "malformed"};
    return (unsigned)r < DNS__RESULTS ? names[r] : "unknown";
}

/* The query name as dotted text in out[WF_HOST_MAX] (lower case, no trailing dot), or 0
 * when it holds a byte no crowd host has (a crowd host is letters, digits, '-' and dots):
 * such a name is simply not the crowd's. */
static int name_text(const ldns_rdf *name, char out[WF_HOST_MAX])
{
    const uint8_t *d = ldns_rdf_data(name);
    size_t n = ldns_rdf_size(name), i = 0, k = 0;
    while (i < n && d[i] != 0) {
        size_t l = d[i++];
        if (l > 63 || i + l > n || k + l + 1 >= WF_HOST_MAX)
            return 0;
        if (k)
            out[k++] = '.';
        for (size_t j = 0; j < l; j++) {
            unsigned char c = d[i + j];
            if (!isalnum(c) && c != '-')
                return 0;
            out[k++] = (char)tolower(c);
        }
        i += l;
    }
    out[k] = '\0';
    return k > 0;
}

/* The answer record of instance for type t (A or AAAA), or NULL when the crowd has no
 * address of that family (NODATA). */
static ldns_rr *address_rr(const struct dns_zone *z, const ldns_rdf *owner, int instance,
                           ldns_rr_type t)
{
    uint8_t a4[4];
    const uint8_t *data;
    size_t len;
    ldns_rdf_type rt;
    if (t == LDNS_RR_TYPE_A && z->src_count) {
        uint32_t v = htonl(z->src_base + (uint32_t)(instance - 1) % z->src_count);
        memcpy(a4, &v, 4);
        data = a4, len = 4, rt = LDNS_RDF_TYPE_A;
    } else if (t == LDNS_RR_TYPE_A && z->family == AF_INET && !z->src_count) {
        data = z->addr, len = 4, rt = LDNS_RDF_TYPE_A;
    } else if (t == LDNS_RR_TYPE_AAAA && z->family == AF_INET6 && !z->src_count) {
        data = z->addr, len = 16, rt = LDNS_RDF_TYPE_AAAA;
    } else {
        return NULL;
    }
    ldns_rr *rr = ldns_rr_new();
    ldns_rdf *rd = ldns_rdf_new_frm_data(rt, len, data);
    ldns_rdf *own = ldns_rdf_clone(owner);
    if (!rr || !rd || !own) {
        ldns_rr_free(rr);
        ldns_rdf_deep_free(rd);
        ldns_rdf_deep_free(own);
        return NULL;
    }
    ldns_rr_set_owner(rr, own);
    ldns_rr_set_type(rr, t);
    ldns_rr_set_class(rr, LDNS_RR_CLASS_IN);
    ldns_rr_set_ttl(rr, DNS_TTL);
    ldns_rr_push_rdf(rr, rd);
    return rr;
}

/* Decide the query's outcome and fill reply (header bits, question, answer). */
static enum dns_result decide(const struct dns_zone *z, const ldns_pkt *q, ldns_pkt *reply)
{
    ldns_pkt_set_id(reply, ldns_pkt_id(q));
    ldns_pkt_set_qr(reply, true);
    ldns_pkt_set_opcode(reply, ldns_pkt_get_opcode(q));
    ldns_pkt_set_rd(reply, ldns_pkt_rd(q));
    ldns_pkt_set_cd(reply, ldns_pkt_cd(q));
    if (ldns_pkt_get_opcode(q) != LDNS_PACKET_QUERY) {
        ldns_pkt_set_rcode(reply, LDNS_RCODE_NOTIMPL);
        return DNS_NOTIMP;
    }
    const ldns_rr_list *qs = ldns_pkt_question(q);
    if (ldns_pkt_qdcount(q) != 1 || !qs || ldns_rr_list_rr_count(qs) != 1) {
        ldns_pkt_set_rcode(reply, LDNS_RCODE_FORMERR);
        return DNS_FORMERR;
    }
    const ldns_rr *qr = ldns_rr_list_rr(qs, 0);
    ldns_rr *echo = ldns_rr_clone(qr);
    if (echo)
        ldns_pkt_push_rr(reply, LDNS_SECTION_QUESTION, echo);
    char host[WF_HOST_MAX];
    int instance = name_text(ldns_rr_owner(qr), host)
                       ? wf_instance_of_host_n(z->wf, host, strlen(host), WF_PORT_ANY)
                       : 0;
    ldns_rr_class cl = ldns_rr_get_class(qr);
    if (!instance || (cl != LDNS_RR_CLASS_IN && cl != LDNS_RR_CLASS_ANY)) {
        ldns_pkt_set_rcode(reply, LDNS_RCODE_REFUSED);
        return DNS_REFUSED;
    }
    ldns_pkt_set_aa(reply, true);
    ldns_pkt_set_rcode(reply, LDNS_RCODE_NOERROR);
    ldns_rr_type t = ldns_rr_get_type(qr);
    ldns_rr *rr = (t == LDNS_RR_TYPE_A || t == LDNS_RR_TYPE_AAAA)
                      ? address_rr(z, ldns_rr_owner(qr), instance, t)
                      : NULL;
    if (!rr)
        return DNS_NODATA;
    ldns_pkt_push_rr(reply, LDNS_SECTION_ANSWER, rr);
    return DNS_ADDRESS;
}

/* Write reply into out; when it exceeds max, the header and question alone with TC set. */
static int write_reply(ldns_pkt *reply, size_t max, uint8_t *out, size_t out_max, size_t *out_len)
{
    for (int pass = 0; pass < 2; pass++) {
        uint8_t *wire = NULL;
        size_t n = 0;
        if (ldns_pkt2wire(&wire, reply, &n) != LDNS_STATUS_OK || !wire)
            return -1;
        if (n <= max && n <= out_max) {
            memcpy(out, wire, n);
            *out_len = n;
            LDNS_FREE(wire);
            return 0;
        }
        LDNS_FREE(wire);
        ldns_rr_list_deep_free(ldns_pkt_answer(reply));
        ldns_pkt_set_answer(reply, ldns_rr_list_new());
        ldns_pkt_set_ancount(reply, 0);
        ldns_pkt_set_tc(reply, true);
    }
    return -1;
}

/* How many TSIG records ldns_wire2pkt would read from msg[len]'s additional section. It keeps
 * only the last one and loses the others' memory (ldns 1.8.3, ldns issue 317): one datagram
 * carrying two would grow the process by ~73 bytes, so such a message never reaches it. The
 * walk is ldns_wire2pkt's own, record by record with ldns_wire2rr (a record's data is not
 * always RDLENGTH long to ldns: the next one starts where its fields end), with its way of
 * counting down the additional section for each TSIG. */
static unsigned tsig_count(const uint8_t *msg, size_t len)
{
    static const ldns_pkt_section sections[4] = {LDNS_SECTION_QUESTION, LDNS_SECTION_ANSWER,
                                                 LDNS_SECTION_AUTHORITY, LDNS_SECTION_ADDITIONAL};
    unsigned tsig = 0;
    size_t pos = LDNS_HEADER_SIZE;
    for (int s = 0; s < 4; s++) {
        unsigned count = (unsigned)msg[4 + 2 * s] << 8 | msg[5 + 2 * s];
        for (unsigned i = 0; i < count; i++) {
            ldns_rr *rr = NULL;
            if (ldns_wire2rr(&rr, msg, len, &pos, sections[s]) != LDNS_STATUS_OK)
                return tsig; /* ldns_wire2pkt stops here too, and frees what it read */
            if (s == 3 && ldns_rr_get_type(rr) == LDNS_RR_TYPE_TSIG)
                tsig++, count--;
            ldns_rr_free(rr);
        }
    }
    return tsig;
}

enum dns_result dns_answer(const struct dns_zone *z, const uint8_t *msg, size_t len, int tcp,
                           uint8_t *out, size_t out_max, size_t *out_len)
{
    *out_len = 0;
    ldns_pkt *q = NULL;
    if (len < LDNS_HEADER_SIZE || tsig_count(msg, len) > 1 ||
        ldns_wire2pkt(&q, msg, len) != LDNS_STATUS_OK || !q)
        return DNS_MALFORMED;
    if (ldns_pkt_qr(q)) { /* a response sent to a server: never answered (no loops) */
        ldns_pkt_free(q);
        return DNS_MALFORMED;
    }
    ldns_pkt *reply = ldns_pkt_new();
    if (!reply) {
        ldns_pkt_free(q);
        return DNS_MALFORMED;
    }
    enum dns_result r = decide(z, q, reply);
    size_t max = tcp ? 65535 : DNS_UDP_MIN;
    if (ldns_pkt_edns(q)) { /* RFC 6891 7: answer with OPT, our own size */
        ldns_pkt_set_edns_udp_size(reply, DNS_MSG_MAX);
        if (!tcp && ldns_pkt_edns_udp_size(q) > max)
            max = ldns_pkt_edns_udp_size(q);
    }
    if (write_reply(reply, max, out, out_max, out_len))
        r = DNS_MALFORMED;
    ldns_pkt_free(reply);
    ldns_pkt_free(q);
    return r;
}
