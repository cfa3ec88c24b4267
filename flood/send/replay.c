/* flood/send/replay.c: reading a real inbox's arrival pattern (see replay.h). */
#include "flood/send/replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/hash.h"
#include "flood/measure/stats.h"

#define NS 1000000000LL

/* One event as read, before the origins are ranked and the times sorted. */
struct raw {
    int64_t t; /* ns, absolute (epoch) or as the file counts */
    uint32_t oid, seq;
    int8_t op;
};

struct parse {
    const char *file;
    int line;
    struct raw *raw;
    size_t n, cap;
    char **names; /* origins by first appearance */
    uint64_t *counts;
    size_t n_names, cap_names;
    uint32_t *slots; /* open addressing: name index + 1, 0 empty */
    size_t n_slots;
    int header_done;
    const char *line_end; /* of the line being read: messages quote no further */
    struct replay *out;
};

static void slots_grow(struct parse *p)
{
    size_t n = p->n_slots ? p->n_slots * 2 : 256;
    uint32_t *s = flood_xcalloc(n, sizeof(*s));
    for (size_t i = 0; i < p->n_names; i++) {
        size_t j = hash_fnv1a(p->names[i], strlen(p->names[i])) & (n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(p->slots);
    p->slots = s;
    p->n_slots = n;
}

/* The index of origin name[len] (lowercased), added when new. */
static uint32_t origin_id(struct parse *p, const char *name, size_t len)
{
    char buf[REPLAY_ORIGIN_MAX + 1];
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    buf[len] = 0;
    if ((p->n_names + 1) * 2 > p->n_slots)
        slots_grow(p);
    size_t j = hash_fnv1a(buf, len) & (p->n_slots - 1);
    while (p->slots[j]) {
        uint32_t id = p->slots[j] - 1;
        if (!strcmp(p->names[id], buf))
            return id;
        j = (j + 1) & (p->n_slots - 1);
    }
    if (p->n_names == p->cap_names) {
        p->cap_names = p->cap_names ? p->cap_names * 2 : 64;
        p->names = flood_xrealloc(p->names, p->cap_names * sizeof(*p->names));
        p->counts = flood_xrealloc(p->counts, p->cap_names * sizeof(*p->counts));
    }
    p->names[p->n_names] = flood_xstrdup(buf);
    p->counts[p->n_names] = 0;
    p->slots[j] = (uint32_t)p->n_names + 1;
    return (uint32_t)p->n_names++;
}

static int fail(struct parse *p, struct flood_err *err, const char *what, const char *detail)
{
    int n = 0;
    if (detail && p->line_end > detail)
        n = p->line_end - detail > 60 ? 60 : (int)(p->line_end - detail);
    flood_err_set(err, FLOOD_EINVAL, "replay: %s:%d: %s%s%.*s%s", p->file, p->line, what,
                  detail ? " '" : "", n, detail ? detail : "", detail ? "'" : "");
    return -1;
}

static int add(struct parse *p, int64_t t, const char *origin, size_t olen, int op,
               struct flood_err *err)
{
    if (olen == 0)
        return fail(p, err, "no origin", NULL);
    if (olen > REPLAY_ORIGIN_MAX)
        return fail(p, err, "origin longer than 255 bytes", NULL);
    if (p->n >= REPLAY_EVENTS_MAX)
        return fail(p, err, "more than 50,000,000 events", NULL);
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 1024;
        p->raw = flood_xrealloc(p->raw, p->cap * sizeof(*p->raw));
    }
    uint32_t id = origin_id(p, origin, olen);
    p->counts[id]++;
    p->raw[p->n] = (struct raw){.t = t, .oid = id, .seq = (uint32_t)p->n, .op = (int8_t)op};
    p->n++;
    return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

static int civil_ok(int y, int mo, int d, int h, int mi, int s)
{
    return y >= 1970 && y <= 2200 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 &&
           mi <= 59 && s <= 60;
}

/* "10/Oct/2000:13:55:36 -0700" (exactly) into ns since the epoch. */
static int clf_time(const char *s, size_t len, int64_t *out)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int d, y, h, mi, sec, oh, om, mo = 0;
    if (len != 26 || s[2] != '/' || s[6] != '/' || s[11] != ':' || s[14] != ':' || s[17] != ':' ||
        s[20] != ' ' || (s[21] != '+' && s[21] != '-'))
        return -1;
    for (int i = 0; i < 12; i++)
        if (!strncmp(months + 3 * i, s + 3, 3))
            mo = i + 1;
    if (!mo || digits(s, 2, &d) || digits(s + 7, 4, &y) || digits(s + 12, 2, &h) ||
        digits(s + 15, 2, &mi) || digits(s + 18, 2, &sec) || digits(s + 22, 2, &oh) ||
        digits(s + 24, 2, &om) || !civil_ok(y, mo, d, h, mi, sec) || oh > 14 || om > 59)
        return -1;
    int64_t t = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec;
    t -= (s[21] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    *out = t * NS;
    return 0;
}

/* A CSV time: seconds as a decimal number, or ISO-8601 "YYYY-MM-DDTHH:MM:SS[.f][Z|+HH:MM]". */
static int csv_time(const char *s, size_t len, int64_t *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    int y, mo, d, h, mi, sec;
    if (len >= 19 && buf[4] == '-' && buf[7] == '-' && (buf[10] == 'T' || buf[10] == ' ')) {
        if (digits(buf, 4, &y) || digits(buf + 5, 2, &mo) || digits(buf + 8, 2, &d) ||
            digits(buf + 11, 2, &h) || buf[13] != ':' || digits(buf + 14, 2, &mi) ||
            buf[16] != ':' || digits(buf + 17, 2, &sec) || !civil_ok(y, mo, d, h, mi, sec))
            return -1;
        int64_t frac = 0, scale = NS;
        const char *p = buf + 19;
        if (*p == '.') {
            p++;
            if (*p < '0' || *p > '9')
                return -1;
            for (; *p >= '0' && *p <= '9'; p++)
                if (scale > 1) {
                    scale /= 10;
                    frac += (*p - '0') * scale;
                }
        }
        int64_t off = 0;
        if (*p == '+' || *p == '-') {
            int oh, om;
            if (strlen(p) != 6 || p[3] != ':' || digits(p + 1, 2, &oh) || digits(p + 4, 2, &om))
                return -1;
            off = (*p == '-' ? -1 : 1) * (oh * 3600 + om * 60);
            p += 6;
        } else if (*p == 'Z')
            p++;
        if (*p)
            return -1;
        int64_t t =
            days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec - off;
        *out = t * NS + frac;
        return 0;
    }
    /* decimal seconds, read exactly (a double loses the nanoseconds of Unix times) */
    int64_t whole = 0, frac = 0, scale = NS;
    const char *p = buf;
    if (*p == '.' && !(p[1] >= '0' && p[1] <= '9'))
        return -1;
    if (*p != '.' && !(*p >= '0' && *p <= '9'))
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (*p - '0');
        if (whole > 9000000000LL) /* past 2255: beyond int64 nanoseconds */
            return -1;
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
    }
    if (*p)
        return -1;
    *out = whole * NS + frac;
    return 0;
}

/* An activity type or a --mix name to an op; -2 for a type no name fits. */
static int type_op(const char *s, size_t len)
{
    static const struct {
        const char *name;
        enum op_kind op;
    } types[] = {
        {"Create", OP_CREATE},     {"Like", OP_LIKE},
        {"Follow", OP_FOLLOW},     {"Undo", OP_UNDO},
        {"Announce", OP_ANNOUNCE}, {"Update", OP_UPDATE},
        {"Delete", OP_DELETE},     {"EmojiReact", OP_EMOJI_REACT},
    };
    if (len == 0)
        return -1;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strlen(types[i].name) == len && !strncmp(types[i].name, s, len))
            return types[i].op;
    for (int i = 0; i < OP__COUNT; i++)
        if (strlen(op_name((enum op_kind)i)) == len && !strncmp(op_name((enum op_kind)i), s, len))
            return i;
    return -2;
}

