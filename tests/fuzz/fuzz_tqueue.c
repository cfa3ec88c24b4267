/* tests/fuzz/fuzz_tqueue.c: libFuzzer harness for what the target-queue sources parse from
 * the network (flood/measure/tqueue_http.c): any bytes as a Prometheus text exposition, read
 * for a metric with and without labels, and as a Fedify benchmark stats snapshot. Beyond "no
 * crash, no leak": a value found is finite, and a refusal says why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/tqueue.h"

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
    static const char *const labels[] = {"", "{queue=\"inbox\"}", "{a=\"b\",c=\"d\"}"};
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
        double v = NAN;
        struct flood_err err = {0};
        if (tq_prom_value((const char *)data, size, "jobs_waiting", labels[i], &v, &err) == 0)
            REQUIRE(isfinite(v));
        else
            REQUIRE(err.msg[0] && !strncmp(err.msg, "prometheus: ", 12));
    }
    json_t *j = json_loadb((const char *)data, size, 0, NULL);
    if (j) {
        struct tq_reading r;
        memset(&r, 0, sizeof(r));
        r.ok = 1;
        struct flood_err err = {0};
        if (tq_fedify_gauges(j, &r, &err) == 0)
            REQUIRE(r.n <= TQ_GAUGES_MAX);
        else
            REQUIRE(err.msg[0]);
        json_decref(j);
    }
    return 0;
}
