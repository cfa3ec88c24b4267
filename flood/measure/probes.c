/* flood/measure/probes.c: Follow-to-Accept probes (see probes.h). An open-addressing hash map from
 * seq to send time behind one mutex holds the open probes only: one answered, or whose POST
 * was refused, leaves the map (backward-shift deletion) and sets its bit in a bitmap by seq
 * (one bit an activity, in chunks made as seqs come), so that a second Accept of the same
 * Follow is told apart from an unknown one. A long run's map is as big as its open Follows,
 * not as all it sent: at 120 Follows a second an hour of them kept 16 bytes each, and the
 * map doubled to 16 MB (make soak). */
#include "flood/measure/probes.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/core/fsutil.h"
#include "sign/err.h"

#define PROBE_EMPTY UINT64_MAX

struct probe_slot {
    uint64_t seq;     /* PROBE_EMPTY when free */
    uint64_t sent_us; /* an open Follow's send time */
};

/* The closed bitmap: a chunk covers 2^CLOSED_SHIFT seqs (128 KiB of bits). */
#define CLOSED_SHIFT 20
#define CLOSED_WORDS ((size_t)1 << (CLOSED_SHIFT - 6))

struct probes {
    pthread_mutex_t lock;
    struct probe_slot *slots;
    size_t cap, used;  /* cap is a power of two; used: open probes */
    uint64_t **closed; /* by seq >> CLOSED_SHIFT: answered or refused (NULL: none there) */
    size_t n_closed;
    struct probes_totals t;
    struct hist *hist; /* Follow sent to Accept received, microseconds */
    struct hist *sec;  /* the same, since the last probes_take_second */
    struct probes_second sec_counts;
    struct probes_event *log; /* probes_log_on: every Follow and answer, in order */
    size_t n_log, cap_log;
    int logging;
    FILE *spool; /* probes_log_spool: the log in a file instead, n_log entries */
};

static void log_event(struct probes *p, uint64_t seq, uint64_t us, enum probes_event_kind kind)
{
    if (!p->logging)
        return;
    if (p->spool) {
        struct probes_event ev = {.seq = seq, .us = us, .kind = kind};
        if (fwrite(&ev, sizeof(ev), 1, p->spool) == 1) {
            p->n_log++;
            return;
        }
        /* the file cannot grow: what it held goes to memory, and the log stays there */
        size_t n = 0;
        struct probes_event *held = NULL;
        if (!fflush(p->spool)) {
            held = flood_xmalloc((p->n_log ? p->n_log : 1) * sizeof(*held));
            n = fs_pread_full(fileno(p->spool), held, p->n_log * sizeof(*held), 0) / sizeof(*held);
        }
        fprintf(stderr,
                "flood: probes: the Follows' log file cannot grow (%s): %zu of %zu "
                "entries kept, in memory from here on\n",
                strerror(errno), n, p->n_log);
        fclose(p->spool);
        p->spool = NULL;
        p->log = held;
        p->n_log = p->cap_log = n;
    }
    if (p->n_log == p->cap_log) {
        p->cap_log = p->cap_log ? p->cap_log * 2 : 256;
        p->log = flood_xrealloc(p->log, p->cap_log * sizeof(*p->log));
    }
    p->log[p->n_log++] = (struct probes_event){.seq = seq, .us = us, .kind = kind};
}

void probes_log_on(struct probes *p)
{
    pthread_mutex_lock(&p->lock);
    p->logging = 1;
    pthread_mutex_unlock(&p->lock);
}

int probes_log_spool(struct probes *p, const char *dir)
{
    int fd = fs_unnamed_file(dir, "follows");
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w+");
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    pthread_mutex_lock(&p->lock);
    int rc = 0;
    if (p->spool || (p->n_log && fwrite(p->log, sizeof(*p->log), p->n_log, f) != p->n_log))
        rc = -1; /* already spooled, or the entries so far did not fit */
    if (!rc) {
        free(p->log);
        p->log = NULL;
        p->cap_log = 0;
        p->spool = f;
    }
    pthread_mutex_unlock(&p->lock);
    if (rc)
        fclose(f);
    return rc;
}

