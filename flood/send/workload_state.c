/* flood/send/workload_state.c: the follow state kept across runs, and the account of the mix
 * (asked, sent, substituted) for run.json (see workload.h).
 *
 * A follow state file, STATE/follows/HASH.tsv (HASH: FNV-1a 64 of the persona's actor id in
 * hex), one line a crowd actor that ever followed the persona:
 *   # a comment
 *   persona<TAB>ACTOR_ID                        the persona the file is about
 *   f|u<TAB>START<TAB>SEQ<TAB>ID_SEQ<TAB>CROWD_ACTOR<TAB>FOLLOW_ID
 * f: follows, u: its follow was undone. START (the run's start, unix seconds) and SEQ (the
 * activity) stamp the pair's newest event: a write keeps, per crowd actor, the newer of the
 * file's line and its own. ID_SEQ is the number in the Follow's id, so that an Undo of it
 * in a later run embeds the Follow as it was sent. Crowd actors of another crowd (other
 * names, another port) are kept as they are. */
#include "flood/send/workload_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/core/fsutil.h"
#include "webfinger/activity.h"
#include "webfinger/wf.h"

#define STATE_MAX (64u << 20) /* a follow state file read whole */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

/* The crowd actor index of an actor id URL of this crowd, or -1. */
static int64_t crowd_actor_of(const struct workload *w, const char *url)
{
    const char *p = strstr(url, "://");
    if (!p)
        return -1;
    const char *host = p + 3;
    size_t hl = strcspn(host, "/");
    char h[256];
    if (hl == 0 || hl >= sizeof(h))
        return -1;
    memcpy(h, host, hl);
    h[hl] = '\0';
    struct wf_route r;
    if (wf_route(&w->crowd->wf, h, host + hl, &r) != 0 || r.kind != WF_ROUTE_ACTOR || r.actor < 1)
        return -1;
    char want[WF_URL_MAX];
    wf_actor_url(&w->crowd->wf, r.instance, r.actor, want);
    if (strcmp(want, url))
        return -1;
    return (int64_t)crowd_actor_index(w->crowd, r.instance, r.actor);
}

/* One parsed line of a follow state file. */
struct state_line {
    char state; /* 'f' or 'u' */
    uint64_t start, seq, id_seq;
    char *actor, *follow; /* into the file's text */
};

/* Split line (NUL-terminated, modified) into l. 0, or -1 when malformed. */
static int parse_line(char *line, struct state_line *l)
{
    char *f[6];
    int n = 0;
    for (char *p = line; n < 6; n++) {
        f[n] = p;
        char *tab = strchr(p, '\t');
        if (!tab) {
            n++;
            break;
        }
        *tab = '\0';
        p = tab + 1;
    }
    if (n != 6 || (strcmp(f[0], "f") && strcmp(f[0], "u")))
        return -1;
    char *end;
    l->state = f[0][0];
    errno = 0;
    l->start = strtoull(f[1], &end, 10);
    if (*end || !*f[1])
        return -1;
    l->seq = strtoull(f[2], &end, 10);
    if (*end || !*f[2])
        return -1;
    l->id_seq = strtoull(f[3], &end, 10);
    if (*end || !*f[3] || errno || !*f[4] || !*f[5])
        return -1;
    l->actor = f[4];
    l->follow = f[5];
    return 0;
}

/* Parse a state file's text (modified in place) for persona actor into lines (a new array,
 * free() it; they point into text). 0, or -1 and err naming path:line. */
