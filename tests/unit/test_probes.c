/* tests/unit/test_probes.c: Follow-to-Accept probes: open, close, duplicates, unknown ones,
 * the histogram, growth past the first table, threads, and the event log spooled to a file
 * (a long run's Follows off the resident set, every event read back in order). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "flood/measure/probes.h"
#include "tests/check.h"

#define THREADS    4
#define PER_THREAD 20000

struct worker {
    struct probes *p;
    uint64_t base;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    for (uint64_t i = 0; i < PER_THREAD; i++)
        probes_follow_sent(w->p, w->base + i, 1000);
    for (uint64_t i = 0; i < PER_THREAD; i += 2)
        probes_answer(w->p, w->base + i, 1, 1000 + 5000);
    return NULL;
}

/* The per-second histogram taken while THREADS writers close probes: every take must be a
 * consistent second (as many samples as Accepts, every sample 5 ms) and the takes must add
 * up to the totals. */
static void test_take_concurrent(void)
{
    struct probes *q = probes_new();
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){q, (uint64_t)i * 1000000};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    struct hist *h = hist_new();
    uint64_t accepted = 0, samples = 0, takes = 0, torn = 0;
    struct probes_totals t = {0};
    for (;;) {
        /* every Accept was in before this take: it is the last one needed */
        probes_snapshot(q, &t, NULL);
        int all_in = t.accepted == THREADS * PER_THREAD / 2;
        struct probes_second ps;
        probes_take_second(q, &h, &ps);
        takes++;
        accepted += ps.accepted;
        samples += hist_count(h);
        if (hist_count(h) != ps.accepted ||
            (hist_count(h) && (hist_min(h) != 5000 || hist_max(h) != 5000)))
            torn++;
        hist_reset(h);
        if (all_in)
            break;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK(torn == 0, "every one of %llu takes is consistent (%llu not)", (unsigned long long)takes,
          (unsigned long long)torn);
    CHECK(accepted == THREADS * PER_THREAD / 2 && samples == accepted,
          "the takes add up to every Accept (%llu)", (unsigned long long)accepted);
    struct probes_second ps;
    probes_take_second(q, &h, &ps);
    CHECK(ps.accepted == 0 && ps.rejected == 0 && hist_count(h) == 0,
          "a take right after the last one is empty");

    /* peek does not end the second; take does */
    probes_follow_sent(q, 9000042, 0);
    probes_answer(q, 9000042, 0, 10);
    probes_follow_sent(q, 9000043, 0);
    probes_answer(q, 9000043, 1, 7000);
    struct hist *peek = hist_new();
    probes_peek_second(q, &ps, peek);
    probes_peek_second(q, &ps, NULL);
    CHECK(ps.accepted == 1 && ps.rejected == 1 && hist_count(peek) == 1 && hist_max(peek) == 7000,
          "peek twice: still 1 Accept (7 ms) and 1 Reject");
    probes_take_second(q, &h, &ps);
    CHECK(ps.accepted == 1 && ps.rejected == 1 && hist_count(h) == 1, "take gets them");
    probes_peek_second(q, &ps, NULL);
    CHECK(ps.accepted == 0 && ps.rejected == 0, "and the next second starts empty");
    hist_free(peek);
    hist_free(h);
    probes_free(q);
}

