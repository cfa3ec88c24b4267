/* flood/send/signer.c: signer threads filling the look-ahead ring (see signer.h). */
#include "flood/core/clock.h"
#include "flood/send/signer.h"
#include "flood/core/grammar.h"
#include "flood/core/url.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "flood/measure/stats.h"

#define CT_HEADER     "Content-Type: application/activity+json"
#define STALE_SECONDS 7200 /* two hours back: outside every server's window */
/* Signers sleep until a batch can be made, not a request at a time (a futex wake-up and a
 * context switch each): a millisecond of the schedule when they are a look-ahead ahead, or
 * REFILL_BATCH slots when the ring is full. Both small: a signer sharing a core with the
 * event loop holds it for one batch at most. */
#define BUILD_BATCH_NS 1000000
#define REFILL_BATCH   64
/* Unsigned, a batch is also at least this many requests of the schedule (at most a quarter
 * of the look-ahead): building one takes microseconds, so below 64,000/s the builder wakes
 * for a batch this long rather than each millisecond (a context switch on the loop's core
 * every wake). */
#define BUILD_BATCH_MIN 64

/* One consumer of the ring (an event loop): it takes the sequence numbers seq with
 * seq mod n_cons == its index, in order. Padded so that two consumers' counters never share
 * a cache line. */
struct signer_consumer {
    atomic_uint_fast64_t next;    /* every seq of its class below it has been taken */
    atomic_uint_fast64_t waiting; /* the seq it waits for */
    int wake_fd;
    char pad[128 - 2 * sizeof(atomic_uint_fast64_t) - sizeof(int)];
};

struct signer {
    struct crowd *crowd;
    struct workload *w;
    struct signer_opts o;
    struct sign_key *rogue; /* the wrong key of BAD_WRONG_KEY */
    char *head0;            /* Content-Type, Accept and User-Agent lines, each with its CRLF */
    size_t head0_len;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct sched sched; /* under lock */
    struct sched all;   /* under lock, a shard's: every activity, the others' skipped */
    int64_t next_t;     /* under lock: intended time of next_seq, -1 at the end */
    uint64_t next_n;    /* under lock: its number in the run */
    uint64_t next_seq;  /* under lock */
    int stop;           /* under lock */
    atomic_int producers_waiting;
    /* Producers waiting for room sleep until the consumers free slots up to this seq
     * (UINT64_MAX: they wait on time, not on room): REFILL_BATCH at a time. */
    atomic_uint_fast64_t refill_seq;

    /* seq lives in ring[seq % ring_len]; ring_len is a multiple of n_cons, so a slot is only
     * ever read by the one consumer of its class, and seq may be put there once seq -
     * ring_len (the same class) was taken */
    _Atomic(struct signer_req *) *ring;
    size_t ring_len;
    struct signer_consumer *cons;
    uint64_t n_cons;

    int64_t mono0_ns, wall0_ns, lookahead_ns;
    pthread_t *threads;
    int n_threads;
    atomic_int failed;
    atomic_flag raised_once;   /* the signers' priority raised back, said once on stderr */
    struct flood_err fail_err; /* written once, before failed is set */
    atomic_flag fail_once;
    /* signer_counts: requests signed, the ring's bytes (with o.bytes_max), left by stop */
    atomic_uint_fast64_t signed_n, bytes_held, bytes_peak;
    uint64_t left;
};

int signer_parse_dialects(const char *s, struct signer_opts *o, struct flood_err *err)
{
    static const char *const names[] = {"cavage", "rfc9421", "cavage,rfc9421", "rfc9421,cavage",
                                        "none"};
    static const struct {
        int n, d0, d1;
    } forms[] = {
        {1, SIGN_CAVAGE, 0},
        {1, SIGN_RFC9421, 0},
        {2, SIGN_CAVAGE, SIGN_RFC9421},
        {2, SIGN_RFC9421, SIGN_CAVAGE},
        {0, 0, 0},
    };
    int i;
    if (gram_keyword("--sign", s, GRAM_NUL, names, sizeof(names) / sizeof(names[0]), &i, err))
        return -1;
    o->n_dialects = forms[i].n;
    o->dialects[0] = forms[i].d0;
    o->dialects[1] = forms[i].d1;
    return 0;
}

