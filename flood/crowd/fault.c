/* flood/crowd/fault.c: --fault SPEC parsing and the per-request decision (see fault.h). */
#include "flood/crowd/fault.h"

#include "flood/core/grammar.h"

#include <ctype.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAULT_DELAY_MAX_MS  (3600L * 1000L)
#define FAULT_WINDOW_MAX_MS (7L * 86400L * 1000L) /* from= and until=: a week */

static _Atomic uint64_t fault_state = 0x853c49e6748fea9bULL;

void fault_seed(uint64_t seed)
{
    atomic_store(&fault_state, seed);
}

uint64_t fault_random(void)
{
    /* splitmix64 over an atomic counter: every caller gets its own step, no lock */
    uint64_t z = atomic_fetch_add(&fault_state, 0x9e3779b97f4a7c15ULL) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A key's value into the rule: 0, or -1 and err (the grammar's refusal, naming the key). */
typedef int (*fault_set_fn)(struct fault_rule *r, const char *what, const char *v, size_t n,
                            struct flood_err *err);

static int set_delay(struct fault_rule *r, const char *what, const char *v, size_t n,
                     struct flood_err *err)
{
    return gram_duration_ms(what, v, n, GRAM_BARE_NONE, 0, FAULT_DELAY_MAX_MS, &r->delay_ms, err);
}

static int set_jitter(struct fault_rule *r, const char *what, const char *v, size_t n,
                      struct flood_err *err)
{
    return gram_duration_ms(what, v, n, GRAM_BARE_NONE, 0, FAULT_DELAY_MAX_MS, &r->jitter_ms, err);
}

static int set_status(struct fault_rule *r, const char *what, const char *v, size_t n,
                      struct flood_err *err)
{
    uint64_t s;
    if (gram_uint(what, v, n, 400, 599, &s, err))
        return -1;
    r->status = (int)s;
    return 0;
}

static int set_retry_after(struct fault_rule *r, const char *what, const char *v, size_t n,
                           struct flood_err *err)
{
    uint64_t s;
    if (gram_uint(what, v, n, 0, 86400, &s, err))
        return -1;
    r->retry_after = (long)s;
    return 0;
}

static int set_gone(struct fault_rule *r, const char *what, const char *v, size_t n,
                    struct flood_err *err)
{
    (void)what, (void)v, (void)n, (void)err;
    r->status = 410;
    return 0;
}

static int set_reset(struct fault_rule *r, const char *what, const char *v, size_t n,
                     struct flood_err *err)
{
    (void)what, (void)v, (void)n, (void)err;
    r->reset = 1;
    return 0;
}

static int set_hang(struct fault_rule *r, const char *what, const char *v, size_t n,
                    struct flood_err *err)
{
    (void)what, (void)v, (void)n, (void)err;
    r->hang = 1;
    return 0;
}

static int set_share(struct fault_rule *r, const char *what, const char *v, size_t n,
                     struct flood_err *err)
{
    double f;
    /* at least one request in a million: a share of 0 would be no rule at all */
    if (gram_share(what, v, n, GRAM_SHARE_PERCENT, 1e-6, 1, &f, err))
        return -1;
    r->share_ppm = (uint32_t)lround(f * 1e6);
    return 0;
}

static const char *const scope_names[] = {"get",   "inbox",  "all",       "nodeinfo", "webfinger",
                                          "actor", "key",    "note",      "media",    "link",
                                          "emoji", "avatar", "collection"};
static const unsigned scope_bits[] = {
    FAULT_SCOPE_GET,       FAULT_SCOPE_INBOX, FAULT_SCOPE_ALL,   FAULT_SCOPE_NODEINFO,
    FAULT_SCOPE_WEBFINGER, FAULT_SCOPE_ACTOR, FAULT_SCOPE_KEY,   FAULT_SCOPE_NOTE,
    FAULT_SCOPE_MEDIA,     FAULT_SCOPE_LINK,  FAULT_SCOPE_EMOJI, FAULT_SCOPE_AVATAR,
    FAULT_SCOPE_COLLECTION};