static int parse_state(char *text, const char *path, const char *actor, struct state_line **out,
                       size_t *n, struct flood_err *err)
{
    struct state_line *v = NULL;
    size_t nv = 0, cap = 0;
    unsigned lineno = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        if (*line && *line != '#') {
            if (!strncmp(line, "persona\t", 8)) {
                if (strcmp(line + 8, actor)) {
                    flood_err_set(err, FLOOD_EINVAL,
                                  "workload: follow state %s:%u is about '%.200s', not '%.200s'",
                                  path, lineno, line + 8, actor);
                    free(v);
                    return -1;
                }
            } else {
                if (nv == cap) {
                    cap = cap ? cap * 2 : 64;
                    v = flood_xrealloc(v, cap * sizeof(*v));
                }
                if (parse_line(line, &v[nv]) < 0) {
                    flood_err_set(err, FLOOD_EINVAL,
                                  "workload: follow state %s:%u: not 'f|u START SEQ ID_SEQ "
                                  "ACTOR FOLLOW_ID' (tab-separated)",
                                  path, lineno);
                    free(v);
                    return -1;
                }
                nv++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    *out = v;
    *n = nv;
    return 0;
}

int workload_state_read(struct workload *w, struct flood_err *err)
{
    if (!w->o.state_dir || !*w->o.state_dir)
        return 0;
    w->state_paths = flood_xcalloc(w->n_p, sizeof(*w->state_paths));
    size_t cap = 0;
    for (size_t i = 0; i < w->n_p; i++) {
        if (w->p[i].index < 0)
            continue; /* the --inbox placeholder: nobody to follow */
        w->state_paths[i] =
            flood_xasprintf("%s/follows/%016" PRIx64 ".tsv", w->o.state_dir, fnv1a(w->p[i].actor));
        char *text = fs_read_file(w->state_paths[i], STATE_MAX, NULL);
        if (!text) {
            if (errno == ENOENT)
                continue;
            flood_err_set(err, FLOOD_EIO, "workload: follow state: cannot read '%s': %s",
                          w->state_paths[i], strerror(errno));
            return -1;
        }
        struct state_line *l = NULL;
        size_t n = 0;
        int rc = parse_state(text, w->state_paths[i], w->p[i].actor, &l, &n, err);
        for (size_t k = 0; rc == 0 && k < n; k++) {
            int64_t idx = l[k].state == 'f' ? crowd_actor_of(w, l[k].actor) : -1;
            if (idx < 0)
                continue;
            if (w->n_prior == cap) {
                cap = cap ? cap * 2 : 64;
                w->prior = flood_xrealloc(w->prior, cap * sizeof(*w->prior));
            }
            w->prior[w->n_prior++] = (struct prior_follow){
                .actor_idx = (uint32_t)idx, .persona = (uint32_t)i, .id_seq = l[k].id_seq};
        }
        free(l);
        free(text);
        if (rc)
            return -1;
    }
    return 0;
}

static size_t ev_slot(uint32_t persona, uint32_t actor_idx, size_t cap)
{
    uint64_t h = (((uint64_t)persona << 32) | actor_idx) * UINT64_C(0x9e3779b97f4a7c15);
    return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

struct follow_event *workload_state_event(struct workload *w, uint32_t persona, uint32_t actor_idx)
{
    if ((w->n_events + 1) * 2 > w->ev_cap) { /* at most half full: grow and place again */
        size_t cap = w->ev_cap ? w->ev_cap * 2 : 512;
        uint32_t *m = flood_xcalloc(cap, sizeof(*m));
        for (size_t i = 0; i < w->n_events; i++) {
            size_t j = ev_slot(w->events[i].persona, w->events[i].actor_idx, cap);
            while (m[j])
                j = (j + 1) & (cap - 1);
            m[j] = (uint32_t)i + 1;
        }
        free(w->ev_map);
        w->ev_map = m;
        w->ev_cap = cap;
    }
    size_t j = ev_slot(persona, actor_idx, w->ev_cap);
    for (; w->ev_map[j]; j = (j + 1) & (w->ev_cap - 1)) {
        struct follow_event *e = &w->events[w->ev_map[j] - 1];
        if (e->persona == persona && e->actor_idx == actor_idx)
            return e;
    }
    if (w->n_events == w->cap_events) {
        w->cap_events = w->cap_events ? w->cap_events * 2 : 256;
        w->events = flood_xrealloc(w->events, w->cap_events * sizeof(*w->events));
    }
    w->ev_map[j] = (uint32_t)w->n_events + 1;
    struct follow_event *e = &w->events[w->n_events++];
    memset(e, 0, sizeof(*e));
    e->persona = persona;
    e->actor_idx = actor_idx;
    return e;
}

/* The newest of this process's events for each pair of persona p, one per crowd actor,
 * as state lines (a new array; strings new, freed by free_mine). */
static struct state_line *mine_of(struct workload *w, uint32_t p, size_t *n)
{
    struct state_line *v = NULL;
    size_t nv = 0;
    uint64_t start = (uint64_t)w->start;
    for (size_t i = w->n_events; i-- > 0;) { /* newest first: the first seen of a pair wins */
        const struct follow_event *e = &w->events[i];
        if (e->persona != p)
            continue;
        char url[WF_URL_MAX];
        int instance, actor;
        workload_actor_of_index(w->crowd, e->actor_idx, &instance, &actor);
        wf_actor_url(&w->crowd->wf, instance, actor, url);
        int seen = 0;
        for (size_t k = 0; k < nv && !seen; k++)
            seen = !strcmp(v[k].actor, url);
        if (seen)
            continue;
        char fid[WF_URL_MAX];
        wf_activity_url(&w->crowd->wf, instance, actor, e->id_seq, fid);
        v = flood_xrealloc(v, (nv + 1) * sizeof(*v));
        v[nv++] = (struct state_line){.state = e->op == OP_UNDO ? 'u' : 'f',
                                      .start = start,
                                      .seq = e->seq,
                                      .id_seq = e->id_seq,
                                      .actor = flood_xstrdup(url),
                                      .follow = flood_xstrdup(fid)};
    }
    *n = nv;
    return v;
}

static void free_mine(struct state_line *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].actor);
        free(v[i].follow);
    }
    free(v);
}