int signer_parse_bad(const char *s, struct signer_opts *o, struct flood_err *err)
{
    return gram_share("--bad-signatures", s, GRAM_NUL, GRAM_SHARE_PERCENT, 0, 1, &o->bad_share,
                      err);
}

void signer_req_free(struct signer_req *r)
{
    if (!r)
        return;
    free(r->url);
    if (r->signed_body != r->body)
        free(r->signed_body);
    free(r->body);
    free(r->head);
    free(r);
}

static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Which bad kind request seq carries: a pure function of (seed, seq). */
static int bad_kind(const struct signer_opts *o, uint64_t seq)
{
    if (o->bad_share <= 0 || o->n_dialects == 0)
        return BAD_NONE;
    uint64_t h = mix64(o->seed ^ mix64(seq ^ UINT64_C(0xbadb17)));
    double u = (double)(h >> 11) * 0x1.0p-53;
    if (u >= o->bad_share)
        return BAD_NONE;
    return 1 + (int)(mix64(h) % 3);
}

/* The parts of a URL a signature covers, with the URL they came from: a one-entry cache,
 * since a run signs many requests to one inbox. */
struct signer_url {
    char url[WF_URL_MAX * 2];
    struct url_parts p;
};

static int signer_url_split(const char *url, struct signer_url *u, struct flood_err *err)
{
    if (!strcmp(url, u->url))
        return 0;
    u->url[0] = '\0';
    if (strlen(url) >= sizeof(u->url)) {
        flood_err_set(err, FLOOD_ELIMIT, "signer: URL too long '%.80s'", url);
        return -1;
    }
    if (url_split(url, &u->p, err) < 0)
        return -1;
    memcpy(u->url, url, strlen(url) + 1);
    return 0;
}

/* The header block being made: lines "Name: value\r\n", one allocation grown as needed. */
struct head_buf {
    char *p;
    size_t len, cap;
};

/* h += p[0..n) */
static void head_put(struct head_buf *h, const char *p, size_t n)
{
    if (h->len + n + 1 > h->cap) {
        h->cap = (h->len + n + 1) * 2 > 1024 ? (h->len + n + 1) * 2 : 1024;
        h->p = flood_xrealloc(h->p, h->cap);
    }
    memcpy(h->p + h->len, p, n);
    h->len += n;
    h->p[h->len] = '\0';
}

/* h += line CRLF */
static void head_add(struct head_buf *h, const char *line)
{
    head_put(h, line, strlen(line));
    head_put(h, "\r\n", 2);
}

/* (Re)make r's headers for dialect d (or SIGNER_NONE). */
static int sign_headers(struct signer *s, struct signer_req *r, int d, struct signer_url *u,
                        struct flood_err *err)
{
    free(r->head);
    r->head = NULL;
    r->head_len = 0;
    r->dialect = d;
    time_t now = (time_t)((s->wall0_ns + r->intended_ns) / 1000000000);
    char date[32];
    sign_http_date(now, date);
    size_t dn = strlen(date);
    /* the fixed lines first; unsigned, a Date closes them, in one allocation of its size */
    struct head_buf l = {.cap = s->head0_len + 6 + dn + 3};
    l.p = flood_xmalloc(l.cap);
    head_put(&l, s->head0, s->head0_len);
    if (d == SIGNER_NONE) {
        head_put(&l, "Date: ", 6);
        head_put(&l, date, dn);
        head_put(&l, "\r\n", 2);
        r->head = l.p;
        r->head_len = l.len;
        return 0;
    }
    if (signer_url_split(r->url, u, err)) {
        free(l.p);
        return -1;
    }
    char key_id[WF_URL_MAX];
    crowd_key_id(s->crowd, r->instance, r->actor, key_id);
    struct sign_params p = {
        .dialect = (enum sign_dialect)d,
        .key = r->bad == BAD_WRONG_KEY ? s->rogue
               : r->key                ? r->key
                                       : crowd_key(s->crowd, r->instance, r->actor),
        .key_id = key_id,
        .now = r->bad == BAD_STALE_DATE ? now - STALE_SECONDS : now,
    };
    struct sign_header hdr = {"Content-Type", "application/activity+json"};
    struct sign_msg msg = {
        .method = "POST",
        .scheme = u->p.scheme,
        .authority = u->p.authority,
        .path = u->p.target,
        .headers = &hdr,
        .n_headers = 1,
        .body = r->signed_body,
        .body_len = r->signed_len,
    };
    struct sign_out out = {0};
    if (!p.key) {
        flood_err_set(err, FLOOD_EINVAL, "signer: no key for actor %d of instance %d", r->actor,
                      r->instance);
        free(l.p);
        return -1;
    }
    if (sign_request(&p, &msg, &out, err)) {
        free(l.p);
        return -1;
    }
    for (size_t i = 0; i < out.n; i++)
        if (strncasecmp(out.lines[i], "Host:", 5)) /* the client writes Host, once */
            head_add(&l, out.lines[i]);
    sign_out_free(&out);
    r->head = l.p;
    r->head_len = l.len;
    return 0;
}

