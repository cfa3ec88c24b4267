/* flood/cmd/run_shard.c: --shard, --start-at and the run's fingerprint (see run_shard.h). */
#include "flood/cmd/run_shard.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flood/send/sched.h"

int run_shard_parse(const char *s, uint64_t *k, uint64_t *n, struct flood_err *err)
{
    char *end;
    if (!s || !isdigit((unsigned char)s[0]))
        goto bad;
    errno = 0;
    unsigned long long a = strtoull(s, &end, 10);
    if (errno || *end != '/' || !isdigit((unsigned char)end[1]))
        goto bad;
    unsigned long long b = strtoull(end + 1, &end, 10);
    if (errno || *end)
        goto bad;
    if (b < 1 || b > RUN_SHARD_MAX || a >= b) {
        flood_err_set(err, FLOOD_EINVAL,
                      "--shard: '%s': K/N with 0 <= K < N <= %d (K counts from 0)", s,
                      RUN_SHARD_MAX);
        return -1;
    }
    *k = a;
    *n = b;
    return 0;
bad:
    flood_err_set(err, FLOOD_EINVAL, "--shard: expected K/N (e.g. 0/4), got '%s'", s ? s : "");
    return -1;
}

/* RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS then Z, z or +00:00 (another offset is refused:
 * a wall-clock start is easier to compare across machines in one zone). */
static int parse_rfc3339(const char *s, int64_t *out)
{
    struct tm tm = {0};
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    if (strcmp(p, "Z") && strcmp(p, "z") && strcmp(p, "+00:00"))
        return -1;
    *out = (int64_t)timegm(&tm);
    return 0;
}

int run_shard_parse_start(const char *s, int64_t now, int64_t *out, struct flood_err *err)
{
    int64_t t = 0;
    int ok = 0;
    if (s && *s && strspn(s, "0123456789") == strlen(s) && strlen(s) <= 12) {
        t = (int64_t)strtoll(s, NULL, 10);
        ok = 1;
    } else if (s && parse_rfc3339(s, &t) == 0)
        ok = 1;
    if (!ok) {
        flood_err_set(err, FLOOD_EINVAL,
                      "--start-at: expected unix seconds or YYYY-MM-DDTHH:MM:SSZ, got '%s'",
                      s ? s : "");
        return -1;
    }
    if (t < now - RUN_SHARD_PAST_S) {
        flood_err_set(err, FLOOD_EINVAL, "--start-at: '%s' is %" PRId64 " s in the past", s,
                      now - t);
        return -1;
    }
    if (t > now + RUN_SHARD_FUTURE_S) {
        flood_err_set(err, FLOOD_EINVAL, "--start-at: '%s' is more than a day ahead", s);
        return -1;
    }
    *out = t;
    return 0;
}

void run_shard_fingerprint(json_t *config, uint64_t n, int64_t start_at, char hex[17])
{
    static const char *const keys[] = {
        "stages",       "rate",          "duration_s",           "arrival",    "mix",
        "content",      "content_opt",   "reply_depth",          "unseen_pct", "undo_share_pct",
        "seed",         "sign",          "bad_signatures_share", "inbox",      "personas",
        "like_objects", "personal_inbox"};
    static const char *const crowd_keys[] = {"instances",   "actors", "domain",
                                             "public_port", "scheme", "key_type"};
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(config, keys[i]);
        json_object_set(o, keys[i], v ? v : json_null());
    }
    json_t *crowd = json_object_get(config, "crowd");
    for (size_t i = 0; i < sizeof(crowd_keys) / sizeof(crowd_keys[0]); i++) {
        json_t *v = json_object_get(crowd, crowd_keys[i]);
        json_object_set(o, crowd_keys[i], v ? v : json_null());
    }
    json_object_set_new(o, "shards", json_integer((json_int_t)n));
    json_object_set_new(o, "start_at", json_integer((json_int_t)start_at));
    char *text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!text || !EVP_Digest(text, strlen(text), md, &len, EVP_sha256(), NULL) || len < 8)
        memset(md, 0, 8);
    free(text);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

json_t *run_shard_json(json_t *config, uint64_t k, uint64_t n, int64_t start_at,
                       const struct sched *sc, uint64_t run)
{
    n = n ? n : 1;
    char fp[17];
    run_shard_fingerprint(config, n, start_at, fp);
    struct sched all = *sc;
    sched_set_shard(&all, 0, 0);
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer((json_int_t)k));
    json_object_set_new(o, "count", json_integer((json_int_t)n));
    json_object_set_new(o, "start_at", start_at ? json_integer(start_at) : json_null());
    json_object_set_new(o, "run", json_integer((json_int_t)run));
    json_object_set_new(o, "fingerprint", json_string(fp));
    json_object_set_new(o, "activities", json_integer((json_int_t)sched_total(&all)));
    json_object_set_new(o, "share", json_integer((json_int_t)sched_shard_total(sc)));
    json_object_set_new(o, "arrival",
                        json_string(sc->arrival == SCHED_POISSON ? "poisson" : "constant"));
    return o;
}
