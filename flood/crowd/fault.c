/* flood/crowd/fault.c: --fault SPEC parsing and the per-request decision (see fault.h). */
#include "flood/crowd/fault.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAULT_DELAY_MAX_MS (3600L * 1000L)

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

/* A duration "500ms", "2s", "1.5s" into milliseconds; -1 when it does not parse. */
static long parse_duration(const char *v)
{
    const char *p = v;
    long whole = 0, frac = 0, frac_div = 1;
    if (!isdigit((unsigned char)*p))
        return -1;
    while (isdigit((unsigned char)*p)) {
        whole = whole * 10 + (*p++ - '0');
        if (whole > FAULT_DELAY_MAX_MS)
            return -1;
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p)) {
            if (frac_div < 1000000) {
                frac = frac * 10 + (*p - '0');
                frac_div *= 10;
            }
            p++;
        }
    }
    long ms;
    if (!strcmp(p, "ms"))
        ms = whole + (frac * 1 + frac_div / 2) / frac_div;
    else if (!strcmp(p, "s"))
        ms = whole * 1000 + (frac * 1000 + frac_div / 2) / frac_div;
    else
        return -1;
    return ms > FAULT_DELAY_MAX_MS ? -1 : ms;
}

/* A non-negative integer in [lo, hi]; -1 when it does not parse. */
static long parse_int(const char *v, long lo, long hi)
{
    if (!*v || strlen(v) > 9)
        return -1;
    for (const char *p = v; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    long n = strtol(v, NULL, 10);
    return n < lo || n > hi ? -1 : n;
}

/* "20%", "20", "0.5%" into parts per million (1..1,000,000); -1 when bad. */
static long parse_share(const char *v)
{
    char buf[32];
    size_t len = strlen(v);
    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, v, len + 1);
    if (buf[len - 1] == '%')
        buf[--len] = '\0';
    long whole = 0, frac = 0, div = 1;
    const char *p = buf;
    if (!isdigit((unsigned char)*p))
        return -1;
    while (isdigit((unsigned char)*p)) {
        whole = whole * 10 + (*p++ - '0');
        if (whole > 100)
            return -1;
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p)) {
            if (div < 10000) {
                frac = frac * 10 + (*p - '0');
                div *= 10;
            }
            p++;
        }
    }
    if (*p)
        return -1;
    long ppm = whole * 10000 + frac * 10000 / div;
    return ppm < 1 || ppm > 1000000 ? -1 : ppm;
}

static const struct {
    const char *name;
    unsigned bits;
} scope_names[] = {
    {"get", FAULT_SCOPE_GET},
    {"inbox", FAULT_SCOPE_INBOX},
    {"all", FAULT_SCOPE_ALL},
    {"nodeinfo", FAULT_SCOPE_NODEINFO},
    {"webfinger", FAULT_SCOPE_WEBFINGER},
    {"actor", FAULT_SCOPE_ACTOR},
    {"key", FAULT_SCOPE_KEY},
    {"note", FAULT_SCOPE_NOTE},
    {"media", FAULT_SCOPE_MEDIA},
    {"link", FAULT_SCOPE_LINK},
    {"emoji", FAULT_SCOPE_EMOJI},
    {"avatar", FAULT_SCOPE_AVATAR},
    {"collection", FAULT_SCOPE_COLLECTION},
};

static int parse_scope(const char *v, unsigned *out)
{
    unsigned bits = 0;
    const char *p = v;
    while (*p) {
        const char *end = strchr(p, '+');
        size_t n = end ? (size_t)(end - p) : strlen(p), k = 0;
        size_t nk = sizeof(scope_names) / sizeof(scope_names[0]);
        while (k < nk && !(strlen(scope_names[k].name) == n && !strncmp(p, scope_names[k].name, n)))
            k++;
        if (k == nk)
            return -1;
        bits |= scope_names[k].bits;
        if (!end)
            break;
        p = end + 1;
        if (!*p)
            return -1;
    }
    if (!bits)
        return -1;
    *out = bits;
    return 0;
}

