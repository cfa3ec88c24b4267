/* flood/check/scenario.c: the parser of `flood check` scenario files (see scenario.h). */
#include "flood/check/scenario.h"

#include "flood/core/grammar.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS_MAX 12

/* The default scenario: fixtures/scenarios/default.flood, byte for byte (test_scenario
 * compares them). */
const char scenario_default_text[] =
    "# The default scenario of `flood check` (built into flood; docs/INTEROP.md says what each\n"
    "# step checks and why). One step a line; '#' starts a comment.\n"
    "\n"
    "# discovery\n"
    "discover webfinger\n"
    "discover actor unsigned\n"
    "discover actor signed\n"
    "discover nodeinfo\n"
    "\n"
    "# a crowd actor follows the persona and gets an Accept; then unfollows\n"
    "timer start follow\n"
    "follow as flood1/user1\n"
    "expect accept within 10s\n"
    "timer stop follow\n"
    "undo follow\n"
    "\n"
    "# a mention, a like and its undo; with a token, their effects in the API\n"
    "post mention as flood1/user2\n"
    "api mention-notified within 10s\n"
    "like as flood2/user1\n"
    "api like-counted within 10s\n"
    "undo like\n"
    "\n"
    "# the persona follows a crowd actor; the crowd's Accept must be honoured\n"
    "api follow-crowd expect accepted within 10s as flood2/user2\n"
    "\n"
    "# traffic: a boost of a post the target never saw, a reply to a thread it must fetch, an\n"
    "# image, a poll, then an edit and a delete of the mention above; with a token, each effect\n"
    "# in the API (polled up to 5 s)\n"
    "announce unseen within 5s as flood1/user1\n"
    "reply thread within 5s as flood2/user1\n"
    "post media within 5s as flood1/user2\n"
    "post poll within 5s as flood2/user2\n"
    "edit post within 5s\n"
    "delete post within 5s\n"
    "\n"
    "# what a server must refuse\n"
    "send unsigned expect refused\n"
    "send bad-key expect refused\n"
    "send stale-date expect refused\n"
    "send digest-mismatch expect refused\n"
    "send foreign-keyid expect refused\n"
    "\n"
    "# signature dialects: which the target accepts (cavage rsa-sha256 is the baseline)\n"
    "send dialect cavage-rsa expect accepted\n"
    "send dialect cavage-hs2019\n"
    "send dialect rfc9421-rsa\n"
    "send dialect rfc9421-ed25519\n"
    "\n"
    "# Update(Person) with a new key, signed with the old one; then a post with the new key\n"
    "rotate key then send\n";

static const char *const bad_names[SC__BADS] = {"unsigned", "bad-key", "stale-date",
                                                "digest-mismatch", "foreign-keyid"};
static const char *const dialect_names[SC__DIALECTS] = {"cavage-rsa", "cavage-hs2019",
                                                        "rfc9421-rsa", "rfc9421-ed25519"};

const char *scenario_bad_name(enum scenario_bad b)
{
    return (unsigned)b < SC__BADS ? bad_names[b] : "?";
}

const char *scenario_dialect_name(enum scenario_dialect d)
{
    return (unsigned)d < SC__DIALECTS ? dialect_names[d] : "?";
}

int scenario_parse_duration(const char *what, const char *s, long *ms, struct flood_err *err)
{
    return gram_duration_ms(what, s, GRAM_NUL, GRAM_BARE_NONE, 1, SCENARIO_DUR_MAX_MS, ms, err);
}

/* The number that ends s[0..len): "flood12" gives 12, "3" gives 3; -1 without digits or
 * with too many. */
static long trailing_number(const char *s, size_t len)
{
    size_t i = len;
    while (i > 0 && isdigit((unsigned char)s[i - 1]))
        i--;
    if (i == len || len - i > 7)
        return -1;
    long v = 0;
    for (size_t k = i; k < len; k++)
        v = v * 10 + (s[k] - '0');
    return v;
}

int scenario_parse_actor(const char *s, int *instance, int *actor)
{
    const char *slash = s ? strchr(s, '/') : NULL;
    if (!slash || strchr(slash + 1, '/'))
        return -1;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '/' && *p != '-' && *p != '_' && *p != '.')
            return -1;
    long i = trailing_number(s, (size_t)(slash - s));
    long a = trailing_number(slash + 1, strlen(slash + 1));
    if (i < 1 || a < 1)
        return -1;
    *instance = (int)i;
    *actor = (int)a;
    return 0;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= SCENARIO_NAME_MAX)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
            return 0;
    return 1;
}