/* scope=KIND[+KIND...]: each item one of scope_names (an empty item is refused). */
static int set_scope(struct fault_rule *r, const char *what, const char *v, size_t n,
                     struct flood_err *err)
{
    char kw[96];
    snprintf(kw, sizeof(kw), "%s (joined with '+')", what);
    unsigned bits = 0;
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, v, n, '+');
    while (gram_list_next(&l, &it)) {
        int k;
        if (gram_keyword(kw, it.s, it.n, scope_names, sizeof(scope_names) / sizeof(scope_names[0]),
                         &k, err))
            return -1;
        bits |= scope_bits[k];
    }
    r->scope = bits;
    return 0;
}

static int set_from(struct fault_rule *r, const char *what, const char *v, size_t n,
                    struct flood_err *err)
{
    return gram_duration_ms(what, v, n, GRAM_BARE_NONE, 0, FAULT_WINDOW_MAX_MS, &r->from_ms, err);
}

static int set_until(struct fault_rule *r, const char *what, const char *v, size_t n,
                     struct flood_err *err)
{
    /* until=0s would end the fault before it began */
    return gram_duration_ms(what, v, n, GRAM_BARE_NONE, 1, FAULT_WINDOW_MAX_MS, &r->until_ms, err);
}

/* The keys of a SPEC, in the order of fault.h; flag: takes no value. */
static const struct {
    const char *name;
    int flag;
    fault_set_fn set;
} fault_keys[] = {
    {"delay", 0, set_delay},   {"jitter", 0, set_jitter},
    {"status", 0, set_status}, {"retry-after", 0, set_retry_after},
    {"gone", 1, set_gone},     {"reset", 1, set_reset},
    {"hang", 1, set_hang},     {"share", 0, set_share},
    {"scope", 0, set_scope},   {"from", 0, set_from},
    {"until", 0, set_until},
};
enum { KEY_STATUS = 2, KEY_RETRY_AFTER = 3, KEY_GONE = 4, KEY_FROM = 9, KEY_UNTIL = 10 };

static int valid_selector(const char *s)
{
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
            return 0;
    return 1;
}

/* The selector before the colon into out->sel: 0, or -1 and err. */
static int parse_selector(const char *spec, struct fault_rule *out, const char **rest,
                          struct flood_err *err)
{
    const char *colon = strchr(spec, ':');
    if (!colon) {
        flood_err_set(err, FLOOD_EINVAL, "fault: expected INSTANCE:KEY=VAL in '%s'", spec);
        return -1;
    }
    size_t sel_len = (size_t)(colon - spec);
    if (sel_len == 0 || sel_len >= FAULT_SEL_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "fault: missing or too long instance in '%s'", spec);
        return -1;
    }
    memcpy(out->sel, spec, sel_len);
    out->sel[sel_len] = '\0';
    if (!valid_selector(out->sel)) {
        flood_err_set(err, FLOOD_EINVAL, "fault: bad instance '%s' in '%s'", out->sel, spec);
        return -1;
    }
    *rest = colon + 1;
    if (!**rest) {
        flood_err_set(err, FLOOD_EINVAL, "fault: no KEY=VAL after the instance in '%s'", spec);
        return -1;
    }
    return 0;
}

/* One KEY[=VAL] item: its key's index into *key, the value set. 0, or -1 and err. */
static int parse_item(const char *spec, const struct gram_item *it, unsigned *seen,
                      struct fault_rule *out, struct flood_err *err)
{
    if (!it->n) {
        flood_err_set(err, FLOOD_EINVAL, "fault: empty item in '%s'", spec);
        return -1;
    }
    size_t k = 0, nk = sizeof(fault_keys) / sizeof(fault_keys[0]);
    while (k < nk && !gram_eq(it->key, it->key_n, fault_keys[k].name))
        k++;
    if (k == nk) {
        flood_err_set(err, FLOOD_EINVAL, "fault: unknown key '%.*s' in '%s'", (int)it->key_n,
                      it->key, spec);
        return -1;
    }
    const char *name = fault_keys[k].name;
    if (*seen & (1u << k)) {
        flood_err_set(err, FLOOD_EINVAL, "fault: key '%s' given twice in '%s'", name, spec);
        return -1;
    }
    *seen |= 1u << k;
    if (fault_keys[k].flag && it->val) {
        flood_err_set(err, FLOOD_EINVAL, "fault: '%s' takes no value in '%s'", name, spec);
        return -1;
    }
    if (!fault_keys[k].flag && (!it->val || !it->val_n)) {
        flood_err_set(err, FLOOD_EINVAL, "fault: '%s' needs a value in '%s'", name, spec);
        return -1;
    }
    char what[48];
    snprintf(what, sizeof(what), "fault '%s'", name);
    if (fault_keys[k].set(out, what, it->val, it->val_n, err)) {
        /* the grammar's refusal, with the spec it came from */
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        flood_err_set(err, FLOOD_EINVAL, "%s in '%s'", msg, spec);
        return -1;
    }
    return 0;
}