static int valid_selector(const char *s)
{
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
            return 0;
    return 1;
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

    char items[FAULT_SPEC_MAX];
    snprintf(items, sizeof(items), "%s", colon + 1);
    if (!items[0]) {
        flood_err_set(err, FLOOD_EINVAL, "fault: no KEY=VAL after the instance in '%s'", spec);
        return -1;
    }
    unsigned seen = 0; /* one bit per key, to refuse repeats */
    int gone = 0;
    /* strtok_r would skip empty items; walk by hand so "a,,b" is an error */
    for (char *item = items;;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (!*item) {
            flood_err_set(err, FLOOD_EINVAL, "fault: empty item in '%s'", spec);
            return -1;
        }
        char *val = strchr(item, '=');
        if (val)
            *val++ = '\0';
        static const char *const keys[] = {"delay", "jitter", "status", "retry-after", "gone",
                                           "reset", "hang",   "share",  "scope"};
        size_t k = 0, nk = sizeof(keys) / sizeof(keys[0]);
        while (k < nk && strcmp(item, keys[k]))
            k++;
        if (k == nk) {
            flood_err_set(err, FLOOD_EINVAL, "fault: unknown key '%s' in '%s'", item, spec);
            return -1;
        }
        if (seen & (1u << k)) {
            flood_err_set(err, FLOOD_EINVAL, "fault: key '%s' given twice in '%s'", item, spec);
            return -1;
        }
        seen |= 1u << k;
        int flag = k == 4 || k == 5 || k == 6;
        if (flag && val) {
            flood_err_set(err, FLOOD_EINVAL, "fault: '%s' takes no value in '%s'", item, spec);
            return -1;
        }
        if (!flag && (!val || !*val)) {
            flood_err_set(err, FLOOD_EINVAL, "fault: '%s' needs a value in '%s'", item, spec);
            return -1;
        }
        long n;
        switch (k) {
        case 0:
        case 1:
            n = parse_duration(val);
            if (n < 0) {
                flood_err_set(err, FLOOD_EINVAL,
                              "fault: bad %s '%s' (e.g. 500ms or 2s, at most 3600s) in '%s'", item,
                              val, spec);
                return -1;
            }
            if (k == 0)
                out->delay_ms = n;
            else
                out->jitter_ms = n;
            break;
        case 2:
            n = parse_int(val, 400, 599);
            if (n < 0) {
                flood_err_set(err, FLOOD_EINVAL, "fault: bad status '%s' (400..599) in '%s'", val,
                              spec);
                return -1;
            }
            out->status = (int)n;
            break;
        case 3:
            n = parse_int(val, 0, 86400);
            if (n < 0) {
                flood_err_set(err, FLOOD_EINVAL,
                              "fault: bad retry-after '%s' (seconds, 0..86400) in '%s'", val, spec);
                return -1;
            }
            out->retry_after = n;
            break;
        case 4:
            gone = 1;
            out->status = 410;
            break;
        case 5:
            out->reset = 1;
            break;
        case 6:
            out->hang = 1;
            break;
        case 7:
            n = parse_share(val);
            if (n < 0) {
                flood_err_set(err, FLOOD_EINVAL,
                              "fault: bad share '%s' (e.g. 20%%, 0..100) in '%s'", val, spec);
                return -1;
            }
            out->share_ppm = (uint32_t)n;
            break;
        case 8:
            if (parse_scope(val, &out->scope) < 0) {
                flood_err_set(err, FLOOD_EINVAL,
                              "fault: bad scope '%s' (get, inbox, all, nodeinfo, webfinger, "
                              "actor, key, note, media, link, emoji, avatar, collection, "
                              "joined with '+') in '%s'",
                              val, spec);
                return -1;
            }
            break;
        }
        if (!comma)
            break;
        item = comma + 1;
    }
    if (gone && (seen & (1u << 2))) {
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
    if ((seen & (1u << 3)) && !out->status) {
        flood_err_set(err, FLOOD_EINVAL, "fault: 'retry-after' needs a status in '%s'", spec);
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
                 struct fault_effect *eff)
{
    int fired = 0;
    memset(eff, 0, sizeof(*eff));
    for (size_t i = 0; i < n; i++) {
        const struct fault_rule *r = &rules[i];
        if (instance < r->first || instance > r->last || !(r->scope & scope))
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
