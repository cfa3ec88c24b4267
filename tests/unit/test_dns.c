/* tests/unit/test_dns.c: the crowd's name server: answers to hand-made queries (bytes as RFC
 * 1035 4.1 lays them out, read back by hand, not by ldns), then the server over UDP and TCP
 * on loopback with its counters. */
#include "flood/crowd/dns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tests/check.h"

static const struct wf_crowd wf = {.instances = 1000,
                                   .actors = 10,
                                   .domain_template = "flood%d.test",
                                   .scheme = "http",
                                   .version = "1.0.0"};

/* A query for name (dotted) of type t, class cls; flags as the header's third/fourth byte;
 * qd questions; edns adds an OPT record. Its length. */
static size_t query(uint8_t *m, uint16_t id, const char *name, uint16_t t, uint16_t cls,
                    uint16_t flags, int qd, int edns)
{
    size_t n = 0;
    uint8_t h[12] = {id >> 8, id & 255, flags >> 8, flags & 255, 0, (uint8_t)qd,
                     0,       0,        0,          0,           0, edns ? 1 : 0};
    memcpy(m, h, 12);
    n = 12;
    for (int k = 0; k < qd; k++) {
        const char *p = name;
        while (*p) {
            const char *dot = strchr(p, '.');
            size_t l = dot ? (size_t)(dot - p) : strlen(p);
            m[n++] = (uint8_t)l;
            memcpy(m + n, p, l);
            n += l;
            p += l + (dot ? 1 : 0);
        }
        m[n++] = 0;
        m[n++] = t >> 8, m[n++] = t & 255, m[n++] = cls >> 8, m[n++] = cls & 255;
    }
    if (edns) {
        uint8_t opt[11] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0}; /* size 1232 */
        memcpy(m + n, opt, 11);
        n += 11;
    }
    return n;
}

static int rcode(const uint8_t *a)
{
    return a[3] & 15;
}
static int ancount(const uint8_t *a)
{
    return a[6] << 8 | a[7];
}