static int newer(const struct state_line *a, const struct state_line *b)
{
    return a->start != b->start ? a->start > b->start : a->seq > b->seq;
}

/* Merge mine into persona p's file (under the folder's lock). 0, or -1 and err. */
static int write_one(struct workload *w, uint32_t p, const struct state_line *mine, size_t n_mine,
                     struct flood_err *err)
{
    const char *path = w->state_paths[p];
    char *text = fs_read_file(path, STATE_MAX, NULL);
    if (!text && errno != ENOENT) {
        flood_err_set(err, FLOOD_EIO, "workload: follow state: cannot read '%s': %s", path,
                      strerror(errno));
        return -1;
    }
    struct state_line *old = NULL;
    size_t n_old = 0;
    if (text && parse_state(text, path, w->p[p].actor, &old, &n_old, err)) {
        free(text);
        return -1;
    }
    size_t cap = 256 + strlen(w->p[p].actor);
    for (size_t i = 0; i < n_old; i++)
        cap += 80 + strlen(old[i].actor) + strlen(old[i].follow);
    for (size_t i = 0; i < n_mine; i++)
        cap += 80 + strlen(mine[i].actor) + strlen(mine[i].follow);
    char *buf = flood_xcalloc(1, cap);
    size_t len = (size_t)snprintf(buf, cap,
                                  "# flood follow state: which crowd actors follow this account "
                                  "(docs/LOAD.md)\npersona\t%s\n",
                                  w->p[p].actor);
    char *used = flood_xcalloc(n_mine ? n_mine : 1, 1);
    for (size_t i = 0; i <= n_old; i++) {
        const struct state_line *l = i < n_old ? &old[i] : NULL;
        for (size_t k = 0; l && k < n_mine; k++) {
            if (!strcmp(mine[k].actor, l->actor)) {
                used[k] = 1;
                if (newer(&mine[k], l))
                    l = &mine[k];
            }
        }
        if (i == n_old) { /* then the pairs the file did not hold */
            for (size_t k = 0; k < n_mine; k++)
                if (!used[k])
                    len += (size_t)snprintf(buf + len, cap - len,
                                            "%c\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\n",
                                            mine[k].state, mine[k].start, mine[k].seq,
                                            mine[k].id_seq, mine[k].actor, mine[k].follow);
            break;
        }
        len += (size_t)snprintf(buf + len, cap - len,
                                "%c\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\n", l->state,
                                l->start, l->seq, l->id_seq, l->actor, l->follow);
    }
    int rc = fs_write_file(path, buf, len, 0600, FS_REPLACE, 0, "workload: follow state", err);
    free(used);
    free(buf);
    free(old);
    free(text);
    return rc < 0 ? -1 : 0;
}

