/* tests/fuzz/fuzz_hresp.c: libFuzzer harness for the sender's answer parser
 * (flood/send/hclient_parse.c), what reads a target's bytes on every request.
 *
 * Input: 8 bytes seeding the chunking, then the bytes of an answer stream. The stream is
 * fed once whole and once in chunks of random sizes (1 byte to all), then the peer's close.
 * Beyond "no crash, no leak", the two feeds must agree (answers completed or -1, the last
 * final status, Retry-After): http-parser is chunk-blind, and the client's own header
 * matching must be too. A completed answer's status is a final one (200..999). */
#include "flood/send/hclient.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t seed = 0;
    memcpy(&seed, data, 8);
    seed |= 1;
    const char *buf = (const char *)data + 8;
    size_t len = size - 8;

    struct hc_parse *whole = hc_parse_new();
    int w = len ? hc_parse_feed(whole, buf, len) : 0;
    int we = w < 0 ? -1 : hc_parse_eof(whole);

    struct hc_parse *parts = hc_parse_new();
    int p = 0;
    size_t at = 0;
    /* the chunk sizes: mostly small, sometimes the rest */
    while (at < len && p >= 0) {
        uint64_t r = next(&seed);
        size_t n = (r & 3) == 0 ? len - at : 1 + (size_t)((r >> 2) % 16);
        if (n > len - at)
            n = len - at;
        p = hc_parse_feed(parts, buf + at, n);
        at += n;
    }
    int pe = p < 0 ? -1 : hc_parse_eof(parts);

    REQUIRE(w == p);
    REQUIRE(we == pe);
    REQUIRE(hc_parse_last_status(whole) == hc_parse_last_status(parts));
    REQUIRE(hc_parse_retry_after(whole) == hc_parse_retry_after(parts));
    if (we > 0) {
        int st = hc_parse_last_status(whole);
        REQUIRE(st >= 200 && st <= 999);
        REQUIRE(hc_parse_retry_after(whole) == 0 || hc_parse_retry_after(whole) == 1);
    }
    hc_parse_free(whole);
    hc_parse_free(parts);
    return 0;
}
