/* Unit tests of what a long run keeps: flood/send/workload_spool.c's records (16 bytes an
 * activity, kept for the whole run) leave the resident set once older than the newest
 * chunks when the run has a state folder, every record still reads back as written, the
 * file has no name in the folder and goes with the workload; without a state folder they
 * are memory; each note's latest edit kept beside the records. And the follow state's
 * events (workload_state.c): one a pair, the newest, however many Follows and Undos the run
 * sends. And the served state's times (workload_due.c): only the Updates and Deletes still
 * ahead of the clock are kept, and what is served as of each one's time is still right. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/core/clock.h"
#include "flood/send/workload_int.h"
#include "tests/check.h"

#define CHUNKS 16 /* 16 MiB of records */

static struct crowd crowd_of(int instances, int actors)
{
    struct crowd c;
    memset(&c, 0, sizeof(c));
    c.opts.instances = instances;
    c.opts.actors = actors;
    c.wf.instances = instances;
    c.wf.actors = actors;
    c.wf.domain_template = "flood%d.test";
    c.wf.scheme = "https";
    c.wf.version = "0";
    return c;
}

static struct persona alice = {"acct:alice@target.test",
                               "https://target.test/users/alice",
                               "https://target.test/users/alice/inbox",
                               "https://target.test/inbox",
                               NULL,
                               0};

/* The resident set, KiB (/proc/self/statm's second field, in pages). */
static long resident_kib(void)
{
    long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' || (e->d_name[1] && (e->d_name[1] != '.' || e->d_name[2]));
    closedir(d);
    return n;
}

/* Write CHUNKS chunks of records with a pattern of seq; the resident growth in *grew_kib.
 * Then read every one back: the records that differ from the pattern. */
static size_t fill_and_check(struct workload *w, long *grew_kib)
{
    long before = resident_kib();
    uint64_t n = (uint64_t)CHUNKS * CHUNK_LEN;
    pthread_mutex_lock(&w->lock);
    for (uint64_t s = 0; s < n; s++) {
        struct entry *e = workload_entry(w, s, 1);
        e->actor_idx = (uint32_t)(s * 7 + 1);
        e->ref = (uint32_t)(s ^ 0x5a5a5a5a);
        e->t_off = (int32_t)(s / 1000);
        e->persona_op = (uint32_t)((s % 17 + 1) << PERSONA_BITS);
    }
    pthread_mutex_unlock(&w->lock);
    *grew_kib = resident_kib() - before;
    size_t bad = 0;
    pthread_mutex_lock(&w->lock);
    for (uint64_t s = 0; s < n; s++) {
        const struct entry *e = workload_entry(w, s, 0);
        bad += !e || e->actor_idx != (uint32_t)(s * 7 + 1) ||
               e->ref != (uint32_t)(s ^ 0x5a5a5a5a) || e->t_off != (int32_t)(s / 1000) ||
               e->persona_op != (uint32_t)((s % 17 + 1) << PERSONA_BITS);
    }
    pthread_mutex_unlock(&w->lock);
    return bad;
}

/* Follows and Undos (undo-first: every actor follows after the first 12) over 12 actors:
 * the events held stay one a pair, and the state file written holds every pair. */