int workload_state_write(struct workload *w, struct flood_err *err)
{
    if (!w->state_paths || w->n_events == 0)
        return 0;
    char *dir = flood_xasprintf("%s/follows", w->o.state_dir);
    int fd = -1, rc = fs_mkdir_p(dir, 0700, "workload: follow state folder", err);
    if (rc == 0)
        rc = fs_lock(dir, NULL, &fd, "workload: follow state folder", err);
    pthread_mutex_lock(&w->lock);
    for (uint32_t p = 0; rc == 0 && p < w->n_p; p++) {
        if (!w->state_paths[p])
            continue;
        size_t n = 0;
        struct state_line *mine = mine_of(w, p, &n);
        if (n)
            rc = write_one(w, p, mine, n, err);
        free_mine(mine, n);
    }
    pthread_mutex_unlock(&w->lock);
    if (fd >= 0)
        close(fd);
    free(dir);
    return rc;
}

/* ---- the mix's account ------------------------------------------------------------------ */

static const char *why_not(enum op_kind op)
{
    switch (op) {
    case OP_UPDATE:
    case OP_DELETE:
        return "no crowd actor had a recent post standing yet";
    case OP_UNDO:
        return "no crowd actor followed a persona then";
    case OP_REFOLLOW:
        return "no crowd actor followed a persona yet";
    case OP_FOLLOW:
        return "every crowd actor already followed every persona";
    case OP_DELETE_ACTOR:
        return "the last crowd actor standing is never deleted";
    default:
        return "it could not be sent then";
    }
}

static double pct(uint64_t n, uint64_t of)
{
    return of ? (double)(int64_t)(n * 10000 / of) / 100 : 0;
}