/* A request from a built item (the item's strings move into it). */
static struct signer_req *make_req(struct signer *s, struct workload_item *it, int64_t t,
                                   struct signer_url *u, struct flood_err *err)
{
    struct signer_req *r = flood_xcalloc(1, sizeof(*r));
    r->seq = it->seq;
    r->n = it->seq;
    r->intended_ns = t;
    r->op = it->op;
    r->instance = it->instance;
    r->actor = it->actor;
    r->key = it->key;
    r->url = it->inbox;
    r->body = it->body;
    r->body_len = it->body_len;
    it->inbox = it->body = NULL;
    r->signed_body = r->body;
    r->signed_len = r->body_len;
    r->knocks = 1;
    r->bad = bad_kind(&s->o, r->n);
    if (r->bad == BAD_DIGEST) {
        /* the digest covers the built body; one more byte of JSON whitespace is sent */
        char *sent = flood_xmalloc(r->body_len + 2);
        memcpy(sent, r->body, r->body_len);
        sent[r->body_len] = '\n';
        sent[r->body_len + 1] = 0;
        r->body = sent;
        r->body_len++;
    }
    int d = s->o.n_dialects ? s->o.dialects[0] : SIGNER_NONE;
    if (sign_headers(s, r, d, u, err)) {
        signer_req_free(r);
        return NULL;
    }
    return r;
}

int signer_resign(struct signer *s, struct signer_req *r, struct flood_err *err)
{
    if (s->o.n_dialects < 2) {
        flood_err_set(err, FLOOD_EINVAL, "signer: no second dialect");
        return -1;
    }
    struct signer_url u;
    u.url[0] = 0;
    int d = r->dialect == s->o.dialects[0] ? s->o.dialects[1] : s->o.dialects[0];
    if (sign_headers(s, r, d, &u, err))
        return -1;
    r->knocks++;
    return 0;
}

static void fail(struct signer *s, const struct flood_err *e)
{
    if (!atomic_flag_test_and_set(&s->fail_once)) {
        s->fail_err = *e;
        atomic_store(&s->failed, 1);
        uint64_t one = 1;
        for (uint64_t k = 0; k < s->n_cons; k++)
            if (write(s->cons[k].wake_fd, &one, sizeof(one)) < 0) {
                /* the counter is full: the consumer is awake anyway */
            }
    }
}

static void deadline(struct timespec *ts, int64_t abs_ns)
{
    ts->tv_sec = (time_t)(abs_ns / 1000000000);
    ts->tv_nsec = (long)(abs_ns % 1000000000);
}

/* A shard's signer: record the other shards' activities before n (workload_skip_at, at
 * their intended times: the history activity n depends on) and pass n itself, walking the
 * unsharded copy of the schedule. 0, or -1 and err. */
static int skip_to(struct signer *s, uint64_t n, struct flood_err *err)
{
    if (s->sched.shard_n < 2)
        return 0;
    for (;;) {
        int64_t t = sched_next(&s->all);
        if (t < 0)
            return 0;
        uint64_t i = sched_index(&s->all);
        if (i >= n)
            return 0;
        if (workload_skip_at_ns(s->w, i, s->wall0_ns + t, err))
            return -1;
    }
}

