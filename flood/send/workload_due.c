/* flood/send/workload_due.c: what the crowd serves follows the intended send times, not the
 * time an activity was built. The signers build activities ahead of their time (a second by
 * default, minutes or the whole run with --presign), and building an Update(Note), a
 * Delete(Note) or an Update(Person) decides the workload's next choices at once; but the
 * note served at its id shows the edit, answers 410, and the actor shows its new revision
 * and key only from that activity's intended time on: a target fetching them in between
 * sees what was sent so far. Each such activity is kept with its time and the one before
 * it on the same object, so the state at any instant is a walk back from the latest. The
 * map of edited notes (the latest Update built of each) lives here too.
 * Everything here runs with w->lock held. */
#include <stdlib.h>

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

void workload_edit_put(struct workload *w, uint64_t seq, uint64_t update)
{
    if ((w->n_edit + 1) * 2 > w->edit_cap) {
        size_t cap = w->edit_cap ? w->edit_cap * 2 : 256;
        uint64_t *k = flood_xcalloc(cap, sizeof(*k)), *v = flood_xcalloc(cap, sizeof(*v));
        for (size_t i = 0; i < w->edit_cap; i++) {
            if (!w->edit_key[i])
                continue;
            size_t j = due_slot(w->edit_key[i] - 1, cap);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = w->edit_key[i];
            v[j] = w->edit_val[i];
        }
        free(w->edit_key);
        free(w->edit_val);
        w->edit_key = k;
        w->edit_val = v;
        w->edit_cap = cap;
    }
    size_t j = due_slot(seq, w->edit_cap);
    while (w->edit_key[j] && w->edit_key[j] != seq + 1)
        j = (j + 1) & (w->edit_cap - 1);
    if (!w->edit_key[j])
        w->n_edit++;
    w->edit_key[j] = seq + 1;
    w->edit_val[j] = update;
}

int workload_edit_of(const struct workload *w, uint64_t seq, uint64_t *update)
{
    if (!w->edit_cap)
        return -1;
    for (size_t j = due_slot(seq, w->edit_cap);; j = (j + 1) & (w->edit_cap - 1)) {
        if (!w->edit_key[j])
            return -1;
        if (w->edit_key[j] == seq + 1) {
            *update = w->edit_val[j];
            return 0;
        }
    }
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

static void due_put(struct workload *w, uint64_t key, uint64_t prev, int64_t at_ns)
{
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
}
