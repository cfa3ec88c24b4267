/* tests/fuzz/fuzz_dns.c: libFuzzer harness for the crowd's name server (flood/crowd/dns_zone.c),
 * what reads every datagram and TCP message sent to --dns.
 *
 * Input: one byte choosing UDP or TCP, then a message. Beyond "no crash, no leak": a message
 * that is answered gets an answer that ldns parses again, a response (QR) with the query's
 * id, no longer than the transport allows (512 bytes over UDP unless the query had EDNS);
 * a dropped one gets nothing; an address answer carries exactly one record, a refused or
 * NODATA one none. The crowd is 1,000 instances, its address IPv4, every fifth input with
 * --source-ips. */
#include "flood/crowd/dns.h"

#include <ldns/ldns.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    static const struct wf_crowd wf = {.instances = 1000,
                                       .actors = 10,
                                       .domain_template = "flood%d.test",
                                       .scheme = "http",
                                       .version = "1.0.0"};
    struct dns_zone z = {.wf = &wf, .family = AF_INET, .addr = {127, 0, 0, 1}};
    if (data[0] % 5 == 4) {
        z.src_base = 0x7f00000b;
        z.src_count = 20;
    }
    int tcp = data[0] & 1;
    uint8_t out[DNS_MSG_MAX];
    size_t n = 12345;
    enum dns_result r = dns_answer(&z, data + 1, size - 1, tcp, out, sizeof(out), &n);
    REQUIRE((unsigned)r < DNS__RESULTS);
    if (r == DNS_MALFORMED) {
        REQUIRE(n == 0);
        return 0;
    }
    REQUIRE(n >= 12 && n <= sizeof(out));
    REQUIRE(out[0] == data[1] && out[1] == data[2]); /* the query's id */
    REQUIRE(out[2] & 0x80);                          /* QR */
    ldns_pkt *q = NULL, *a = NULL;
    REQUIRE(ldns_wire2pkt(&q, data + 1, size - 1) == LDNS_STATUS_OK);
    if (!tcp && !ldns_pkt_edns(q))
        REQUIRE(n <= 512);
    REQUIRE(ldns_wire2pkt(&a, out, n) == LDNS_STATUS_OK);
    size_t an = ldns_pkt_ancount(a);
    if (r == DNS_ADDRESS)
        REQUIRE(an == 1 || ldns_pkt_tc(a));
    else
        REQUIRE(an == 0);
    if (r == DNS_REFUSED)
        REQUIRE(ldns_pkt_get_rcode(a) == LDNS_RCODE_REFUSED);
    ldns_pkt_free(q);
    ldns_pkt_free(a);
    return 0;
}
