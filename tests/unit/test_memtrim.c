/* Unit tests of flood/core/memtrim.c: what a burst freed leaves the resident set once the
 * trim thread has run (without it malloc keeps it: the high water of the burst), the thread
 * counts its trims and stops at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/memtrim.h"
#include "tests/check.h"

#define BLOCKS 40000 /* of 1,000 bytes: a 40 MB burst */
#define KEEP   64    /* one block in KEEP stays: the arena cannot shrink from its top */

static void *blocks[BLOCKS];

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

/* On a thread of its own (an arena of its own, as the sender's): the burst, then all but
 * one block in KEEP freed. */
static void *burst(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(1000);
        if (blocks[i])
            memset(blocks[i], (int)(i & 0xff), 1000);
    }
    for (size_t i = 0; i < BLOCKS; i++)
        if (i % KEEP) {
            free(blocks[i]);
            blocks[i] = NULL;
        }
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1 /* ASan's allocator has arenas of its own: malloc_trim does not reach them */
#else
#define UNDER_ASAN 0
#endif

int main(void)
{
    if (UNDER_ASAN) {
        struct memtrim *t = memtrim_start(20);
        for (int i = 0; i < 100 && memtrim_count(t) < 2; i++)
            sleep_ms(20);
        CHECK(t && memtrim_count(t) >= 2, "the trim thread runs (%lu times)", memtrim_count(t));
        memtrim_stop(t);
        CHECK(1, "the resident set after a burst # SKIP under AddressSanitizer");
        return check_done();
    }
    long base = resident_kib();
    pthread_t th;
    CHECK(pthread_create(&th, NULL, burst, NULL) == 0 && pthread_join(th, NULL) == 0,
          "a 40 MB burst on a thread, then all but one block in %d freed", KEEP);
    long after_burst = resident_kib();
    sleep_ms(100);
    long kept = resident_kib();
    CHECK(kept - base > 30 * 1024,
          "without the trim malloc keeps the burst: %ld KiB resident above "
          "the start, 0.1 s after the frees",
          kept - base);
    struct memtrim *t = memtrim_start(20);
    CHECK(t != NULL, "the trim thread starts (every 20 ms)");
    for (int i = 0; i < 100 && memtrim_count(t) < 3; i++)
        sleep_ms(20);
    long trimmed = resident_kib();
    CHECK(memtrim_count(t) >= 3, "it trimmed %lu times", memtrim_count(t));
    CHECK(kept - trimmed > 25 * 1024,
          "with it the freed burst leaves the resident set: %ld KiB -> %ld KiB above the start",
          kept - base, trimmed - base);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    memtrim_stop(t);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long stop_ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
    CHECK(stop_ms < 1000, "it stops at once (%ld ms)", stop_ms);
    CHECK(memtrim_start(0) == NULL && memtrim_count(NULL) == 0, "no thread for a period of 0");
    memtrim_stop(NULL);
    size_t kept_blocks = 0;
    for (size_t i = 0; i < BLOCKS; i += KEEP) {
        kept_blocks += blocks[i] && ((unsigned char *)blocks[i])[999] == (i & 0xff);
        free(blocks[i]);
    }
    CHECK(kept_blocks == BLOCKS / KEEP + (BLOCKS % KEEP != 0),
          "the blocks still in use are whole (%zu)", kept_blocks);
    (void)after_burst;
    return check_done();
}