static void test_answers(void)
{
    struct dns_zone z = {.wf = &wf, .family = AF_INET, .addr = {10, 9, 8, 7}};
    uint8_t q[600], a[DNS_MSG_MAX];
    size_t ql, al;

    ql = query(q, 0x1234, "flood1.test", 1, 1, 0x0100, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_ADDRESS, "A of flood1.test: address");
    CHECK(al >= 12 && a[0] == 0x12 && a[1] == 0x34, "the answer carries the query's id");
    CHECK((a[2] & 0x80) && (a[2] & 0x04) && (a[2] & 0x01), "QR, AA and RD (copied) set");
    CHECK(rcode(a) == 0 && ancount(a) == 1, "NOERROR with one answer");
    CHECK(al >= 4 && memcmp(a + al - 4, z.addr, 4) == 0, "its data is the crowd's address");
    CHECK(al >= 10 && a[al - 10] == 0 && a[al - 8] == 0 && a[al - 7] == 60, "TTL 60");

    ql = query(q, 7, "FLOOD1000.TEST", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 1, a, sizeof(a), &al) == DNS_ADDRESS,
          "the last instance, in upper case, over TCP: address");
    ql = query(q, 7, "flood1001.test", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_REFUSED && rcode(a) == 5 &&
              ancount(a) == 0,
          "instance 1001 of 1000: REFUSED");
    ql = query(q, 7, "flood01.test", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_REFUSED, "a leading zero: REFUSED");
    ql = query(q, 7, "example.com", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_REFUSED, "example.com: REFUSED");
    ql = query(q, 7, "test", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_REFUSED, "the parent: REFUSED");
    ql = query(q, 7, "flood1.test", 28, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_NODATA && rcode(a) == 0 &&
              ancount(a) == 0,
          "AAAA of an IPv4 crowd: NOERROR, no data");
    ql = query(q, 7, "flood1.test", 255, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_NODATA, "ANY: NODATA");
    ql = query(q, 7, "flood1.test", 1, 3, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_REFUSED, "class CH: REFUSED");
    ql = query(q, 7, "flood1.test", 1, 1, 0x2000, 1, 0); /* opcode 4, NOTIFY */
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_NOTIMP && rcode(a) == 4,
          "opcode NOTIFY: NOTIMP");
    ql = query(q, 7, "flood1.test", 1, 1, 0, 2, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_FORMERR && rcode(a) == 1,
          "two questions: FORMERR");
    ql = query(q, 7, "flood1.test", 1, 1, 0x8000, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_MALFORMED && al == 0,
          "a response (QR) is dropped");
    ql = query(q, 7, "flood1.test", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql - 3, 0, a, sizeof(a), &al) == DNS_MALFORMED && al == 0,
          "a cut question is dropped");
    CHECK(dns_answer(&z, q, 11, 0, a, sizeof(a), &al) == DNS_MALFORMED, "under a header: dropped");
    q[12] = 0xc0, q[13] = 12; /* a name pointing at itself */
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_MALFORMED, "a pointer loop: dropped");
    /* Two TSIG records: ldns_wire2pkt would keep the last and lose the first's memory (ldns
     * issue 317), so the message is dropped before ldns reads it; the sanitizers' build
     * reports a leak here otherwise. */
    static const uint8_t tsig[] = {7,   'k', 'e', 'y', 'n', 'a', 'm', 'e', 0, 0,
                                   250, 0,   255, 0,   0,   0,   0,   0,   0};
    ql = query(q, 7, "flood1.test", 1, 1, 0, 1, 0);
    q[11] = 3; /* ARCOUNT: ldns counts it down by one for each TSIG */
    memcpy(q + ql, tsig, sizeof(tsig));
    memcpy(q + ql + sizeof(tsig), tsig, sizeof(tsig));
    CHECK(dns_answer(&z, q, ql + 2 * sizeof(tsig), 0, a, sizeof(a), &al) == DNS_MALFORMED &&
              al == 0,
          "two TSIG records: dropped");
    CHECK(dns_answer(&z, q, ql + sizeof(tsig), 0, a, sizeof(a), &al) == DNS_MALFORMED,
          "one TSIG, then the message ends before the next record: dropped (ldns refuses it)");
    q[11] = 1;
    CHECK(dns_answer(&z, q, ql + sizeof(tsig), 0, a, sizeof(a), &al) == DNS_ADDRESS,
          "one TSIG record: answered (unverified: the crowd has no keys)");
    /* The two hidden in an A record's data longer than an address: ldns reads the record's
     * four bytes and the next records from where they end, not from past RDLENGTH. */
    static const uint8_t arec[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 + 2 * sizeof(tsig),
                                   10,   9,  8, 7};
    q[7] = 1, q[11] = 3;
    memcpy(q + ql, arec, sizeof(arec));
    memcpy(q + ql + sizeof(arec), tsig, sizeof(tsig));
    memcpy(q + ql + sizeof(arec) + sizeof(tsig), tsig, sizeof(tsig));
    CHECK(dns_answer(&z, q, ql + sizeof(arec) + 2 * sizeof(tsig), 0, a, sizeof(a), &al) ==
              DNS_MALFORMED,
          "two TSIG records inside an A record's data, where ldns reads them: dropped");
    q[7] = 0, q[11] = 0;

    ql = query(q, 7, "flood1.te:t", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_REFUSED, "a ':' in a label: REFUSED");

    ql = query(q, 9, "flood2.test", 1, 1, 0, 1, 1);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_ADDRESS && (a[11] == 1),
          "an EDNS query gets OPT back");

    z.src_base = 0x7f00000b; /* 127.0.0.11 */
    z.src_count = 20;
    ql = query(q, 7, "flood25.test", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z, q, ql, 0, a, sizeof(a), &al) == DNS_ADDRESS && a[al - 4] == 127 &&
              a[al - 1] == 15,
          "--source-ips: instance 25 of 20 addresses gets 127.0.0.15");

    struct dns_zone z6 = {.wf = &wf, .family = AF_INET6};
    z6.addr[15] = 1;
    ql = query(q, 7, "flood3.test", 28, 1, 0, 1, 0);
    CHECK(dns_answer(&z6, q, ql, 0, a, sizeof(a), &al) == DNS_ADDRESS && a[al - 1] == 1 &&
              a[al - 17] == 16,
          "an IPv6 crowd: AAAA ::1");
    ql = query(q, 7, "flood3.test", 1, 1, 0, 1, 0);
    CHECK(dns_answer(&z6, q, ql, 0, a, sizeof(a), &al) == DNS_NODATA, "and A is NODATA");
    CHECK(strcmp(dns_result_name(DNS_MALFORMED), "malformed") == 0, "result names");
}

