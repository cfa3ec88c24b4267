/* tests/fuzz/fuzz_replay.c: libFuzzer harness for the --replay reader (flood/send/replay.c):
 * any bytes as an access log or a CSV. Beyond "no crash, no leak", it checks that a parse
 * either fails with a message naming the file or gives events sorted by time from 0, with
 * origins in range and ranked busiest first, and operations that are --mix kinds or -1. */
#include "flood/send/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/stats.h"

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
    struct replay r;
    struct flood_err err = {0};
    if (replay_parse((const char *)data, size, "fuzz", &r, &err)) {
        REQUIRE(!strncmp(err.msg, "replay: fuzz:", 13));
        return 0;
    }
    REQUIRE(r.n > 0 && r.ev[0].t_ns == 0 && r.n_origins > 0);
    uint64_t total = 0;
    for (size_t i = 0; i < r.n_origins; i++) {
        REQUIRE(r.origins[i] && strlen(r.origins[i]) <= REPLAY_ORIGIN_MAX);
        REQUIRE(i == 0 || r.origin_events[i] <= r.origin_events[i - 1]);
        total += r.origin_events[i];
    }
    REQUIRE(total == r.n);
    for (size_t i = 0; i < r.n; i++) {
        REQUIRE(i == 0 || r.ev[i].t_ns >= r.ev[i - 1].t_ns);
        REQUIRE(r.ev[i].origin < r.n_origins);
        REQUIRE(r.ev[i].op >= -1 && r.ev[i].op < OP__COUNT);
        int inst = replay_instance(&r, r.ev[i].origin, 7);
        REQUIRE(inst >= 1 && inst <= 7);
    }
    replay_free(&r);
    return 0;
}
