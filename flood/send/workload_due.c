/* flood/send/workload_due.c: what the crowd serves follows the intended send times, not the
 * time an activity was built. The signers build activities ahead of their time (a second by
 * default, minutes or the whole run with --presign), and building an Update(Note), a
 * Delete(Note) or an Update(Person) decides the workload's next choices at once; but the
 * note served at its id shows the edit, answers 410, and the actor shows its new revision
 * and key only from that activity's intended time on: a target fetching them in between
 * sees what was sent so far. Each such activity is kept with its time and the one before
 * it on the same object until that time has come, so the state at any instant is a walk
 * back from the latest to the first one due (or no longer kept). The latest Update built
 * of each note is kept here too, beside the records.
 * Everything here runs with w->lock held. */
#include <stdlib.h>

#include "flood/core/clock.h"
#include "flood/send/workload_int.h"

/* The map's key kinds: an update's own seq, a deleted Create's seq, an update-actor's seq */
#define DUE_UPDATE (UINT64_C(1) << 60)
#define DUE_DELETE (UINT64_C(2) << 60)
#define DUE_ACTOR  (UINT64_C(3) << 60)

/* A slot of a table of cap (a power of two) for key: splitmix64's finalizer. */
static size_t due_slot(uint64_t key, size_t cap)
{
    uint64_t z = key + UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return (size_t)((z ^ (z >> 31)) & (cap - 1));
}

/* ---- edited notes ---------------------------------------------------------------------- */

/* A chunk's edits follow its records (CHUNK_BYTES), kept where the records are: in the
 * state folder's file, so a long run's edited notes do not grow its resident set. */
static uint32_t *edit_slot(struct workload *w, uint64_t seq)
{
    size_t c = (size_t)(seq >> CHUNK_SHIFT);
    if (c >= w->n_chunks || !w->chunks[c]) /* never built */
        return NULL;
    uint32_t *edits = (uint32_t *)(w->chunks[c] + CHUNK_LEN);
    return &edits[seq & (CHUNK_LEN - 1)];
}

void workload_edit_put(struct workload *w, uint64_t seq, uint64_t update)
{
    uint32_t *d = edit_slot(w, seq);
    /* an Update names a Create at most a uint32_t back (its record's ref) */
    if (d && update > seq && update - seq <= UINT32_MAX)
        *d = (uint32_t)(update - seq);
}

int workload_edit_of(const struct workload *w, uint64_t seq, uint64_t *update)
{
    uint32_t *d = edit_slot((struct workload *)w, seq);
    if (!d || !*d)
        return -1;
    *update = seq + *d;
    return 0;
}

/* ---- the served state's times ------------------------------------------------------ */

/* The slot of key, or of the empty place it would take. */
static size_t due_find(const struct workload *w, uint64_t key)
{
    size_t j = due_slot(key, w->due_cap);
    while (w->due_key[j] && w->due_key[j] != key + 1)
        j = (j + 1) & (w->due_cap - 1);
    return j;
}

/* Empty slot j, moving back the entries after it whose probe passed it. */
static void due_remove(struct workload *w, size_t j)
{
    size_t mask = w->due_cap - 1;
    w->due_key[j] = 0;
    w->n_due--;
    for (size_t k = (j + 1) & mask; w->due_key[k]; k = (k + 1) & mask) {
        size_t home = due_slot(w->due_key[k] - 1, w->due_cap);
        /* it stays when its home lies cyclically in (j, k] */
        if (j <= k ? (home > j && home <= k) : (home > j || home <= k))
            continue;
        w->due_key[j] = w->due_key[k];
        w->due_val[j] = w->due_val[k];
        w->due_key[k] = 0;
        j = k;
    }
}

/* Drop the entries whose time has come: a walk back treats a missing entry as sent, and
 * every reader asks as of the wall clock's now, which only grows. So what is kept is what
 * was built ahead and not yet due (the signers' look-ahead, or --presign's window). */
static void due_prune(struct workload *w, int64_t now_ns)
{
    while (w->n_ring) {
        struct workload_due_put *p = &w->due_ring[w->due_head];
        if (p->at_ns > now_ns)
            break;
        size_t j = due_find(w, p->key);
        if (w->due_key[j] && w->due_val[j].at_ns <= now_ns)
            due_remove(w, j);
        w->due_head = (w->due_head + 1) & (w->due_ring_cap - 1);
        w->n_ring--;
    }
}