json_t *workload_mix_json(struct workload *w)
{
    json_t *o = json_object(), *kinds = json_object(), *subs = json_array();
    pthread_mutex_lock(&w->lock);
    uint64_t built = w->built;
    json_object_set_new(o, "activities", json_integer((json_int_t)built));
    for (int k = 0; k < OP__COUNT; k++) {
        if (!w->o.mix[k] && !w->by_op[k])
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "asked_pct", json_real(pct(w->o.mix[k], w->mix_total)));
        json_object_set_new(e, "sent_pct", json_real(pct(w->by_op[k], built)));
        json_object_set_new(e, "sent", json_integer((json_int_t)w->by_op[k]));
        json_object_set_new(e, "drawn", json_integer((json_int_t)w->drawn[k]));
        json_object_set_new(kinds, op_name((enum op_kind)k), e);
        /* what is still substituted: fallen for want of something, less made up since */
        int64_t left = 0;
        int to = OP_CREATE;
        for (int j = 0; j < OP__COUNT; j++) {
            left += (int64_t)w->fell[k][j] - (int64_t)w->repaid[j][k];
            if (w->fell[k][j] > w->fell[k][to])
                to = j;
        }
        if (left > 0) {
            json_t *s = json_object();
            json_object_set_new(s, "asked", json_string(op_name((enum op_kind)k)));
            json_object_set_new(s, "sent_as", json_string(op_name((enum op_kind)to)));
            json_object_set_new(s, "count", json_integer(left));
            json_object_set_new(s, "why", json_string(why_not((enum op_kind)k)));
            json_array_append_new(subs, s);
        }
    }
    json_object_set_new(o, "kinds", kinds);
    json_object_set_new(o, "substituted", subs);
    if (w->o.mix[OP_REFOLLOW] || w->by_op[OP_REFOLLOW]) {
        json_t *r = json_object();
        uint64_t n = w->by_op[OP_REFOLLOW], a = w->refollow_acc, j = w->refollow_rej;
        json_object_set_new(r, "sent", json_integer((json_int_t)n));
        json_object_set_new(r, "accepted", json_integer((json_int_t)a));
        json_object_set_new(r, "rejected", json_integer((json_int_t)j));
        json_object_set_new(r, "unanswered", json_integer((json_int_t)(n > a + j ? n - a - j : 0)));
        json_object_set_new(o, "refollows", r);
    }
    size_t n_files = 0;
    for (size_t i = 0; w->state_paths && i < w->n_p; i++)
        n_files += w->state_paths[i] != NULL;
    if (n_files) {
        json_t *st = json_object(), *files = json_array();
        for (size_t i = 0; i < w->n_p; i++)
            if (w->state_paths[i])
                json_array_append_new(files, json_string(w->state_paths[i]));
        json_object_set_new(st, "files", files);
        json_object_set_new(st, "followed_at_start", json_integer((json_int_t)w->n_prior));
        json_object_set_new(st, "followed_at_end", json_integer((json_int_t)w->n_dense));
        json_object_set_new(o, "follow_state", st);
    }
    pthread_mutex_unlock(&w->lock);
    return o;
}

uint64_t workload_refollows_open(struct workload *w)
{
    pthread_mutex_lock(&w->lock);
    uint64_t n = w->by_op[OP_REFOLLOW], a = w->refollow_acc + w->refollow_rej;
    pthread_mutex_unlock(&w->lock);
    return n > a ? n - a : 0;
}

void workload_notes(struct workload *w, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    pthread_mutex_lock(&w->lock);
    uint32_t live = w->n_flat - w->n_gone;
    for (size_t p = 0; w->o.mix[OP_FOLLOW] && p < w->n_p && len < size; p++) {
        if (w->n_following[p] < live)
            continue;
        len += (size_t)snprintf(
            buf + len, size - len,
            "every crowd actor (%u) already follows %s (follow state %s): %s%s", live,
            w->p[p].actor, w->state_paths && w->state_paths[p] ? w->state_paths[p] : "-",
            w->o.refollow == WORKLOAD_REFOLLOW_UNDO_FIRST
                ? "each Follow is sent after an Undo of one of those follows (--refollow "
                  "undo-first)"
            : w->o.refollow == WORKLOAD_REFOLLOW_ALTERNATE
                ? "Follows are sent as Undos of older follows, whose actors follow again in a "
                  "later run (--refollow alternate)"
                : "Follows are sent as refollows, counted apart (--refollow undo-first sends an "
                  "Undo first, alternate an Undo for a later run, or use another --state)",
            "\n");
    }
    pthread_mutex_unlock(&w->lock);
    /* a Delete needs a standing post of a Create: more Deletes than Creates cannot hold */
    const unsigned *mix = w->o.mix;
    if (mix[OP_DELETE] && mix[OP_DELETE] >= mix[OP_CREATE] && len < size)
        len += (size_t)snprintf(
            buf + len, size - len,
            "--mix delete=%u asks as many Deletes as Creates or more (create=%u): a Delete "
            "removes a post of its sender's sent %d s before or earlier, so about %.1f%% of the "
            "activities and the last %d s of Deletes will be Creates sent in their place\n",
            mix[OP_DELETE], mix[OP_CREATE], POST_AGE_S,
            50.0 * (mix[OP_DELETE] - mix[OP_CREATE]) / w->mix_total, POST_AGE_S);
    if (len && buf[len - 1] == '\n' && len < size)
        buf[len - 1] = '\0';
}