struct pctx {
    const char *file;
    int line;
    struct flood_err *err;
};

static int fail(struct pctx *p, const char *fmt, const char *word)
{
    char what[320];
    snprintf(what, sizeof(what), fmt, word);
    flood_err_set(p->err, FLOOD_EINVAL, "%s:%d: %s", p->file, p->line, what);
    return -1;
}

static int eq(const char *a, const char *b)
{
    return a && !strcmp(a, b);
}

/* Take a trailing "as I/A" off w/n when allowed. */
static int take_as(struct pctx *p, char **w, size_t *n, int allowed, struct scenario_step *st)
{
    if (*n >= 2 && eq(w[*n - 2], "as")) {
        if (!allowed)
            return fail(p, "'%s' takes no 'as I/A'", w[0]);
        if (scenario_parse_actor(w[*n - 1], &st->instance, &st->actor) < 0)
            return fail(p, "bad actor '%s' (want I/A, e.g. 1/1 or flood1/user1)", w[*n - 1]);
        st->has_as = 1;
        *n -= 2;
    }
    return 0;
}

/* A step's duration, refused with the file and line. */
static int duration(struct pctx *p, const char *what, const char *s, long *ms)
{
    struct flood_err e = {0};
    if (scenario_parse_duration(what, s, ms, &e) < 0)
        return fail(p, "%s", e.msg);
    return 0;
}

/* Take a trailing "within DUR" off w/n when allowed; st->ms gets the default otherwise. */
static int take_within(struct pctx *p, char **w, size_t *n, int allowed, int required,
                       struct scenario_step *st)
{
    st->ms = eq(w[0], "api") ? SCENARIO_DEFAULT_WAIT_MS : SCENARIO_TRAFFIC_WAIT_MS;
    if (*n >= 2 && eq(w[*n - 2], "within")) {
        if (!allowed)
            return fail(p, "'%s' takes no 'within'", w[0]);
        if (duration(p, "within", w[*n - 1], &st->ms) < 0)
            return -1;
        *n -= 2;
        return 0;
    }
    if (required)
        return fail(p, "'%s' needs 'within DURATION'", w[0]);
    return 0;
}

static int index_of(const char *const *names, size_t count, const char *s)
{
    for (size_t i = 0; i < count; i++)
        if (eq(s, names[i]))
            return (int)i;
    return -1;
}

static int step_discover(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (n == 2 && eq(w[1], "webfinger"))
        st->kind = SC_DISCOVER_WEBFINGER;
    else if (n == 2 && eq(w[1], "nodeinfo"))
        st->kind = SC_DISCOVER_NODEINFO;
    else if ((n == 2 || n == 3) && eq(w[1], "actor")) {
        st->kind = SC_DISCOVER_ACTOR;
        st->signed_get = 1;
        if (n == 3 && eq(w[2], "unsigned"))
            st->signed_get = 0;
        else if (n == 3 && !eq(w[2], "signed"))
            return fail(p, "'discover actor' takes signed or unsigned, not '%s'", w[2]);
    } else
        return fail(p, "unknown discovery '%s' (webfinger, actor, nodeinfo)", n > 1 ? w[1] : "");
    return 0;
}

/* follow and like: "KEYWORD [as I/A]" */
static int step_follow_like(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (take_as(p, w, &n, 1, st) < 0)
        return -1;
    if (n != 1)
        return fail(
            p, eq(w[0], "like") ? "unexpected '%s' after 'like'" : "unexpected '%s' after 'follow'",
            w[1]);
    st->kind = eq(w[0], "like") ? SC_LIKE : SC_FOLLOW;
    return 0;
}

static int step_expect(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (n < 2 || !eq(w[1], "accept"))
        return fail(p, "unknown expectation '%s' (expect accept within DURATION)",
                    n > 1 ? w[1] : "");
    if (n < 4 || !eq(w[n - 2], "within"))
        return fail(p, "'%s' needs 'within DURATION'", "expect accept");
    if (take_within(p, w, &n, 1, 1, st) < 0)
        return -1;
    if (n != 2)
        return fail(p, "unexpected '%s' after 'expect accept'", w[2]);
    st->kind = SC_EXPECT_ACCEPT;
    return 0;
}