static void test_server(void)
{
    struct dns_zone z = {.wf = &wf, .family = AF_INET, .addr = {127, 0, 0, 1}};
    struct flood_err err = {0};
    CHECK(dns_start("nonsense", &z, &err) == NULL && strstr(err.msg, "--dns"),
          "a bad address is refused naming --dns: %s", err.msg);
    struct dns *d = dns_start("127.0.0.1:0", &z, &err);
    CHECK(d != NULL, "listens on port 0: %s", d ? dns_address(d) : err.msg);
    if (!d)
        return;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)dns_port(d))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = 5};
    uint8_t q[600], a[DNS_MSG_MAX + 2];

    int u = socket(AF_INET, SOCK_DGRAM, 0);
    setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sendto(u, "\1\2\3", 3, 0, (struct sockaddr *)&sa, sizeof(sa)); /* malformed: no answer */
    size_t ql = query(q, 77, "flood5.test", 1, 1, 0x0100, 1, 0);
    sendto(u, q, ql, 0, (struct sockaddr *)&sa, sizeof(sa));
    ssize_t n = recv(u, a, sizeof(a), 0);
    CHECK(n > 12 && a[1] == 77 && ancount(a) == 1, "UDP: the A answer (and none for garbage)");
    close(u);

    int t = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(t, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    int c = connect(t, (struct sockaddr *)&sa, sizeof(sa));
    uint8_t two[2 * 620];
    size_t l1 = query(two + 2, 88, "flood6.test", 1, 1, 0, 1, 0);
    two[0] = 0, two[1] = (uint8_t)l1;
    size_t l2 = query(two + 4 + l1, 89, "example.org", 1, 1, 0, 1, 0);
    two[2 + l1] = 0, two[3 + l1] = (uint8_t)l2;
    CHECK(c == 0 && send(t, two, 4 + l1 + l2, 0) == (ssize_t)(4 + l1 + l2),
          "TCP: two queries in one write");
    size_t got = 0;
    while (got < 4 && (n = recv(t, a + got, sizeof(a) - got, 0)) > 0)
        got += (size_t)n;
    size_t first = got >= 2 ? (size_t)(a[0] << 8 | a[1]) : 0;
    while (got < first + 4 && (n = recv(t, a + got, sizeof(a) - got, 0)) > 0)
        got += (size_t)n;
    CHECK(got >= first + 4 && a[3] == 88 && ancount(a + 2) == 1, "TCP: the first answered");
    CHECK(got >= first + 4 + 12 && a[first + 5] == 89 && rcode(a + first + 4) == 5,
          "TCP: the second REFUSED on the same connection");
    close(t);

    struct dns_stats st;
    for (int i = 0; i < 100; i++) { /* the counters follow the answers at once; bound a wait */
        dns_get_stats(d, &st);
        if (st.by_result[DNS_MALFORMED] == 1)
            break;
        usleep(10000);
    }
    CHECK(st.udp == 2 && st.tcp == 2, "counted by transport (udp %llu, tcp %llu)", st.udp, st.tcp);
    CHECK(st.by_result[DNS_ADDRESS] == 2 && st.by_result[DNS_REFUSED] == 1 &&
              st.by_result[DNS_MALFORMED] == 1,
          "counted by result (address 2, refused 1, malformed 1)");
    uint64_t split[2][DNS__RESULTS];
    dns_get_split(d, split);
    CHECK(split[1][DNS_REFUSED] == 1 && split[0][DNS_MALFORMED] == 1, "split by transport");
    dns_stop(d);
}

int main(void)
{
    test_answers();
    test_server();
    return check_done();
}