static void follow_events(void)
{
    char dir[] = "/tmp/flood-spool-ev-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a state folder for the follow events");
    struct crowd c = crowd_of(3, 4);
    struct flood_err err = {0};
    struct workload_opts o = {
        .seed = 9, .state_dir = dir, .refollow = WORKLOAD_REFOLLOW_UNDO_FIRST};
    o.mix[OP_FOLLOW] = 3;
    o.mix[OP_UNDO] = 1;
    struct workload *w = workload_new_at(&c, &o, &alice, 1, 1764493200, &err);
    CHECK(w != NULL, "a follow and undo workload (%s)", w ? "" : err.msg);
    if (!w)
        return;
    unsigned n_ops[OP__COUNT] = {0};
    for (uint64_t s = 0; s < 5000; s++) {
        struct workload_item it;
        if (workload_build_at(w, s, 1764493200 + (time_t)(s / 100), &it, &err) < 0) {
            printf("# %s\n", err.msg);
            break;
        }
        n_ops[it.op]++;
        workload_item_free(&it);
    }
    CHECK(n_ops[OP_FOLLOW] > 1000 && n_ops[OP_UNDO] > 1000, "%u Follows and %u Undos built",
          n_ops[OP_FOLLOW], n_ops[OP_UNDO]);
    CHECK(w->n_events == 12, "the follow state holds %zu events, one for each of the 12 pairs",
          w->n_events);
    CHECK(workload_state_write(w, &err) == 0, "the follow state is written (%s)", err.msg);
    workload_free(w);
    char path[256];
    snprintf(path, sizeof(path), "%s/follows", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    int lines = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char f[600], line[1024];
        snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
        FILE *fp = fopen(f, "r");
        while (fp && fgets(line, sizeof(line), fp))
            lines += line[0] == 'f' || line[0] == 'u';
        if (fp)
            fclose(fp);
        unlink(f);
    }
    if (d)
        closedir(d);
    CHECK(lines == 12, "the state file has one line a pair (%d)", lines);
    rmdir(path);
    rmdir(dir);
}

/* Creates, Updates and Deletes over 2,000 s of intended times centred on now, built in
 * order (as the signers build): the Updates and Deletes already due are dropped as later
 * ones are put, those ahead are kept and served from their own time on; every note's
 * latest Update reads back from beside the records. With a state folder or without. */
static void due_ahead(const char *state_dir)
{
    const char *how = state_dir ? "with a state folder" : "in memory";
    struct crowd c = crowd_of(3, 4);
    struct flood_err err = {0};
    struct workload_opts o = {.seed = 13, .state_dir = state_dir};
    o.mix[OP_CREATE] = 4;
    o.mix[OP_UPDATE] = 2;
    o.mix[OP_DELETE] = 1;
    enum { N = 20000 };
    int64_t t_begin = clock_wall_ns();
    /* 10 a second: each actor's recent Creates age in before its ring moves on */
    int64_t t0 = t_begin - 1000 * INT64_C(1000000000), step = 100000000;
    struct workload *w = workload_new_at(&c, &o, &alice, 1, (time_t)(t0 / 1000000000), &err);
    CHECK(w != NULL, "%s: a create, update and delete workload (%s)", how, w ? "" : err.msg);
    if (!w)
        return;
    uint64_t *latest = calloc(N, sizeof(*latest)); /* a Create's latest Update's seq + 1 */
    uint64_t *before = calloc(N, sizeof(*before)); /* an Update's previous one's seq + 1 */
    unsigned char *op = calloc(N, 1);
    uint64_t *create = calloc(N, sizeof(*create));
    int built = 0;
    for (uint64_t s = 0; s < N; s++) {
        struct workload_item it;
        if (workload_build_at_ns(w, s, t0 + (int64_t)s * step, &it, &err) < 0) {
            printf("# %s\n", err.msg);
            break;
        }
        op[s] = (unsigned char)it.op;
        if (it.op == OP_UPDATE || it.op == OP_DELETE) {
            pthread_mutex_lock(&w->lock);
            create[s] = s - workload_entry(w, s, 0)->ref;
            pthread_mutex_unlock(&w->lock);
        }
        if (it.op == OP_UPDATE) {
            before[s] = latest[create[s]];
            latest[create[s]] = s + 1;
        }
        workload_item_free(&it);
        built++;
    }
    int64_t t_end = clock_wall_ns();
    size_t ahead_begin = 0, ahead_end = 0, updates = 0, edits_ok = 0, served_ok = 0, ahead = 0;
    for (uint64_t s = 0; s < (uint64_t)built; s++) {
        int64_t at = t0 + (int64_t)s * step;
        if (op[s] == OP_UPDATE || op[s] == OP_DELETE) {
            ahead_begin += at > t_begin;
            ahead_end += at > t_end;
        }
    }
    pthread_mutex_lock(&w->lock);
    size_t n_due = w->n_due, n_ring = w->n_ring;
    for (uint64_t s = 0; s < (uint64_t)built; s++) {
        if (op[s] == OP_CREATE) {
            uint64_t u = 0;
            int had = workload_edit_of(w, s, &u) == 0;
            updates += latest[s] != 0;
            edits_ok += latest[s] ? had && u + 1 == latest[s] : !had;
        }
        int64_t at = t0 + (int64_t)s * step;
        if (op[s] != OP_UPDATE || at <= t_end + 1000000000) /* a second's margin: still ahead */
            continue;
        ahead++;
        uint64_t u = 0, p = 0;
        int at_own = workload_due_edit(w, create[s], at, &u) == 0 && u == s;
        int had_p = workload_due_edit(w, create[s], at - 1, &p) == 0;
        served_ok += at_own && (before[s] ? had_p && p + 1 == before[s] : !had_p);
    }
    pthread_mutex_unlock(&w->lock);
    CHECK(built == N, "%s: %d of %d built", how, built, N);
    CHECK(n_due <= ahead_begin && n_due >= ahead_end && n_ring == n_due,
          "%s: kept %zu Updates and Deletes, those ahead of the clock (%zu to %zu)", how, n_due,
          ahead_end, ahead_begin);
    size_t creates = 0;
    for (uint64_t s = 0; s < (uint64_t)built; s++)
        creates += op[s] == OP_CREATE;
    CHECK(updates > 100 && edits_ok == creates,
          "%s: each of %zu notes' latest Update reads back (%zu edited)", how, creates, updates);
    CHECK(ahead > 100 && served_ok == ahead,
          "%s: the %zu Updates ahead served from their own time, the one before until then "
          "(%zu right)",
          how, ahead, served_ok);
    free(latest);
    free(before);
    free(op);
    free(create);
    workload_free(w);
}

