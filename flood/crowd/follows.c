/* flood/crowd/follows.c: follow state of the crowd's actors. Most actors of a big crowd are
 * never followed, so entries live in a hash table keyed by the actor's global index and
 * are made on first use. One mutex: follows change at the rate of Follow deliveries. */
#include "flood/crowd/follows.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "sign/err.h"

struct strlist {
    char **v;
    size_t n, cap;
};

struct entry {
    uint64_t idx;
    struct strlist followers, following;
    struct entry *next;
};

struct follows {
    pthread_mutex_t lock;
    struct entry **buckets;
    size_t n_buckets;
};

struct follows *follows_new(uint64_t n_actors)
{
    struct follows *f = flood_xcalloc(1, sizeof(*f));
    pthread_mutex_init(&f->lock, NULL);
    f->n_buckets = 1024;
    while (f->n_buckets < n_actors / 8 && f->n_buckets < (1u << 20))
        f->n_buckets <<= 1;
    f->buckets = flood_xcalloc(f->n_buckets, sizeof(*f->buckets));
    return f;
}

static void strlist_free(struct strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

void follows_free(struct follows *f)
{
    if (!f)
        return;
    for (size_t b = 0; b < f->n_buckets; b++) {
        struct entry *e = f->buckets[b];
        while (e) {
            struct entry *next = e->next;
            strlist_free(&e->followers);
            strlist_free(&e->following);
            free(e);
            e = next;
        }
    }
    free(f->buckets);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* The entry of idx; made when create is set, else NULL when absent. Lock held. */
static struct entry *find(struct follows *f, uint64_t idx, int create)
{
    size_t b = (size_t)((idx * 0x9E3779B97F4A7C15ull) >> 32) & (f->n_buckets - 1);
    for (struct entry *e = f->buckets[b]; e; e = e->next)
        if (e->idx == idx)
            return e;
    if (!create)
        return NULL;
    struct entry *e = flood_xcalloc(1, sizeof(*e));
    e->idx = idx;
    e->next = f->buckets[b];
    f->buckets[b] = e;
    return e;
}

static ssize_t strlist_find(const struct strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s))
            return (ssize_t)i;
    return -1;
}

static int list_add(struct follows *f, uint64_t idx, int followers, const char *who)
{
    pthread_mutex_lock(&f->lock);
    struct entry *e = find(f, idx, 1);
    struct strlist *l = followers ? &e->followers : &e->following;
    int added = 0;
    if (strlist_find(l, who) < 0 && l->n < FOLLOWS_MAX_PER_ACTOR) {
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 4;
            l->v = flood_xrealloc(l->v, l->cap * sizeof(*l->v));
        }
        l->v[l->n++] = flood_xstrdup(who);
        added = 1;
    }
    pthread_mutex_unlock(&f->lock);
    return added;
}

static int list_remove(struct follows *f, uint64_t idx, int followers, const char *who)
{
    pthread_mutex_lock(&f->lock);
    struct entry *e = find(f, idx, 0);
    int removed = 0;
    if (e) {
        struct strlist *l = followers ? &e->followers : &e->following;
        ssize_t i = strlist_find(l, who);
        if (i >= 0) {
            free(l->v[i]);
            memmove(&l->v[i], &l->v[i + 1], (l->n - (size_t)i - 1) * sizeof(*l->v));
            l->n--;
            removed = 1;
        }
    }
    pthread_mutex_unlock(&f->lock);
    return removed;
}

int follows_add(struct follows *f, uint64_t idx, const char *remote_actor)
{
    return list_add(f, idx, 1, remote_actor);
}

int follows_remove(struct follows *f, uint64_t idx, const char *remote_actor)
{
    return list_remove(f, idx, 1, remote_actor);
}

int following_add(struct follows *f, uint64_t idx, const char *remote_actor)
{
    return list_add(f, idx, 0, remote_actor);
}

int following_remove(struct follows *f, uint64_t idx, const char *remote_actor)
{
    return list_remove(f, idx, 0, remote_actor);
}

int follows_has(struct follows *f, uint64_t idx, const char *remote_actor)
{
    pthread_mutex_lock(&f->lock);
    struct entry *e = find(f, idx, 0);
    int has = e && strlist_find(&e->followers, remote_actor) >= 0;
    pthread_mutex_unlock(&f->lock);
    return has;
}

char **follows_list(struct follows *f, uint64_t idx, int followers, size_t *n)
{
    pthread_mutex_lock(&f->lock);
    struct entry *e = find(f, idx, 0);
    const struct strlist *l = e ? (followers ? &e->followers : &e->following) : NULL;
    size_t count = l ? l->n : 0;
    char **out = flood_xcalloc(count ? count : 1, sizeof(*out));
    for (size_t i = 0; i < count; i++)
        out[i] = flood_xstrdup(l->v[i]);
    pthread_mutex_unlock(&f->lock);
    *n = count;
    return out;
}

void follows_list_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}