/* The next activity of the schedule (under the lock); a shard's last one walks the others'
 * to the run's end. */
static void advance(struct signer *s)
{
    s->next_t = sched_next(&s->sched);
    s->next_n = sched_index(&s->sched);
    if (s->next_t < 0 && s->sched.shard_n > 1) {
        struct flood_err e;
        if (skip_to(s, UINT64_MAX, &e))
            fail(s, &e);
    }
}

/* The consumer of seq's class. */
static struct signer_consumer *consumer_of(struct signer *s, uint64_t seq)
{
    return &s->cons[s->n_cons == 1 ? 0 : seq % s->n_cons];
}

/* 1 when seq's slot is free: seq - ring_len, of the same class, was taken. */
static int slot_free(struct signer *s, uint64_t seq)
{
    return seq < atomic_load(&consumer_of(s, seq)->next) + s->ring_len;
}

/* What a request holds in memory, roughly: its struct and its strings (--presign-memory). */
static uint64_t req_bytes(const struct signer_req *r)
{
    return sizeof(*r) + strlen(r->url) + 1 + r->body_len + 1 + r->head_len + 1 +
           (r->signed_body != r->body ? r->signed_len + 1 : 0);
}

/* 1 when request seq may be put in the ring: its slot is free and the ring's bytes are
 * under the bound. */
static int room_for(struct signer *s, uint64_t seq)
{
    return slot_free(s, seq) && (!s->o.bytes_max || atomic_load(&s->bytes_held) < s->o.bytes_max);
}

/* How far into the schedule the signers may sign now (ns from the start): a look-ahead
 * from now, or with --presign from the start itself while it is still to come. */
static int64_t horizon(const struct signer *s, int64_t now)
{
    int64_t rel = now - s->mono0_ns;
    return (s->o.presign && rel < 0 ? 0 : rel) + s->lookahead_ns;
}

/* How long a batch of the schedule a producer a look-ahead ahead sleeps for (under the
 * lock): BUILD_BATCH_NS, or unsigned BUILD_BATCH_MIN requests at the rate in force. */
static int64_t build_batch_ns(struct signer *s, int dialect)
{
    if (dialect != SIGNER_NONE)
        return BUILD_BATCH_NS;
    double rate = sched_rate_at(&s->sched, (double)s->next_t / 1e9);
    double ns = rate > 0 ? BUILD_BATCH_MIN / rate * 1e9 : 0;
    if (ns > (double)s->lookahead_ns / 4)
        ns = (double)s->lookahead_ns / 4;
    return ns > BUILD_BATCH_NS ? (int64_t)ns : BUILD_BATCH_NS;
}

/* A signer's priority (Linux: per thread). Signing ahead is background work: while the
 * signers are more than half a look-ahead ahead of the schedule a signer runs at the
 * lowest priority, so one sharing a core with the event loop yields to it at once and
 * sends keep their time. Behind that (under a quarter of a look-ahead signed) signing is
 * what the sends wait for: the signer goes back to the process's own priority, or at nice
 * 19 any busy process on the machine (the target flood measures, say) would starve it and
 * the run fall minutes behind its schedule (make soak beside a loaded machine: 250 s).
 * Going back up needs the right to (root, CAP_SYS_NICE or RLIMIT_NICE): without it the
 * signer stays low, as before. Unsigned runs keep the normal priority throughout: building
 * a body is cheap, and a starved builder would wake the loop once per late request. With
 * --presign, lowered only from the start: before it no loop runs. */
struct signer_prio {
    pid_t tid;
    int base;     /* the thread's nice when it started: the process's */
    int low;      /* at nice 19 now */
    int can_rise; /* 0 once going back up was refused */
};

/* Below this rate a signer is never lowered: signing costs the loop little there (10/s of
 * RSA-2048: 0.3% of a core), and a lowered signer on a saturated machine wakes hundreds of
 * ms late (capacity's 10/s steps beside a busy machine: dispatch lag p99 0.3-1.3 s). */
#define PRIO_LOW_RATE 100.0