int main(void)
{
    follow_events();
    due_ahead(NULL);
    char due_dir[] = "/tmp/flood-spool-due-XXXXXX";
    CHECK(mkdtemp(due_dir) != NULL, "a state folder for the Updates and Deletes");
    due_ahead(due_dir);
    rmdir(due_dir);
    struct crowd c = crowd_of(3, 4);
    struct flood_err err = {0};
    struct workload_opts o = {.seed = 5};
    o.mix[OP_CREATE] = 1;

    char dir[] = "/tmp/flood-spool-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a state folder for the test");
    int fds_before = count_dir("/proc/self/fd");
    o.state_dir = dir;
    struct workload *w = workload_new_at(&c, &o, &alice, 1, 1764493200, &err);
    CHECK(w != NULL, "a workload with a state folder (%s)", w ? "" : err.msg);
    if (!w)
        return check_done();
    long grew = 0;
    size_t bad = fill_and_check(w, &grew);
    /* without the spool the 16 MiB written stay resident; with it, the newest chunks */
    CHECK(grew >= 0 && grew < (SPOOL_KEEP + 6) * 1024,
          "%d MiB of records grew the resident set by %ld KiB (at most %d MiB)", CHUNKS, grew,
          SPOOL_KEEP + 6);
    CHECK(bad == 0, "every record reads back as written (%zu differ)", bad);
    CHECK(w->spool_fd >= 0, "the records are in a file");
    int in_dir = count_dir(dir);
    CHECK(in_dir == 0, "the file has no name in the state folder (%d entries)", in_dir);
    workload_free(w);
    CHECK(count_dir("/proc/self/fd") == fds_before, "the file is closed with the workload");
    rmdir(dir);

    o.state_dir = NULL;
    w = workload_new_at(&c, &o, &alice, 1, 1764493200, &err);
    CHECK(w != NULL, "a workload without a state folder");
    if (!w)
        return check_done();
    bad = fill_and_check(w, &grew);
    CHECK(bad == 0 && w->spool_fd < 0, "without one the records are memory, read back (%zu differ)",
          bad);
    workload_free(w);
    return check_done();
}