static int step_undo(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (n > 2 && (eq(w[1], "follow") || eq(w[1], "like")))
        return fail(p, "unexpected '%s' after the undo (it undoes the last one)", w[2]);
    if (n == 2 && eq(w[1], "follow"))
        st->kind = SC_UNDO_FOLLOW;
    else if (n == 2 && eq(w[1], "like"))
        st->kind = SC_UNDO_LIKE;
    else
        return fail(p, "unknown undo '%s' (undo follow, undo like)", n > 1 ? w[1] : "");
    return 0;
}

static int step_post(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (take_as(p, w, &n, 1, st) < 0)
        return -1;
    int mention = n >= 2 && eq(w[1], "mention");
    if (take_within(p, w, &n, !mention, 0, st) < 0)
        return -1;
    if (n == 2 && mention)
        st->kind = SC_POST_MENTION;
    else if (n == 2 && eq(w[1], "media"))
        st->kind = SC_POST_MEDIA;
    else if (n == 2 && eq(w[1], "poll"))
        st->kind = SC_POST_POLL;
    else
        return fail(p, "unknown post '%s' (post mention, post media, post poll)",
                    n > 1 ? w[1] : "");
    return 0;
}

/* announce unseen, reply thread, edit post, delete post */
static int step_traffic(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    static const char *const want[] = {"unseen", "thread", "post", "post"};
    static const enum scenario_kind kinds[] = {SC_ANNOUNCE_UNSEEN, SC_REPLY_THREAD, SC_EDIT_POST,
                                               SC_DELETE_POST};
    const char *k = w[0];
    int i = eq(k, "announce") ? 0 : eq(k, "reply") ? 1 : eq(k, "edit") ? 2 : 3;
    if (take_as(p, w, &n, i < 2, st) < 0 || take_within(p, w, &n, 1, 0, st) < 0)
        return -1;
    if (n != 2 || !eq(w[1], want[i]))
        return fail(p, "unknown '%s' (announce unseen, reply thread, edit post, delete post)",
                    n > 1 ? w[1] : "");
    st->kind = kinds[i];
    return 0;
}

/* send dialect D [expect accepted] */
static int step_send_dialect(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    int d = n >= 3 ? index_of(dialect_names, SC__DIALECTS, w[2]) : -1;
    if (d < 0)
        return fail(p,
                    "unknown dialect '%s' (cavage-rsa, cavage-hs2019, rfc9421-rsa, "
                    "rfc9421-ed25519)",
                    n >= 3 ? w[2] : "");
    st->kind = SC_SEND_DIALECT;
    st->dialect = (enum scenario_dialect)d;
    if (n == 5 && eq(w[3], "expect") && eq(w[4], "accepted"))
        st->expect_accepted = 1;
    else if (n != 3)
        return fail(p, "unexpected '%s' after the dialect (expect accepted?)", w[3]);
    if (st->has_as && d == SC_DIALECT_RFC9421_ED25519)
        return fail(p, "'%s' signs as the Ed25519 check actor: no 'as'", w[2]);
    return 0;
}

static int step_send(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (take_as(p, w, &n, 1, st) < 0)
        return -1;
    if (n >= 2 && eq(w[1], "dialect"))
        return step_send_dialect(p, w, n, st);
    int b = n >= 2 ? index_of(bad_names, SC__BADS, w[1]) : -1;
    if (b < 0)
        return fail(p,
                    "unknown send '%s' (unsigned, bad-key, stale-date, digest-mismatch, "
                    "foreign-keyid, dialect D)",
                    n > 1 ? w[1] : "");
    if (!(n == 4 && eq(w[2], "expect") && eq(w[3], "refused")))
        return fail(p, "'send %s' needs 'expect refused'", w[1]);
    st->kind = SC_SEND_BAD;
    st->bad = (enum scenario_bad)b;
    return 0;
}

static int step_rotate(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (!(n == 4 && eq(w[1], "key") && eq(w[2], "then") && eq(w[3], "send")))
        return fail(p, "unknown rotation '%s' (rotate key then send)", n > 1 ? w[1] : "");
    st->kind = SC_ROTATE;
    return 0;
}