static void prio_step(struct signer *s, struct signer_prio *p, int64_t now)
{
    int64_t ahead = s->next_t < 0 ? INT64_MAX : s->next_t - (now - s->mono0_ns);
    double rate = s->next_t < 0 ? 0 : sched_rate_at(&s->sched, (double)s->next_t / 1e9);
    if (!p->low && ahead > s->lookahead_ns / 2 && rate >= PRIO_LOW_RATE &&
        (!s->o.presign || now >= s->mono0_ns)) {
        if (setpriority(PRIO_PROCESS, (id_t)p->tid, 19) == 0)
            p->low = 1;
        else
            p->can_rise = 0; /* not fatal: the signers then compete at equal weight */
    } else if (p->low && p->can_rise && (ahead < s->lookahead_ns / 4 || rate < PRIO_LOW_RATE / 2)) {
        if (setpriority(PRIO_PROCESS, (id_t)p->tid, p->base) == 0) {
            p->low = 0;
            if (ahead < s->lookahead_ns / 4 && !atomic_flag_test_and_set(&s->raised_once))
                fprintf(stderr,
                        "flood: the signers fell behind their look-ahead (%.0f ms signed "
                        "ahead): back at the process's priority while behind\n",
                        (double)ahead / 1e6);
        } else {
            p->can_rise = 0; /* EACCES/EPERM: stays low, as a process without the right */
        }
    }
}