/* The resident set, KiB. */
static long resident_kib(void)
{
    long size = 0, res = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

#define LOGGED 300000 /* Follows, each answered: 600,000 events, 14 MB in memory */

/* LOGGED Follows and their Accepts into p; the resident growth, KiB. */
static long log_many(struct probes *p)
{
    long before = resident_kib();
    for (uint64_t i = 0; i < LOGGED; i++) {
        probes_follow_sent(p, i, 1000 + i);
        probes_answer(p, i, 1, 2000 + i);
    }
    return resident_kib() - before;
}

static void test_log_spool(void)
{
    char dir[] = "/tmp/flood-probes-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a folder for the spooled log");
    struct probes *mem = probes_new(), *disk = probes_new();
    probes_log_on(mem);
    probes_log_on(disk);
    probes_follow_sent(disk, UINT64_C(1) << 40, 5); /* logged before the spool: moved into it */
    CHECK(probes_log_spool(disk, dir) == 0, "the log goes to a file in the folder");
    CHECK(probes_log_spool(disk, dir) == -1, "a second spool is refused");
    long grew_mem = log_many(mem);
    long grew_disk = log_many(disk);
    /* both hold the same table of probes; the log alone is 14 MB in memory */
    CHECK(grew_disk + 8 * 1024 < grew_mem,
          "spooled, %d Follows and Accepts grew the resident set by %ld KiB; in memory by %ld",
          LOGGED, grew_disk, grew_mem);
    size_t n = 0;
    struct probes_event *ev = probes_log_copy(disk, &n);
    size_t bad = n == 2 * LOGGED + 1 && ev[0].seq == UINT64_C(1) << 40 && ev[0].us == 5 &&
                         ev[0].kind == PROBES_FOLLOW
                     ? 0
                     : 1;
    for (size_t i = 1; !bad && i < n; i++) {
        uint64_t k = (i - 1) / 2;
        int answer = (i - 1) % 2;
        bad += ev[i].seq != k || ev[i].us != (answer ? 2000 : 1000) + k ||
               ev[i].kind != (answer ? PROBES_ACCEPT : PROBES_FOLLOW);
    }
    CHECK(bad == 0, "the spooled log reads back whole and in order (%zu events)", n);
    free(ev);
    probes_free(mem);
    probes_free(disk);
    rmdir(dir);
}

int main(void)
{
    test_log_spool();
    test_take_concurrent();
    struct probes *p = probes_new();
    struct probes_totals t;
    struct hist *h = hist_new();

    probes_follow_sent(p, 7, 1000000);
    probes_follow_sent(p, 8, 1000000);
    probes_follow_sent(p, 9, 2000000);
    probes_snapshot(p, &t, NULL);
    CHECK(t.sent == 3 && t.open == 3 && t.accepted == 0, "three probes open");

    CHECK(probes_answer(p, 7, 1, 1250000) == 1, "an Accept of Follow 7 closes its probe");
    CHECK(probes_answer(p, 7, 1, 1300000) == 0, "a second Accept of Follow 7 does not");
    CHECK(probes_answer(p, 8, 0, 1500000) == 1, "a Reject of Follow 8 closes its probe");
    CHECK(probes_answer(p, 99, 1, 1500000) == 0, "an Accept of an unknown Follow does not");
    probes_follow_sent(p, 9, 5000000); /* registered twice: the first time is kept */
    CHECK(probes_answer(p, 9, 1, 2500000) == 1, "Follow 9 closes");

    probes_snapshot(p, &t, h);
    CHECK(t.sent == 3 && t.accepted == 2 && t.rejected == 1 && t.duplicates == 1 &&
              t.unknown == 1 && t.open == 0,
          "totals: 3 sent, 2 accepted, 1 rejected, 1 duplicate, 1 unknown, 0 open");
    CHECK(hist_count(h) == 2, "two Follow-to-Accept samples (rejects are not timed)");
    CHECK(hist_min(h) == 250000 && hist_max(h) == 500000,
          "samples are 250 ms and 500 ms (the first send time of Follow 9)");
    CHECK(probes_answer(p, 10, 1, 1) == 0 && (probes_snapshot(p, &t, NULL), t.unknown == 2),
          "unknown answers are counted");

    /* growth and threads: 4 x 20,000 probes, half of them answered after 5 ms */
    struct probes *q = probes_new();
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){q, (uint64_t)i * 1000000};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    hist_reset(h);
    probes_snapshot(q, &t, h);
    CHECK(t.sent == THREADS * PER_THREAD && t.accepted == THREADS * PER_THREAD / 2 &&
              t.open == THREADS * PER_THREAD / 2,
          "threads: %llu sent, %llu accepted, %llu open", (unsigned long long)t.sent,
          (unsigned long long)t.accepted, (unsigned long long)t.open);
    CHECK(hist_count(h) == THREADS * PER_THREAD / 2 && hist_min(h) == 5000 && hist_max(h) == 5000,
          "every threaded sample is 5 ms");
    CHECK(probes_answer(q, 1, 1, 1000) == 1 && probes_answer(q, 3000000 + 19999, 1, 1000) == 1,
          "odd probes are still open after growth");

    hist_free(h);
    probes_free(p);
    probes_free(q);
    return check_done();
}