/* The host of a URL or a bare host, into *h, *hlen (borrowing s). */
static void host_of(const char *s, size_t len, const char **h, size_t *hlen)
{
    const char *e = s + len;
    const char *sep = NULL;
    for (const char *p = s; p + 2 < e; p++)
        if (p[0] == ':' && p[1] == '/' && p[2] == '/') {
            sep = p + 3;
            break;
        }
    if (sep)
        s = sep;
    const char *q = s;
    while (q < e && *q != '/' && *q != '?' && *q != '#' && *q != ' ' && *q != ')' && *q != ';' &&
           *q != '"' && *q != '>')
        q++;
    *h = s;
    *hlen = (size_t)(q - s);
}

static const char *trim(const char *s, const char *e, const char **end)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    if (e - s >= 2 && *s == '"' && e[-1] == '"') {
        s++;
        e--;
    }
    *end = e;
    return s;
}

static int csv_line(struct parse *p, const char *s, const char *e, struct flood_err *err)
{
    const char *f[3] = {0}, *fe[3] = {0};
    int nf = 0;
    const char *c = s;
    while (nf < 3) {
        const char *comma = memchr(c, ',', (size_t)(e - c));
        const char *end = comma ? comma : e;
        f[nf] = trim(c, end, &fe[nf]);
        nf++;
        if (!comma)
            break;
        c = comma + 1;
        if (nf == 3)
            return fail(p, err, "expected time,origin,type: more than three fields", NULL);
    }
    if (!p->header_done) {
        p->header_done = 1;
        if (fe[0] - f[0] >= 4 && !strncmp(f[0], "time", 4))
            return 0;
    }
    if (nf < 2)
        return fail(p, err, "expected time,origin[,type] or an access-log line, got", s);
    int64_t t;
    if (csv_time(f[0], (size_t)(fe[0] - f[0]), &t))
        return fail(p, err, "bad time (seconds, or ISO-8601 like 2024-10-10T13:55:36.250Z)", f[0]);
    const char *h;
    size_t hl;
    host_of(f[1], (size_t)(fe[1] - f[1]), &h, &hl);
    int op = nf == 3 ? type_op(f[2], (size_t)(fe[2] - f[2])) : -1;
    if (op == -2) {
        p->out->untyped++;
        op = -1;
    }
    return add(p, t, h, hl, op, err);
}

