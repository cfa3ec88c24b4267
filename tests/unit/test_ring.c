/* tests/unit/test_ring.c: the signers' look-ahead ring with several consumers (flood run
 * --loops): consumer k of n gets exactly the sequence numbers seq with seq mod n == k, in
 * order, each once, at the schedule's intended time, woken by its own eventfd; one consumer
 * keeps today's order 0, 1, 2, ...; a consumer that stops taking holds the signers up once
 * the ring holds its share, and no other consumer receives its requests. Unsigned
 * (--sign none): no keys are needed. */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/send/signer.h"
#include "tests/check.h"

#define RATE   2000.0
#define DUR_S  0.6 /* 1200 activities */
#define NTOTAL 1200

static struct persona persona = {NULL,
                                 "https://target.test/users/alice",
                                 "https://target.test/users/alice/inbox",
                                 "https://target.test/inbox",
                                 NULL,
                                 0};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct fixture {
    struct crowd crowd;
    struct workload *w;
    struct sched sc;
    struct signer *sg;
};

static int setup(struct fixture *f, int consumers, size_t ring)
{
    memset(f, 0, sizeof(*f));
    f->crowd.opts.instances = f->crowd.wf.instances = 3;
    f->crowd.opts.actors = f->crowd.wf.actors = 4;
    f->crowd.wf.domain_template = "flood%d.test";
    f->crowd.wf.scheme = "https";
    f->crowd.wf.version = "0";
    struct workload_opts wo = {.seed = 9, .mix = {[OP_CREATE] = 1}};
    struct flood_err err = {0};
    f->w = workload_new_at(&f->crowd, &wo, &persona, 1, 1764493200, &err);
    if (!f->w || sched_init_rate(&f->sc, RATE, DUR_S, SCHED_POISSON, 3, &err))
        return -1;
    struct signer_opts so = {.threads = 2,
                             .n_dialects = 0,
                             .lookahead_s = 60, /* everything may be ready at once */
                             .lookahead_max = ring,
                             .consumers = consumers};
    f->sg = signer_new(&f->crowd, f->w, &f->sc, &so, &err);
    if (!f->sg)
        return -1;
    /* the run started 10 s ago: every intended time has come */
    int64_t now = mono_ns();
    return signer_start(f->sg, now - 10000000000, 1764493200000000000, &err);
}

static void teardown(struct fixture *f)
{
    signer_free(f->sg);
    workload_free(f->w);
}

/* Take seq, waiting on the consumer's fd up to ms; NULL when it did not come. */
static struct signer_req *take_wait(struct signer *sg, int k, uint64_t seq, int ms)
{
    int64_t until = mono_ns() + (int64_t)ms * 1000000;
    for (;;) {
        struct signer_req *r = signer_take(sg, seq);
        if (r)
            return r;
        signer_wait_for(sg, seq);
        r = signer_take(sg, seq);
        if (r)
            return r;
        int left = (int)((until - mono_ns()) / 1000000);
        if (left <= 0)
            return NULL;
        struct pollfd p = {.fd = signer_wake_fd(sg, k), .events = POLLIN};
        if (poll(&p, 1, left) > 0) {
            uint64_t v;
            if (read(p.fd, &v, sizeof(v)) < 0) {
                /* spurious: take again */
            }
        }
    }
}

struct consumer {
    struct signer *sg;
    int k, n;
    const int64_t *want_t; /* the schedule's intended times, by seq */
    uint64_t taken, out_of_order, missing;
};

static void *consume(void *arg)
{
    struct consumer *c = arg;
    for (uint64_t seq = (uint64_t)c->k; seq < NTOTAL; seq += (uint64_t)c->n) {
        struct signer_req *r = take_wait(c->sg, c->k, seq, 10000);
        if (!r) {
            c->missing++;
            continue;
        }
        if (r->seq != seq || r->n != seq || r->intended_ns != c->want_t[seq])
            c->out_of_order++;
        c->taken++;
        signer_req_free(r);
    }
    return NULL;
}

static void run_consumers(int n, size_t ring)
{
    struct fixture f;
    if (setup(&f, n, ring)) {
        CHECK(0, "%d consumers: signer set up", n);
        teardown(&f);
        return;
    }
    static int64_t want_t[NTOTAL + 1];
    struct sched copy = f.sc;
    sched_rewind(&copy);
    uint64_t total = 0;
    for (int64_t t; total <= NTOTAL && (t = sched_next(&copy)) >= 0; total++)
        want_t[total] = t;
    struct consumer c[8];
    pthread_t th[8];
    for (int k = 0; k < n; k++) {
        c[k] = (struct consumer){.sg = f.sg, .k = k, .n = n, .want_t = want_t};
        pthread_create(&th[k], NULL, consume, &c[k]);
    }
    uint64_t taken = 0, bad = 0, missing = 0;
    int even = 1;
    for (int k = 0; k < n; k++) {
        pthread_join(th[k], NULL);
        taken += c[k].taken;
        bad += c[k].out_of_order;
        missing += c[k].missing;
        uint64_t share = (NTOTAL - (uint64_t)k + (uint64_t)n - 1) / (uint64_t)n;
        even &= c[k].taken == share;
    }
    CHECK(total >= NTOTAL && taken == NTOTAL && missing == 0,
          "%d consumer(s), ring %zu: all %d requests taken (%llu, %llu missing)", n, ring, NTOTAL,
          (unsigned long long)taken, (unsigned long long)missing);
    CHECK(bad == 0 && even,
          "%d consumer(s): each took its own seq mod %d, in order, at the schedule's times", n, n);
    teardown(&f);
}

/* Two consumers, the second never takes: the first gets what the ring's share allows
 * (ring 16: seqs 0, 2, ..., 16, before the signers stop at 17, whose slot 1 is never
 * freed), never a request of the other's class, and nothing past it. */
static void stalled_consumer(void)
{
    struct fixture f;
    if (setup(&f, 2, 16)) {
        CHECK(0, "stalled: signer set up");
        teardown(&f);
        return;
    }
    uint64_t got = 0;
    for (uint64_t seq = 0; seq <= 16; seq += 2) {
        struct signer_req *r = take_wait(f.sg, 0, seq, 10000);
        got += r && r->seq == seq;
        signer_req_free(r);
    }
    CHECK(got == 9, "consumer 0 of 2 takes seqs 0..16 (%llu of 9)", (unsigned long long)got);
    struct signer_req *r = take_wait(f.sg, 0, 18, 300);
    CHECK(r == NULL, "and not 18: the signers wait for consumer 1 to free slot 1 for 17");
    signer_req_free(r);
    r = signer_take(f.sg, 1);
    CHECK(r && r->seq == 1, "consumer 1's request is still there for it");
    signer_req_free(r);
    r = take_wait(f.sg, 0, 18, 10000);
    CHECK(r && r->seq == 18, "once it takes, the signers go on: 18 comes");
    signer_req_free(r);
    CHECK(signer_wake_fd(f.sg, 1) >= 0 && signer_wake_fd(f.sg, 2) < 0,
          "a wake fd per consumer, none beyond");
    teardown(&f);
}

int main(void)
{
    run_consumers(1, 64);
    run_consumers(3, 16); /* 16 rounds up to 18 */
    run_consumers(4, 1024);
    stalled_consumer();
    return check_done();
}