static void *signer_main(void *arg)
{
    struct signer *s = arg;
    struct signer_url u;
    u.url[0] = 0;
    int d0 = s->o.n_dialects ? s->o.dialects[0] : SIGNER_NONE;
    struct signer_prio prio = {.tid = (pid_t)syscall(SYS_gettid), .can_rise = 1};
    errno = 0;
    prio.base = getpriority(PRIO_PROCESS, (id_t)prio.tid);
    if (errno)
        prio.base = 0;
    pthread_mutex_lock(&s->lock);
    while (!s->stop && (s->next_t >= 0 || s->o.steerable) && !atomic_load(&s->failed)) {
        int64_t now = clock_mono_ns();
        if (d0 != SIGNER_NONE)
            prio_step(s, &prio, now);
        int64_t wait_until = 0;
        if (s->next_t < 0) /* a steered schedule paused or over: until a change or the stop */
            wait_until = now + 100000000;
        else if (!room_for(s, s->next_seq)) {
            /* woken when the consumers have freed a batch of slots (or of bytes: a batch
             * more taken) */
            uint64_t batch = s->ring_len / 4 < REFILL_BATCH ? s->ring_len / 4 + 1 : REFILL_BATCH;
            wait_until = now + 20000000;
            atomic_store(&s->refill_seq, slot_free(s, s->next_seq)
                                             ? atomic_load(&consumer_of(s, s->next_seq)->next) +
                                                   s->ring_len + batch * s->n_cons
                                             : s->next_seq + batch);
        } else if (s->next_t > horizon(s, now)) {
            /* a look-ahead ahead: sleep a batch more */
            wait_until = s->mono0_ns + s->next_t - s->lookahead_ns + build_batch_ns(s, d0);
            atomic_store(&s->refill_seq, UINT64_MAX);
        }
        if (wait_until) {
            atomic_fetch_add(&s->producers_waiting, 1);
            if (s->next_t >= 0 && room_for(s, s->next_seq) && s->next_t <= horizon(s, now)) {
                atomic_fetch_sub(&s->producers_waiting, 1);
                continue;
            }
            struct timespec ts;
            deadline(&ts, wait_until);
            pthread_cond_timedwait(&s->cond, &s->lock, &ts);
            atomic_fetch_sub(&s->producers_waiting, 1);
            continue;
        }
        uint64_t seq = s->next_seq++, n = s->next_n;
        int64_t t = s->next_t;
        struct workload_item it = {0};
        struct flood_err e = {0};
        int rc = skip_to(s, n, &e);
        if (rc == 0)
            rc = workload_build_at_ns(s->w, n, s->wall0_ns + t, &it, &e);
        advance(s);
        pthread_mutex_unlock(&s->lock);
        struct signer_req *r = NULL;
        if (rc == 0) {
            r = make_req(s, &it, t, &u, &e);
            if (r)
                r->seq = seq;
        }
        workload_item_free(&it);
        if (!r) {
            fail(s, &e);
            pthread_mutex_lock(&s->lock);
            break;
        }
        if (s->o.bytes_max) {
            uint64_t held = atomic_fetch_add(&s->bytes_held, req_bytes(r)) + req_bytes(r);
            uint64_t peak = atomic_load(&s->bytes_peak);
            while (held > peak && !atomic_compare_exchange_weak(&s->bytes_peak, &peak, held))
                ;
        }
        atomic_store(&s->ring[seq % s->ring_len], r);
        atomic_fetch_add(&s->signed_n, 1);
        struct signer_consumer *c = consumer_of(s, seq);
        if (atomic_load(&c->waiting) == seq) {
            uint64_t one = 1;
            if (write(c->wake_fd, &one, sizeof(one)) < 0) {
                /* already signalled */
            }
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

struct signer *signer_new(struct crowd *crowd, struct workload *w, const struct sched *sched,
                          const struct signer_opts *o, struct flood_err *err)
{
    if (o->threads < 1 || o->threads > 256) {
        flood_err_set(err, FLOOD_EINVAL, "--signers: must be 1..256");
        return NULL;
    }
    if (o->consumers < 0 || o->consumers > SIGNER_CONSUMERS_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "signer: %d consumers (1..%d)", o->consumers,
                      SIGNER_CONSUMERS_MAX);
        return NULL;
    }
    struct signer *s = flood_xcalloc(1, sizeof(*s));
    s->crowd = crowd;
    s->w = w;
    s->o = *o;
    s->sched = *sched;
    sched_rewind(&s->sched);
    s->all = s->sched;
    sched_set_shard(&s->all, 0, 0);
    s->head0 = flood_xasprintf(CT_HEADER "\r\nAccept: application/activity+json\r\n"
                                         "User-Agent: %s\r\n",
                               o->user_agent ? o->user_agent : "flood");
    s->head0_len = strlen(s->head0);
    s->n_cons = o->consumers > 1 ? (uint64_t)o->consumers : 1;
    s->ring_len = o->lookahead_max ? o->lookahead_max : 4096;
    s->ring_len = (s->ring_len + s->n_cons - 1) / s->n_cons * s->n_cons;
    s->lookahead_ns = (int64_t)((o->lookahead_s > 0 ? o->lookahead_s : 1.0) * 1e9);
    s->ring = flood_xcalloc(s->ring_len, sizeof(*s->ring));
    s->cons = flood_xcalloc(s->n_cons, sizeof(*s->cons));
    int fds_ok = 1;
    for (uint64_t k = 0; k < s->n_cons; k++) {
        atomic_init(&s->cons[k].next, k);
        atomic_init(&s->cons[k].waiting, UINT64_MAX);
        s->cons[k].wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        fds_ok &= s->cons[k].wake_fd >= 0;
    }
    atomic_init(&s->failed, 0);
    atomic_init(&s->signed_n, 0);
    atomic_init(&s->bytes_held, 0);
    atomic_init(&s->bytes_peak, 0);
    atomic_init(&s->producers_waiting, 0);
    atomic_init(&s->refill_seq, UINT64_MAX);
    atomic_flag_clear(&s->fail_once);
    atomic_flag_clear(&s->raised_once);
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (!fds_ok) {
        flood_err_set(err, FLOOD_EIO, "signer: eventfd: %s", strerror(errno));
        signer_free(s);
        return NULL;
    }
    if (o->bad_share > 0 && o->n_dialects > 0) {
        const struct sign_key *k = crowd_key(crowd, 1, 1);
        enum sign_key_type type = k ? sign_key_type(k) : SIGN_KEY_RSA;
        int bits = crowd->opts.key_bits > 0 ? crowd->opts.key_bits : 2048;
        s->rogue = sign_key_generate(type, bits, err);
        if (!s->rogue) {
            signer_free(s);
            return NULL;
        }
    }
    return s;
}

int signer_start(struct signer *s, int64_t mono0_ns, int64_t wall0_ns, struct flood_err *err)
{
    s->mono0_ns = mono0_ns;
    s->wall0_ns = wall0_ns;
    advance(s);
    s->threads = flood_xcalloc((size_t)s->o.threads, sizeof(*s->threads));
    for (int i = 0; i < s->o.threads; i++) {
        int rc = pthread_create(&s->threads[i], NULL, signer_main, s);
        if (rc) {
            flood_err_set(err, FLOOD_EIO, "signer: cannot start a thread: %s", strerror(rc));
            signer_stop(s);
            return -1;
        }
        s->n_threads++;
    }
    return 0;
}

struct signer_req *signer_take(struct signer *s, uint64_t seq)
{
    struct signer_req *r = atomic_exchange(&s->ring[seq % s->ring_len], NULL);
    if (!r)
        return NULL;
    if (r->seq != seq) { /* cannot happen when taken in order; put it back */
        atomic_store(&s->ring[seq % s->ring_len], r);
        return NULL;
    }
    atomic_store(&consumer_of(s, seq)->next, seq + s->n_cons);
    if (s->o.bytes_max)
        atomic_fetch_sub(&s->bytes_held, req_bytes(r));
    if (atomic_load(&s->producers_waiting) > 0 &&
        seq + s->ring_len >= atomic_load(&s->refill_seq)) {
        pthread_mutex_lock(&s->lock);
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
    }
    return r;
}

void signer_steer(struct signer *s, enum signer_steer_kind kind, double t_s, double rate,
                  double ramp_s)
{
    pthread_mutex_lock(&s->lock);
    struct flood_err e;
    if (kind == SIGNER_STEER_PAUSE)
        sched_pause(&s->sched, t_s);
    else if (kind == SIGNER_STEER_RESUME)
        sched_resume(&s->sched, t_s);
    else if (sched_steer_rate(&s->sched, t_s, rate, ramp_s, &e)) {
        /* checked by the sender first: cannot fail here */
    }
    s->next_t = s->next_t >= 0 ? sched_steer_retime(&s->sched) : sched_next(&s->sched);
    s->next_n = sched_index(&s->sched);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

int signer_wake_fd(const struct signer *s, int consumer)
{
    return consumer >= 0 && (uint64_t)consumer < s->n_cons ? s->cons[consumer].wake_fd : -1;
}

void signer_wait_for(struct signer *s, uint64_t seq)
{
    atomic_store(&consumer_of(s, seq)->waiting, seq);
}

int signer_failed(struct signer *s, struct flood_err *err)
{
    if (!atomic_load(&s->failed))
        return 0;
    if (err)
        *err = s->fail_err;
    return 1;
}

void signer_stop(struct signer *s)
{
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < s->n_threads; i++)
        pthread_join(s->threads[i], NULL);
    s->n_threads = 0;
    for (size_t i = 0; i < s->ring_len; i++) {
        struct signer_req *r = atomic_exchange(&s->ring[i], NULL);
        if (r) {
            s->left++;
            if (s->o.bytes_max)
                atomic_fetch_sub(&s->bytes_held, req_bytes(r));
        }
        signer_req_free(r);
    }
}

void signer_counts(struct signer *s, struct signer_counts *out)
{
    pthread_mutex_lock(&s->lock);
    uint64_t claimed = s->next_seq;
    int past = s->next_t < 0 || s->next_t >= s->lookahead_ns;
    uint64_t left = s->left;
    pthread_mutex_unlock(&s->lock);
    out->signed_n = atomic_load(&s->signed_n);
    out->bytes_held = atomic_load(&s->bytes_held);
    out->bytes_peak = atomic_load(&s->bytes_peak);
    out->left = left;
    /* every request claimed is in the ring (none half-signed) and the next is past it */
    out->window_done = past && out->signed_n == claimed;
}

void signer_free(struct signer *s)
{
    if (!s)
        return;
    signer_stop(s);
    free(s->threads);
    free(s->ring);
    free(s->head0);
    sign_key_free(s->rogue);
    for (uint64_t k = 0; s->cons && k < s->n_cons; k++)
        if (s->cons[k].wake_fd >= 0)
            close(s->cons[k].wake_fd);
    free(s->cons);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s);
}