/* A path whose last segment is "inbox" (the query left out). */
static int inbox_path(const char *s, size_t len)
{
    const char *q = memchr(s, '?', len);
    if (q)
        len = (size_t)(q - s);
    while (len > 1 && s[len - 1] == '/')
        len--;
    return len >= 6 && !strncmp(s + len - 6, "/inbox", 6);
}

/* The next "quoted" field at *c (backslash escapes kept), its content in [*fs, *fe). */
static int quoted(const char **c, const char *e, const char **fs, const char **fe)
{
    const char *p = *c;
    while (p < e && *p == ' ')
        p++;
    if (p >= e || *p != '"')
        return -1;
    p++;
    *fs = p;
    while (p < e && *p != '"') {
        if (*p == '\\' && p + 1 < e)
            p++;
        p++;
    }
    if (p >= e)
        return -1;
    *fe = p;
    *c = p + 1;
    return 0;
}

static int access_line(struct parse *p, const char *s, const char *e, struct flood_err *err)
{
    p->out->access_log = 1;
    p->header_done = 1;
    const char *sp = memchr(s, ' ', (size_t)(e - s));
    const char *lb = memchr(s, '[', (size_t)(e - s));
    if (!sp || !lb || lb < sp)
        return fail(p, err, "access log: expected ADDR - - [TIME] \"REQUEST\", got", s);
    const char *rb = memchr(lb, ']', (size_t)(e - lb));
    int64_t t;
    if (!rb || clf_time(lb + 1, (size_t)(rb - lb - 1), &t))
        return fail(p, err, "access log: bad time (expected [10/Oct/2024:13:55:36 +0000]), got",
                    lb);
    const char *c = rb + 1, *rq, *rqe;
    if (quoted(&c, e, &rq, &rqe))
        return fail(p, err, "access log: expected the \"REQUEST\" after the time", NULL);
    while (c < e && *c == ' ')
        c++;
    const char *st = c; /* the status: three digits (the line is not NUL-terminated) */
    while (c < e && *c >= '0' && *c <= '9')
        c++;
    if (c - st != 3 || *st == '0' || (c < e && *c != ' '))
        return fail(p, err, "access log: expected a status after the request", NULL);
    const char *ref, *refe, *ua = NULL, *uae = NULL;
    while (c < e && *c == ' ')
        c++;
    while (c < e && *c != ' ') /* bytes sent, or "-" */
        c++;
    if (quoted(&c, e, &ref, &refe) == 0 && quoted(&c, e, &ua, &uae))
        return fail(p, err, "access log: a referer without the user agent after it", NULL);
    /* METHOD PATH PROTO; anything else ("-", a bad request) is not an inbox POST */
    const char *m2 = memchr(rq, ' ', (size_t)(rqe - rq));
    if (!m2 || m2 - rq != 4 || strncmp(rq, "POST", 4)) {
        p->out->skipped++;
        return 0;
    }
    const char *path = m2 + 1, *pe = memchr(path, ' ', (size_t)(rqe - path));
    if (!pe)
        pe = rqe;
    if (!inbox_path(path, (size_t)(pe - path))) {
        p->out->skipped++;
        return 0;
    }
    const char *h = s;
    size_t hl = (size_t)(sp - s);
    for (const char *q = ua; ua && q + 7 < uae; q++) /* the instance's URL in the agent */
        if (!strncmp(q, "http://", 7) || (q + 8 < uae && !strncmp(q, "https://", 8))) {
            const char *hh;
            size_t hhl;
            host_of(q, (size_t)(uae - q), &hh, &hhl);
            if (hhl) {
                h = hh;
                hl = hhl;
            }
            break;
        }
    return add(p, t, h, hl, -1, err);
}