/* The keys that cannot go together, and an effect required. 0, or -1 and err. */
static int check_rule(const char *spec, unsigned seen, const struct fault_rule *out,
                      struct flood_err *err)
{
    if ((seen & (1u << KEY_GONE)) && (seen & (1u << KEY_STATUS))) {
        flood_err_set(err, FLOOD_EINVAL, "fault: 'gone' and 'status' together in '%s'", spec);
        return -1;
    }
    if (out->reset && out->hang) {
        flood_err_set(err, FLOOD_EINVAL, "fault: 'reset' and 'hang' together in '%s'", spec);
        return -1;
    }
    if ((out->reset || out->hang) && out->status) {
        flood_err_set(err, FLOOD_EINVAL, "fault: '%s' cannot carry a status in '%s'",
                      out->reset ? "reset" : "hang", spec);
        return -1;
    }
    if ((seen & (1u << KEY_RETRY_AFTER)) && !out->status) {
        flood_err_set(err, FLOOD_EINVAL, "fault: 'retry-after' needs a status in '%s'", spec);
        return -1;
    }
    if ((seen & (1u << KEY_UNTIL)) && out->until_ms <= out->from_ms) {
        flood_err_set(err, FLOOD_EINVAL,
                      "fault: 'until' (%ld ms) must come after 'from' (%ld ms) in '%s'",
                      out->until_ms, out->from_ms, spec);
        return -1;
    }
    if (!out->delay_ms && !out->jitter_ms && !out->status && !out->reset && !out->hang) {
        flood_err_set(err, FLOOD_EINVAL,
                      "fault: no effect (delay, jitter, status, gone, reset or hang) in '%s'",
                      spec);
        return -1;
    }
    return 0;
}

int fault_parse(const char *spec, struct fault_rule *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    out->share_ppm = 1000000;
    out->scope = FAULT_SCOPE_ALL;
    if (!spec || strlen(spec) >= FAULT_SPEC_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "fault: spec too long (at most %d bytes)",
                      FAULT_SPEC_MAX - 1);
        return -1;
    }
    snprintf(out->spec, sizeof(out->spec), "%s", spec);
    const char *items;
    if (parse_selector(spec, out, &items, err))
        return -1;
    unsigned seen = 0; /* one bit per key, to refuse repeats */
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, items, GRAM_NUL, ',');
    while (gram_list_next(&l, &it))
        if (parse_item(spec, &it, &seen, out, err))
            return -1;
    return check_rule(spec, seen, out, err);
}

int fault_active(const struct fault_rule *r, long now_ms)
{
    return now_ms >= r->from_ms && (!r->until_ms || now_ms < r->until_ms);
}

/* Instance index named by s: a full host ("flood3.test") or its first label ("flood3");
 * 0 when none. */
static int instance_of_name(const struct wf_crowd *c, const char *s, size_t len)
{
    char host[WF_HOST_MAX];
    for (int i = 1; i <= c->instances; i++) {
        wf_host(c, i, host);
        size_t hl = strlen(host);
        const char *dot = strchr(host, '.');
        size_t label = dot ? (size_t)(dot - host) : hl;
        if ((hl == len && !strncasecmp(host, s, len)) ||
            (label == len && !strncasecmp(host, s, len)))
            return i;
    }
    return 0;
}