static int step_api(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    const char *what = n > 1 ? w[1] : "";
    int is_follow = eq(what, "follow-crowd");
    if (take_as(p, w, &n, is_follow, st) < 0 || take_within(p, w, &n, 1, 0, st) < 0)
        return -1;
    if (eq(what, "mention-notified") && n == 2)
        st->kind = SC_API_MENTION;
    else if (eq(what, "like-counted") && n == 2)
        st->kind = SC_API_LIKE;
    else if (is_follow && n == 4 && eq(w[2], "expect") && eq(w[3], "accepted"))
        st->kind = SC_API_FOLLOW_CROWD;
    else if (is_follow)
        return fail(p, "'%s' needs 'expect accepted'", "api follow-crowd");
    else if (eq(what, "mention-notified") || eq(what, "like-counted"))
        return fail(p, "unexpected '%s' after the api check", w[2]);
    else
        return fail(p, "unknown api check '%s' (mention-notified, like-counted, follow-crowd)",
                    what);
    return 0;
}

static int step_wait(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (n != 2)
        return fail(p, "'%s' needs one DURATION", "wait");
    if (duration(p, "wait", w[1], &st->ms) < 0)
        return -1;
    st->kind = SC_WAIT;
    return 0;
}

static int step_timer(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    if (n != 3 || (!eq(w[1], "start") && !eq(w[1], "stop")))
        return fail(p, "'%s' wants 'timer start NAME' or 'timer stop NAME'", "timer");
    if (!valid_name(w[2]))
        return fail(p, "bad timer name '%s' (letters, digits, _ - ., at most 31)", w[2]);
    st->kind = eq(w[1], "start") ? SC_TIMER_START : SC_TIMER_STOP;
    snprintf(st->name, sizeof(st->name), "%s", w[2]);
    return 0;
}

/* The steps, by their first word; each parser takes the words of its line (w[0] its keyword)
 * into st: 0, or -1 and err. */
static const struct {
    const char *word;
    int (*parse)(struct pctx *p, char **w, size_t n, struct scenario_step *st);
} steps[] = {
    {"discover", step_discover}, {"follow", step_follow_like}, {"expect", step_expect},
    {"undo", step_undo},         {"post", step_post},          {"announce", step_traffic},
    {"reply", step_traffic},     {"edit", step_traffic},       {"delete", step_traffic},
    {"like", step_follow_like},  {"send", step_send},          {"rotate", step_rotate},
    {"api", step_api},           {"wait", step_wait},          {"timer", step_timer},
};

/* Parse the words of one line into st. 0, or -1 and err. */
static int parse_words(struct pctx *p, char **w, size_t n, struct scenario_step *st)
{
    st->instance = 1;
    st->actor = 1;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (eq(w[0], steps[i].word))
            return steps[i].parse(p, w, n, st);
    return fail(p,
                "unknown step '%s' (discover, follow, expect, undo, post, announce, reply, "
                "edit, delete, like, send, rotate, api, wait, timer)",
                w[0]);
}

/* Order rules over the whole file. */
static int check_order(struct pctx *p, const struct scenario *s)
{
    int follows = 0, likes = 0, mentions = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct scenario_step *st = &s->steps[i];
        p->line = st->line;
        switch (st->kind) {
        case SC_FOLLOW:
            follows = 1;
            break;
        case SC_LIKE:
            likes = 1;
            break;
        case SC_POST_MENTION:
            mentions = 1;
            break;
        case SC_EXPECT_ACCEPT:
        case SC_UNDO_FOLLOW:
            if (!follows)
                return fail(p, "'%s' with no 'follow' before it", st->text);
            break;
        case SC_UNDO_LIKE:
        case SC_API_LIKE:
            if (!likes)
                return fail(p, "'%s' with no 'like' before it", st->text);
            break;
        case SC_API_MENTION:
            if (!mentions)
                return fail(p, "'%s' with no 'post mention' before it", st->text);
            break;
        case SC_EDIT_POST:
        case SC_DELETE_POST:
            if (!mentions)
                return fail(p, "'%s' with no 'post mention' before it", st->text);
            if (st->kind == SC_DELETE_POST)
                mentions = 0; /* the note is gone: a later edit or delete needs a new one */
            break;
        case SC_TIMER_START:
        case SC_TIMER_STOP: {
            int running = 0;
            for (size_t j = 0; j < i; j++) {
                const struct scenario_step *o = &s->steps[j];
                if ((o->kind == SC_TIMER_START || o->kind == SC_TIMER_STOP) &&
                    !strcmp(o->name, st->name))
                    running = o->kind == SC_TIMER_START;
            }
            if (st->kind == SC_TIMER_START && running)
                return fail(p, "timer '%s' started twice", st->name);
            if (st->kind == SC_TIMER_STOP && !running)
                return fail(p, "timer '%s' stopped but not started", st->name);
            break;
        }
        default:
            break;
        }
    }
    /* a timer left running */
    for (size_t i = 0; i < s->n; i++) {
        const struct scenario_step *st = &s->steps[i];
        if (st->kind != SC_TIMER_START)
            continue;
        int stopped = 0;
        for (size_t j = i + 1; j < s->n && !stopped; j++)
            stopped = s->steps[j].kind == SC_TIMER_STOP && !strcmp(s->steps[j].name, st->name);
        if (!stopped) {
            p->line = st->line;
            return fail(p, "timer '%s' is never stopped", st->name);
        }
    }
    return 0;
}