static int cmp_raw(const void *a, const void *b)
{
    const struct raw *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const struct parse *rank_ctx;
static int cmp_rank(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t cx = rank_ctx->counts[x], cy = rank_ctx->counts[y];
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Rank the origins, sort and spread the times, fill out. */
static void finish(struct parse *p, struct replay *r)
{
    uint32_t *order = flood_xmalloc(p->n_names * sizeof(*order));
    uint32_t *rank = flood_xmalloc(p->n_names * sizeof(*rank));
    for (size_t i = 0; i < p->n_names; i++)
        order[i] = (uint32_t)i;
    rank_ctx = p; /* qsort has no context argument; parsing is single-threaded per call */
    qsort(order, p->n_names, sizeof(*order), cmp_rank);
    rank_ctx = NULL;
    r->origins = flood_xmalloc(p->n_names * sizeof(*r->origins));
    r->origin_events = flood_xmalloc(p->n_names * sizeof(*r->origin_events));
    for (size_t i = 0; i < p->n_names; i++) {
        rank[order[i]] = (uint32_t)i;
        r->origins[i] = p->names[order[i]];
        r->origin_events[i] = p->counts[order[i]];
    }
    r->n_origins = p->n_names;
    free(p->names);
    p->names = NULL;
    p->n_names = 0;
    if (p->n)
        qsort(p->raw, p->n, sizeof(*p->raw), cmp_raw);
    int whole = 1;
    for (size_t i = 0; i < p->n && whole; i++)
        whole = p->raw[i].t % NS == 0;
    r->whole_seconds = whole;
    r->ev = flood_xmalloc(p->n * sizeof(*r->ev));
    int64_t t0 = p->raw[0].t;
    for (size_t i = 0; i < p->n;) {
        size_t j = i;
        while (j < p->n && p->raw[j].t == p->raw[i].t)
            j++;
        for (size_t k = i; k < j; k++) {
            int64_t t = p->raw[k].t - t0;
            if (whole) /* k-th of n in this second at k/n */
                t += (int64_t)((k - i) * (uint64_t)NS / (j - i));
            r->ev[k] =
                (struct replay_event){.t_ns = t, .origin = rank[p->raw[k].oid], .op = p->raw[k].op};
        }
        i = j;
    }
    r->n = p->n;
    r->duration_s = (double)(p->raw[p->n - 1].t - t0) / 1e9 + (whole ? 1 : 0);
    free(order);
    free(rank);
}

int replay_parse(const char *text, size_t len, const char *file, struct replay *out,
                 struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    struct parse p = {.file = file ? file : "-", .out = out};
    const char *s = text, *e = text + len;
    int rc = 0;
    while (s < e && rc == 0) {
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        const char *le = nl ? nl : e;
        p.line++;
        size_t ll = (size_t)(le - s);
        if (ll && s[ll - 1] == '\r')
            ll--;
        le = s + ll;
        if (ll > REPLAY_LINE_MAX)
            rc = fail(&p, err, "line longer than 8192 bytes", NULL);
        else if (ll && memchr(s, '\0', ll))
            rc = fail(&p, err, "a NUL byte in the line", NULL);
        else {
            const char *b = s;
            while (b < le && (*b == ' ' || *b == '\t'))
                b++;
            if (b == le || *b == '#')
                ; /* blank or a comment */
            else {
                p.line_end = le;
                if (memmem(b, (size_t)(le - b), " [", 2)) /* ADDR IDENT USER [TIME] */
                    rc = access_line(&p, b, le, err);
                else
                    rc = csv_line(&p, b, le, err);
            }
        }
        s = nl ? nl + 1 : e;
    }
    if (rc == 0 && p.n == 0) {
        flood_err_set(err, FLOOD_EINVAL,
                      "replay: %s: nothing to replay (%llu lines were not inbox "
                      "POSTs)",
                      p.file, (unsigned long long)out->skipped);
        rc = -1;
    }
    if (rc == 0)
        finish(&p, out);
    for (size_t i = 0; i < p.n_names; i++)
        free(p.names[i]);
    free(p.names);
    free(p.counts);
    free(p.slots);
    free(p.raw);
    if (rc)
        replay_free(out);
    return rc;
}

int replay_load(const char *path, struct replay *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    FILE *f = fopen(path, "rb");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "replay: cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = flood_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            if (cap >= ((size_t)4 << 30)) {
                fclose(f);
                free(buf);
                flood_err_set(err, FLOOD_ELIMIT, "replay: '%s' is larger than 4 GiB", path);
                return -1;
            }
            cap *= 2;
            buf = flood_xrealloc(buf, cap);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        flood_err_set(err, FLOOD_EIO, "replay: cannot read '%s'", path);
        return -1;
    }
    int rc = replay_parse(buf, n, path, out, err);
    free(buf);
    return rc;
}

void replay_free(struct replay *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_origins; i++)
        free(r->origins[i]);
    free(r->origins);
    free(r->origin_events);
    free(r->ev);
    memset(r, 0, sizeof(*r));
}

int replay_instance(const struct replay *r, uint32_t rank, int instances)
{
    if (instances < 1)
        return 1;
    if (rank < (uint32_t)instances || rank >= r->n_origins)
        return 1 + (int)(rank % (uint32_t)instances);
    const char *o = r->origins[rank];
    return 1 + (int)(hash_fnv1a(o, strlen(o)) % (uint64_t)instances);
}

int64_t *replay_times(const struct replay *r, double speed)
{
    int64_t *t = flood_xmalloc((r->n ? r->n : 1) * sizeof(*t));
    for (size_t i = 0; i < r->n; i++)
        t[i] = (int64_t)llround((double)r->ev[i].t_ns / speed);
    return t;
}

double replay_peak_rate(const struct replay *r, double speed)
{
    size_t best = 0, j = 0;
    for (size_t i = 0; i < r->n; i++) {
        while ((double)(r->ev[i].t_ns - r->ev[j].t_ns) / speed >= 1e9)
            j++;
        if (i - j + 1 > best)
            best = i - j + 1;
    }
    return (double)best;
}
