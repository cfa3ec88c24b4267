/* tests/unit/test_probes.c: Follow-to-Accept probes: open, close, refused, duplicates,
 * unknown ones, the histogram, growth past the first table, threads, deletion from the map
 * against a model, the map as big as the open probes only, and the event log spooled to a
 * file (a long run's Follows off the resident set, every event read back in order). */
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

/* A Follow whose POST was refused closes as refused: no longer open, its later Accept a
 * duplicate, in the log as its own event. */
static void test_refused(void)
{
    struct probes *p = probes_new();
    probes_log_on(p);
    struct probes_totals t;
    for (uint64_t s = 1; s <= 3; s++)
        probes_follow_sent(p, s, 1000);
    CHECK(probes_follow_refused(p, 2, 2000) == 1, "Follow 2 refused closes its probe");
    CHECK(probes_follow_refused(p, 2, 2100) == 0, "refused again: nothing open to close");
    CHECK(probes_follow_refused(p, 77, 2100) == 0, "an unknown Follow refused: nothing");
    CHECK(probes_answer(p, 2, 1, 9000) == 0, "an Accept of the refused Follow closes nothing");
    probes_follow_sent(p, 2, 3000); /* registered again after it closed: ignored */
    CHECK(probes_answer(p, 1, 1, 5000) == 1, "Follow 1 accepted");
    probes_snapshot(p, &t, NULL);
    CHECK(t.sent == 3 && t.accepted == 1 && t.refused == 1 && t.open == 1 && t.duplicates == 1 &&
              t.unknown == 0,
          "3 sent = 1 accepted + 1 refused + 1 open; the late Accept a duplicate");
    size_t n = 0;
    struct probes_event *ev = probes_log_copy(p, &n);
    int refused_logged = 0;
    for (size_t i = 0; i < n; i++)
        refused_logged += ev[i].kind == PROBES_REFUSED && ev[i].seq == 2 && ev[i].us == 2000;
    CHECK(n == 6 && refused_logged == 1, "the log: 3 Follows, 1 refusal, 2 answers (%zu events)",
          n);
    free(ev);
    probes_free(p);
}

/* Random sends, answers and refusals over a small seq range, against a model of each seq's
 * state: every return and every total as the model says, through many deletions from a
 * map that grows and holds long probe runs. */
static void test_model(void)
{
    enum { N = 60000, OPS = 400000 };
    static unsigned char st[N]; /* 0 never sent, 1 open, 2 closed */
    static uint64_t sent_at[N];
    struct probes *p = probes_new();
    struct probes_totals m = {0}, t;
    uint64_t x = 88172645463325252ULL, bad = 0, f2a_sum = 0;
    struct hist *h = hist_new();
    for (uint64_t i = 0; i < OPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t seq = (x >> 8) % N * 7919; /* spread: neighbouring seqs hash apart */
        size_t k = (size_t)(seq / 7919);
        uint64_t now = 1000000 + i;
        switch ((x >> 40) % 4) {
        case 0:
        case 1:
            probes_follow_sent(p, seq, now);
            if (st[k] == 0) {
                st[k] = 1;
                sent_at[k] = now;
                m.sent++;
                m.open++;
            }
            break;
        case 2: {
            int acc = (int)(x >> 50 & 1), rc = probes_answer(p, seq, acc, now + 10);
            int want = st[k] == 1;
            if (st[k] == 1) {
                st[k] = 2;
                m.open--;
                if (acc) {
                    m.accepted++;
                    f2a_sum += now + 10 - sent_at[k];
                } else
                    m.rejected++;
            } else if (st[k] == 2) {
                m.duplicates++;
            } else {
                m.unknown++;
            }
            bad += rc != want;
            break;
        }
        default: {
            int rc = probes_follow_refused(p, seq, now), want = st[k] == 1;
            if (st[k] == 1) {
                st[k] = 2;
                m.open--;
                m.refused++;
            }
            bad += rc != want;
        }
        }
    }
    probes_snapshot(p, &t, h);
    CHECK(bad == 0, "every answer and refusal returned what the model says (%llu did not)",
          (unsigned long long)bad);
    CHECK(t.sent == m.sent && t.accepted == m.accepted && t.rejected == m.rejected &&
              t.refused == m.refused && t.open == m.open && t.duplicates == m.duplicates &&
              t.unknown == m.unknown,
          "totals as the model's: sent %llu accepted %llu rejected %llu refused %llu open %llu",
          (unsigned long long)m.sent, (unsigned long long)m.accepted,
          (unsigned long long)m.rejected, (unsigned long long)m.refused,
          (unsigned long long)m.open);
    CHECK(t.sent == t.accepted + t.rejected + t.refused + t.open, "sent = closed + open");
    CHECK(hist_count(h) == m.accepted, "one Follow-to-Accept sample an Accept");
    /* the seqs the model has open are open in the map, every one */
    uint64_t still = 0;
    for (size_t k = 0; k < N; k++)
        if (st[k] == 1)
            still += probes_answer(p, (uint64_t)k * 7919, 1, 2000000 + OPS) == 1;
    CHECK(still == m.open && m.open > 0, "each of the %llu open probes found after the deletions",
          (unsigned long long)m.open);
    (void)f2a_sum;
    hist_free(h);
    probes_free(p);
}

/* A long run whose Follows are answered or refused as they go keeps a map as big as its open
 * probes: a million Follows, at most 100 open at a time, in under 1 MiB (the closed bitmap
 * is 128 KiB a million seqs; the map kept every Follow before, 32 MiB here). */
static void test_bounded(void)
{
    struct probes *p = probes_new();
    for (uint64_t s = 0; s < 1000000; s++) {
        probes_follow_sent(p, s, s);
        if (s >= 100) {
            if (s % 3)
                (void)probes_answer(p, s - 100, 1, s);
            else
                (void)probes_follow_refused(p, s - 100, s);
        }
    }
    struct probes_totals t;
    probes_snapshot(p, &t, NULL);
    size_t bytes = probes_footprint(p);
    CHECK(t.open == 100 && bytes < 1024 * 1024,
          "a million Follows, 100 open: %zu bytes kept (%llu open)", bytes,
          (unsigned long long)t.open);
    probes_free(p);
}

int main(void)
{
    test_refused();
    test_model();
    test_bounded();
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