void scenario_free(struct scenario *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->steps[i].text);
    free(s->steps);
    free(s->file);
    memset(s, 0, sizeof(*s));
}

int scenario_parse(const char *text, const char *file, struct scenario *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    out->file = flood_xstrdup(file ? file : "scenario");
    struct pctx p = {.file = out->file, .line = 0, .err = err};
    size_t cap = 0;
    const char *s = text ? text : "";
    while (*s) {
        p.line++;
        size_t len = strcspn(s, "\n");
        const char *next = s[len] ? s + len + 1 : s + len;
        if (len >= SCENARIO_LINE_MAX) {
            fail(&p, "line longer than %s bytes", "511");
            goto bad;
        }
        char line[SCENARIO_LINE_MAX];
        memcpy(line, s, len);
        line[len] = '\0';
        s = next;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        /* trim, and keep the step as written for the report */
        char *b = line;
        while (*b == ' ' || *b == '\t' || *b == '\r')
            b++;
        size_t bl = strlen(b);
        while (bl > 0 && (b[bl - 1] == ' ' || b[bl - 1] == '\t' || b[bl - 1] == '\r'))
            b[--bl] = '\0';
        if (bl == 0)
            continue;
        for (char *c = b; *c; c++)
            if ((unsigned char)*c < 0x20 && *c != '\t') {
                fail(&p, "a control character in the line%s", "");
                goto bad;
            }
        char copy[SCENARIO_LINE_MAX];
        memcpy(copy, b, bl + 1);
        char *w[WORDS_MAX];
        size_t n = 0;
        for (char *tok = strtok(b, " \t"); tok; tok = strtok(NULL, " \t")) {
            if (n == WORDS_MAX) {
                fail(&p, "too many words (at most %s)", "12");
                goto bad;
            }
            w[n++] = tok;
        }
        if (out->n == SCENARIO_STEPS_MAX) {
            fail(&p, "too many steps (at most %s)", "1000");
            goto bad;
        }
        struct scenario_step st = {0};
        st.line = p.line;
        if (parse_words(&p, w, n, &st) < 0)
            goto bad;
        st.text = flood_xstrdup(copy);
        if (out->n == cap) {
            cap = cap ? cap * 2 : 16;
            out->steps = flood_xrealloc(out->steps, cap * sizeof(*out->steps));
        }
        out->steps[out->n++] = st;
    }
    if (out->n == 0) {
        flood_err_set(err, FLOOD_EINVAL, "%s: no steps", out->file);
        goto bad;
    }
    if (check_order(&p, out) < 0)
        goto bad;
    return 0;
bad:
    scenario_free(out);
    return -1;
}

int scenario_load(const char *path, struct scenario *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    FILE *f = fopen(path, "rb");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "scenario: cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1024 * 1024, len = 0;
    char *buf = flood_xmalloc(cap + 1);
    len = fread(buf, 1, cap + 1, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(buf);
        flood_err_set(err, FLOOD_EIO, "scenario: cannot read '%s'", path);
        return -1;
    }
    if (len > cap) {
        free(buf);
        flood_err_set(err, FLOOD_ELIMIT, "scenario: '%s' is over 1 MiB", path);
        return -1;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        flood_err_set(err, FLOOD_EINVAL, "scenario: '%s' holds a NUL byte", path);
        return -1;
    }
    int rc = scenario_parse(buf, path, out, err);
    free(buf);
    return rc;
}