struct probes_event *probes_log_copy(struct probes *p, size_t *n)
{
    pthread_mutex_lock(&p->lock);
    struct probes_event *c = flood_xmalloc((p->n_log ? p->n_log : 1) * sizeof(*c));
    if (p->spool) {
        size_t got =
            fflush(p->spool) ? 0 : fs_pread_full(fileno(p->spool), c, p->n_log * sizeof(*c), 0);
        *n = got / sizeof(*c);
        pthread_mutex_unlock(&p->lock);
        return c;
    }
    if (p->n_log)
        memcpy(c, p->log, p->n_log * sizeof(*c));
    *n = p->n_log;
    pthread_mutex_unlock(&p->lock);
    return c;
}

static size_t slot_of(uint64_t seq, size_t cap)
{
    uint64_t h = seq * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

static struct probe_slot *find(struct probe_slot *slots, size_t cap, uint64_t seq)
{
    size_t i = slot_of(seq, cap);
    while (slots[i].seq != PROBE_EMPTY && slots[i].seq != seq)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

/* Take slot i out of the map, moving back the entries of its run that hash at or before
 * it (linear probing's deletion without tombstones). */
static void erase(struct probes *p, size_t i)
{
    size_t mask = p->cap - 1, j = i;
    for (;;) {
        p->slots[i].seq = PROBE_EMPTY;
        for (;;) {
            j = (j + 1) & mask;
            if (p->slots[j].seq == PROBE_EMPTY) {
                p->used--;
                return;
            }
            size_t k = slot_of(p->slots[j].seq, p->cap);
            /* the entry at j stays where it is when its home k lies cyclically in (i, j] */
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            break;
        }
        p->slots[i] = p->slots[j];
        i = j;
    }
}

static int is_closed(const struct probes *p, uint64_t seq)
{
    uint64_t c = seq >> CLOSED_SHIFT;
    if (c >= p->n_closed || !p->closed[c])
        return 0;
    uint64_t bit = seq & (((uint64_t)1 << CLOSED_SHIFT) - 1);
    return (int)(p->closed[c][bit >> 6] >> (bit & 63) & 1);
}

/* seq's bit set (seq was registered by probes_follow_sent: the chunks grow with the run) */
static void set_closed(struct probes *p, uint64_t seq)
{
    size_t c = (size_t)(seq >> CLOSED_SHIFT);
    if (c >= p->n_closed) {
        size_t n = p->n_closed ? p->n_closed : 16;
        while (n <= c)
            n *= 2;
        p->closed = flood_xrealloc(p->closed, n * sizeof(*p->closed));
        memset(p->closed + p->n_closed, 0, (n - p->n_closed) * sizeof(*p->closed));
        p->n_closed = n;
    }
    if (!p->closed[c])
        p->closed[c] = flood_xcalloc(CLOSED_WORDS, sizeof(uint64_t));
    uint64_t bit = seq & (((uint64_t)1 << CLOSED_SHIFT) - 1);
    p->closed[c][bit >> 6] |= (uint64_t)1 << (bit & 63);
}

/* Close the open probe in slot s (its send time read first) */
static void close_slot(struct probes *p, struct probe_slot *s)
{
    set_closed(p, s->seq);
    erase(p, (size_t)(s - p->slots));
    p->t.open--;
}

static struct probe_slot *new_table(size_t cap)
{
    struct probe_slot *s = flood_xmalloc(cap * sizeof(*s));
    for (size_t i = 0; i < cap; i++)
        s[i].seq = PROBE_EMPTY;
    return s;
}

struct probes *probes_new(void)
{
    struct probes *p = flood_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    p->cap = 1024;
    p->slots = new_table(p->cap);
    p->hist = hist_new();
    p->sec = hist_new();
    return p;
}

void probes_free(struct probes *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p->slots);
    for (size_t c = 0; c < p->n_closed; c++)
        free(p->closed[c]);
    free(p->closed);
    free(p->log);
    if (p->spool)
        fclose(p->spool);
    hist_free(p->hist);
    hist_free(p->sec);
    free(p);
}

static void grow(struct probes *p)
{
    size_t cap = p->cap * 2;
    struct probe_slot *s = new_table(cap);
    for (size_t i = 0; i < p->cap; i++)
        if (p->slots[i].seq != PROBE_EMPTY)
            *find(s, cap, p->slots[i].seq) = p->slots[i];
    free(p->slots);
    p->slots = s;
    p->cap = cap;
}

void probes_follow_sent(struct probes *p, uint64_t seq, uint64_t mono_us)
{
    if (seq == PROBE_EMPTY)
        return;
    pthread_mutex_lock(&p->lock);
    if ((p->used + 1) * 4 > p->cap * 3)
        grow(p);
    struct probe_slot *s = find(p->slots, p->cap, seq);
    if (s->seq != PROBE_EMPTY || is_closed(p, seq)) {
        /* the same seq registered again: keep the first send time */
        pthread_mutex_unlock(&p->lock);
        return;
    }
    s->seq = seq;
    log_event(p, seq, mono_us, PROBES_FOLLOW);
    p->used++;
    p->t.sent++;
    p->t.open++;
    s->sent_us = mono_us;
    pthread_mutex_unlock(&p->lock);
}

int probes_follow_refused(struct probes *p, uint64_t seq, uint64_t mono_us)
{
    int closed = 0;
    pthread_mutex_lock(&p->lock);
    struct probe_slot *s = seq == PROBE_EMPTY ? NULL : find(p->slots, p->cap, seq);
    if (s && s->seq != PROBE_EMPTY) {
        log_event(p, seq, mono_us, PROBES_REFUSED);
        close_slot(p, s);
        p->t.refused++;
        closed = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return closed;
}

int probes_answer(struct probes *p, uint64_t seq, int accepted, uint64_t mono_us)
{
    int closed = 0;
    pthread_mutex_lock(&p->lock);
    log_event(p, seq, mono_us, accepted ? PROBES_ACCEPT : PROBES_REJECT);
    struct probe_slot *s = seq == PROBE_EMPTY ? NULL : find(p->slots, p->cap, seq);
    if (!s || s->seq == PROBE_EMPTY) {
        if (s && is_closed(p, seq))
            p->t.duplicates++;
        else
            p->t.unknown++;
    } else {
        uint64_t sent = s->sent_us;
        close_slot(p, s);
        if (accepted) {
            uint64_t us = mono_us > sent ? mono_us - sent : 0;
            p->t.accepted++;
            p->sec_counts.accepted++;
            hist_record(p->hist, us);
            hist_record(p->sec, us);
        } else {
            p->t.rejected++;
            p->sec_counts.rejected++;
        }
        closed = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return closed;
}

size_t probes_footprint(struct probes *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->cap * sizeof(struct probe_slot) + p->n_closed * sizeof(*p->closed);
    for (size_t c = 0; c < p->n_closed; c++)
        if (p->closed[c])
            n += CLOSED_WORDS * sizeof(uint64_t);
    pthread_mutex_unlock(&p->lock);
    return n;
}

void probes_snapshot(struct probes *p, struct probes_totals *t, struct hist *h)
{
    pthread_mutex_lock(&p->lock);
    if (t)
        *t = p->t;
    if (h)
        hist_merge(h, p->hist);
    pthread_mutex_unlock(&p->lock);
}

void probes_take_second(struct probes *p, struct hist **h, struct probes_second *sec)
{
    pthread_mutex_lock(&p->lock);
    struct hist *full = p->sec;
    p->sec = *h;
    *h = full;
    if (sec)
        *sec = p->sec_counts;
    memset(&p->sec_counts, 0, sizeof(p->sec_counts));
    pthread_mutex_unlock(&p->lock);
}

void probes_peek_second(struct probes *p, struct probes_second *sec, struct hist *h)
{
    pthread_mutex_lock(&p->lock);
    if (sec)
        *sec = p->sec_counts;
    if (h)
        hist_merge(h, p->sec);
    pthread_mutex_unlock(&p->lock);
}