int fault_rule_resolve(struct fault_rule *r, const struct wf_crowd *c, struct flood_err *err)
{
    if (!strcmp(r->sel, "all")) {
        r->first = 1;
        r->last = c->instances;
        return 0;
    }
    size_t len = strlen(r->sel);
    int i = instance_of_name(c, r->sel, len);
    if (i) {
        r->first = r->last = i;
        return 0;
    }
    /* a range: names may hold '-', so try every split */
    for (const char *dash = strchr(r->sel, '-'); dash; dash = strchr(dash + 1, '-')) {
        size_t a_len = (size_t)(dash - r->sel);
        int a = instance_of_name(c, r->sel, a_len);
        int b = instance_of_name(c, dash + 1, len - a_len - 1);
        if (a && b) {
            if (a > b) {
                flood_err_set(err, FLOOD_EINVAL, "fault: range '%s' runs backwards in '%s'", r->sel,
                              r->spec);
                return -1;
            }
            r->first = a;
            r->last = b;
            return 0;
        }
    }
    flood_err_set(err, FLOOD_EINVAL, "fault: no instance '%s' in the crowd (in '%s')", r->sel,
                  r->spec);
    return -1;
}

/* The kind bit of a GET of route kind. */
static unsigned kind_bit(enum wf_route_kind kind)
{
    switch (kind) {
    case WF_ROUTE_WEBFINGER:
    case WF_ROUTE_HOST_META:
        return FAULT_SCOPE_WEBFINGER;
    case WF_ROUTE_ACTOR:
        return FAULT_SCOPE_ACTOR;
    case WF_ROUTE_KEY:
        return FAULT_SCOPE_KEY;
    case WF_ROUTE_NOTE:
    case WF_ROUTE_ACTIVITY:
        return FAULT_SCOPE_NOTE;
    case WF_ROUTE_MEDIA:
        return FAULT_SCOPE_MEDIA;
    case WF_ROUTE_PAGE:
        return FAULT_SCOPE_LINK;
    case WF_ROUTE_EMOJI:
    case WF_ROUTE_EMOJI_DOC:
        return FAULT_SCOPE_EMOJI;
    case WF_ROUTE_AVATAR:
    case WF_ROUTE_HEADER:
        return FAULT_SCOPE_AVATAR;
    case WF_ROUTE_INBOX:
    case WF_ROUTE_SHARED_INBOX:
    case WF_ROUTE_OUTBOX:
    case WF_ROUTE_FOLLOWERS:
    case WF_ROUTE_FOLLOWING:
        return FAULT_SCOPE_COLLECTION;
    default:
        return 0;
    }
}

unsigned fault_scope_of(const char *method, enum wf_route_kind kind, const char *path)
{
    if (kind == WF_ROUTE_NODEINFO_WK || kind == WF_ROUTE_NODEINFO_20 ||
        kind == WF_ROUTE_NODEINFO_21 ||
        (path && (!strncmp(path, "/.well-known/nodeinfo", 21) || !strncmp(path, "/nodeinfo/", 10))))
        return FAULT_SCOPE_NODEINFO;
    if (method && !strcmp(method, "POST") &&
        (kind == WF_ROUTE_INBOX || kind == WF_ROUTE_SHARED_INBOX))
        return FAULT_SCOPE_INBOX;
    if (method && (!strcmp(method, "GET") || !strcmp(method, "HEAD")))
        return FAULT_SCOPE_GET | kind_bit(kind);
    return FAULT_SCOPE_OTHER;
}

int fault_decide(const struct fault_rule *rules, size_t n, int instance, unsigned scope,
                 long now_ms, struct fault_effect *eff)
{
    int fired = 0;
    memset(eff, 0, sizeof(*eff));
    for (size_t i = 0; i < n; i++) {
        const struct fault_rule *r = &rules[i];
        if (instance < r->first || instance > r->last || !(r->scope & scope) ||
            !fault_active(r, now_ms))
            continue;
        if (r->share_ppm < 1000000 && fault_random() % 1000000 >= r->share_ppm)
            continue;
        fired = 1;
        eff->delay_ms += r->delay_ms;
        if (r->jitter_ms)
            eff->delay_ms += (long)(fault_random() % (uint64_t)(r->jitter_ms + 1));
        if (r->status && !eff->status) {
            eff->status = r->status;
            eff->retry_after = r->retry_after;
        }
        eff->reset |= r->reset;
        eff->hang |= r->hang;
    }
    return fired;
}