static void due_put(struct workload *w, uint64_t key, uint64_t prev, int64_t at_ns)
{
    int64_t now_ns = clock_wall_ns();
    if (w->due_cap)
        due_prune(w, now_ns);
    if (at_ns <= now_ns) /* due already: as if kept and dropped */
        return;
    if ((w->n_due + 1) * 2 > w->due_cap) {
        size_t cap = w->due_cap ? w->due_cap * 2 : 256;
        uint64_t *k = flood_xcalloc(cap, sizeof(*k));
        struct workload_due *v = flood_xcalloc(cap, sizeof(*v));
        for (size_t i = 0; i < w->due_cap; i++) {
            if (!w->due_key[i])
                continue;
            size_t j = due_slot(w->due_key[i] - 1, cap);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = w->due_key[i];
            v[j] = w->due_val[i];
        }
        free(w->due_key);
        free(w->due_val);
        w->due_key = k;
        w->due_val = v;
        w->due_cap = cap;
    }
    if (w->n_ring == w->due_ring_cap) { /* the ring doubled, its entries from 0 */
        size_t cap = w->due_ring_cap ? w->due_ring_cap * 2 : 256;
        struct workload_due_put *r = flood_xcalloc(cap, sizeof(*r));
        for (size_t i = 0; i < w->n_ring; i++)
            r[i] = w->due_ring[(w->due_head + i) & (w->due_ring_cap - 1)];
        free(w->due_ring);
        w->due_ring = r;
        w->due_ring_cap = cap;
        w->due_head = 0;
    }
    w->due_ring[(w->due_head + w->n_ring) & (w->due_ring_cap - 1)] =
        (struct workload_due_put){.key = key, .at_ns = at_ns};
    w->n_ring++;
    size_t j = due_find(w, key);
    if (!w->due_key[j])
        w->n_due++;
    w->due_key[j] = key + 1;
    w->due_val[j].prev = prev;
    w->due_val[j].at_ns = at_ns;
}

/* The entry of key: 0 and *v, or -1. */
static int due_get(const struct workload *w, uint64_t key, struct workload_due *v)
{
    if (!w->due_cap)
        return -1;
    size_t j = due_find(w, key);
    if (!w->due_key[j])
        return -1;
    *v = w->due_val[j];
    return 0;
}

void workload_due_note(struct workload *w, int deleted, uint64_t create, uint64_t seq,
                       int64_t when_ns)
{
    if (deleted) {
        due_put(w, DUE_DELETE | create, seq + 1, when_ns);
        return;
    }
    uint64_t before;
    int had = workload_edit_of(w, create, &before) == 0;
    due_put(w, DUE_UPDATE | seq, had ? before + 1 : 0, when_ns);
    workload_edit_put(w, create, seq);
}

void workload_due_actor(struct workload *w, uint32_t idx, uint64_t seq, int64_t when_ns)
{
    due_put(w, DUE_ACTOR | seq, w->revs[idx].last, when_ns);
    w->revs[idx].last = seq + 1;
}

int workload_due_edit(const struct workload *w, uint64_t create, int64_t now_ns, uint64_t *update)
{
    uint64_t u;
    if (workload_edit_of(w, create, &u))
        return -1;
    for (uint64_t at = u + 1; at;) {
        struct workload_due v;
        if (due_get(w, DUE_UPDATE | (at - 1), &v) || v.at_ns <= now_ns) {
            *update = at - 1; /* sent by now (or not kept: as built) */
            return 0;
        }
        at = v.prev;
    }
    return -1; /* no edit sent yet */
}

int workload_due_deleted(const struct workload *w, uint64_t create, uint32_t persona_op,
                         int64_t now_ns)
{
    struct workload_due v;
    if (!(persona_op & F_DELETED))
        return 0;
    return due_get(w, DUE_DELETE | create, &v) || v.at_ns <= now_ns;
}

uint64_t workload_due_actor_at(const struct workload *w, uint32_t idx, int64_t now_ns)
{
    uint64_t at = w->revs[idx].last;
    while (at) {
        struct workload_due v;
        if (due_get(w, DUE_ACTOR | (at - 1), &v) || v.at_ns <= now_ns)
            return at;
        at = v.prev;
    }
    return 0;
}

void workload_due_free(struct workload *w)
{
    free(w->due_key);
    free(w->due_val);
    free(w->due_ring);
}
