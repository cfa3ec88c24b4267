/* Unit tests of webfinger/activity: every builder against golden documents written by hand
 * from INTEROP.md (fixtures/activity/<case>/{input,expected}.json), an independent rule
 * checker that passes the goldens and the builders' output and fails each negative twin in
 * fixtures/activity/invalid/ for its own reason, and the mention names. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "webfinger/activity.h"
#include "webfinger/content.h"

#define FIX "fixtures/activity"

/* ---- an independent checker of INTEROP.md's rules ----------------------------------- */

/* Host (with port) of a URL into out, or "" */
static void url_host(const char *url, char *out, size_t size)
{
    out[0] = '\0';
    const char *p = url ? strstr(url, "://") : NULL;
    if (!p)
        return;
    p += 3;
    size_t n = strcspn(p, "/?#");
    snprintf(out, size, "%.*s", (int)n, p);
}

static int same_host(const char *a, const char *b)
{
    char ha[300], hb[300];
    url_host(a, ha, sizeof(ha));
    url_host(b, hb, sizeof(hb));
    return ha[0] && strcmp(ha, hb) == 0;
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static int list_has(const json_t *o, const char *k, const char *want)
{
    const json_t *v = json_object_get(o, k);
    if (json_is_string(v))
        return strcmp(json_string_value(v), want) == 0;
    size_t i;
    const json_t *e;
    json_array_foreach(v, i,
                       e) if (json_is_string(e) && !strcmp(json_string_value(e), want)) return 1;
    return 0;
}

static int is(const json_t *o, const char *k, const char *want)
{
    const char *v = str(o, k);
    return v && !strcmp(v, want);
}

/* A Note (or Question) in a Create or Update, by actor, for persona. */
static const char *check_note(const json_t *doc, const json_t *obj, const char *actor,
                              const char *persona)
{
    const char *oid = str(obj, "id");
    if (!json_is_object(obj) || !oid || !(is(obj, "type", "Note") || is(obj, "type", "Question")))
        return "object";
    if (!strcmp(oid, str(doc, "id")))
        return "ids";
    if (!same_host(oid, actor))
        return "note_host";
    if (!is(obj, "attributedTo", actor))
        return "attributed";
    if (!(list_has(obj, "to", persona) || list_has(obj, "cc", persona)) ||
        !(list_has(doc, "to", persona) || list_has(doc, "cc", persona)))
        return "addressed";
    if (str(obj, "name") && is(obj, "type", "Note")) {
        /* a vote (Mastodon's VoteSerializer): name an option, inReplyTo the poll, no
         * content (GoToSocial) */
        if (!str(obj, "inReplyTo"))
            return "vote_reply";
        return json_object_get(obj, "content") ? "vote_content" : "ok";
    }
    int mention = 0;
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(obj, "tag"), i, t)
    {
        if (is(t, "type", "Mention") && is(t, "href", persona))
            mention = 1;
        if (is(t, "type", "Hashtag") &&
            (!str(t, "href") || !str(t, "name") || str(t, "name")[0] != '#'))
            return "hashtag";
        if (is(t, "type", "Emoji") && (!str(t, "name") || !str(json_object_get(t, "icon"), "url")))
            return "emoji";
    }
    if (!mention)
        return "mention";
    json_array_foreach(json_object_get(obj, "attachment"), i, t)
    {
        /* Mastodon needs url, reads mediaType */
        if (!str(t, "url") || !str(t, "mediaType"))
            return "attachment";
    }
    if (json_object_get(obj, "summary") && json_object_get(obj, "sensitive") != json_true())
        return "content_warning";
    if (is(obj, "type", "Question")) {
        const json_t *items = json_object_get(obj, "oneOf");
        if (!items)
            items = json_object_get(obj, "anyOf");
        if (json_array_size(items) < 2 || !str(obj, "endTime"))
            return "poll";
        json_array_foreach(items, i, t)
        {
            if (!str(t, "name") ||
                !json_is_integer(json_object_get(json_object_get(t, "replies"), "totalItems")))
                return "poll";
        }
    }
    return "ok";
}

/* An EmojiReact: content a unicode emoji, or ":name:" with its Emoji tag (Misskey). */
static const char *check_reaction(const json_t *doc)
{
    const char *content = str(doc, "content");
    if (!content || !*content)
        return "reaction_content";
    if (!json_is_string(json_object_get(doc, "object")))
        return "object";
    size_t n = strlen(content);
    if (content[0] == ':' && n > 2 && content[n - 1] == ':') {
        size_t i;
        const json_t *t;
        json_array_foreach(json_object_get(doc, "tag"), i,
                           t) if (is(t, "type", "Emoji") && is(t, "name", content)) return "ok";
        return "reaction_emoji";
    }
    return "ok";
}

/* "ok" or the first rule the document breaks. signer: the key owner of the delivery (NULL:
 * the document's actor). */
static const char *validate_as(const json_t *doc, const char *persona, const char *signer)
{
    if (!list_has(doc, "@context", WF_AS_CONTEXT))
        return "context";
    const char *type = str(doc, "type"), *id = str(doc, "id"), *actor = str(doc, "actor");
    if (!type || !id || !actor)
        return "fields";
    if (signer && strcmp(signer, actor))
        return "signer"; /* servers take an activity only from its actor's key */
    if (!same_host(id, actor))
        return "id_host";
    const json_t *obj = json_object_get(doc, "object");
    if (!strcmp(type, "Create"))
        return check_note(doc, obj, actor, persona);
    if (!strcmp(type, "Update")) {
        if (is(obj, "type", "Person"))
            return is(obj, "id", actor) ? "ok" : "update_owner";
        if (json_is_object(obj) && !is(obj, "attributedTo", actor))
            return "update_owner"; /* Mastodon: only the author edits a status */
        return check_note(doc, obj, actor, persona);
    }
    if (!strcmp(type, "Delete")) {
        const char *oid = json_is_string(obj) ? json_string_value(obj) : str(obj, "id");
        if (!oid)
            return "object";
        return same_host(oid, actor) ? "ok" : "delete_host";
    }
    if (!strcmp(type, "Like") || !strcmp(type, "Announce"))
        return json_is_string(obj) ? "ok" : "object";
    if (!strcmp(type, "EmojiReact"))
        return check_reaction(doc);
    if (!strcmp(type, "Follow"))
        return (json_is_string(obj) && !strcmp(json_string_value(obj), persona)) ? "ok" : "object";
    if (!strcmp(type, "Undo")) {
        if (!json_is_object(obj))
            return "undo_embed";
        if (!str(obj, "actor") || strcmp(str(obj, "actor"), actor))
            return "undo_actor";
        if (is(obj, "type", "Follow"))
            return is(obj, "object", persona) ? "ok" : "object";
        if (is(obj, "type", "Like") || is(obj, "type", "Announce"))
            return json_is_string(json_object_get(obj, "object")) ? "ok" : "object";
        if (is(obj, "type", "EmojiReact"))
            return check_reaction(obj);
        return "object";
    }
    return "type";
}

static const char *validate(const json_t *doc, const char *persona)
{
    return validate_as(doc, persona, NULL);
}

/* ---- goldens ------------------------------------------------------------------------ */

static json_t *load(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        printf("# %s: %s (line %d)\n", path, e.text, e.line);
    return j;
}

static enum wf_act_kind kind_of(const char *k)
{
    static const struct {
        const char *name;
        enum wf_act_kind kind;
    } names[] = {{"create", WF_ACT_CREATE},
                 {"note", WF_ACT_NOTE},
                 {"like", WF_ACT_LIKE},
                 {"follow", WF_ACT_FOLLOW},
                 {"undo", WF_ACT_UNDO},
                 {"announce", WF_ACT_ANNOUNCE},
                 {"update-note", WF_ACT_UPDATE_NOTE},
                 {"delete-note", WF_ACT_DELETE_NOTE},
                 {"delete-actor", WF_ACT_DELETE_ACTOR},
                 {"question", WF_ACT_QUESTION},
                 {"vote", WF_ACT_VOTE},
                 {"emoji-react", WF_ACT_EMOJI_REACT}};
    for (size_t i = 0; k && i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(k, names[i].name))
            return names[i].kind;
    return WF_ACT__COUNT;
}

static json_int_t num(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* Storage an input's arguments point into. */
struct case_args {
    struct wf_crowd c;
    struct wf_act_args a;
    struct wf_post post;
    struct wf_poll poll;
};

/* The post of input.json's "post": {seed, length, vis, persona (default 1), mentions
 * [[instance, actor]...], tags [vocabulary index...], cw, lang, emoji [index...], link,
 * page, media [{id, width, height, bytes}...]}. */
static void post_of(const json_t *in, struct wf_post *post)
{
    static const char *const vis[WF_VIS__COUNT] = {"public", "unlisted", "followers", "direct"};
    memset(post, 0, sizeof(*post));
    post->seed = (uint64_t)num(in, "seed");
    post->length = (unsigned)num(in, "length");
    for (int v = 0; v < WF_VIS__COUNT; v++)
        if (str(in, "vis") && !strcmp(str(in, "vis"), vis[v]))
            post->vis = (enum wf_vis)v;
    post->persona = json_object_get(in, "persona") ? (int)num(in, "persona") : 1;
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(in, "mentions"), i, e)
    {
        if (i >= WF_POST_MENTIONS_MAX)
            break;
        post->mention[i].instance = (int)json_integer_value(json_array_get(e, 0));
        post->mention[i].actor = (int)json_integer_value(json_array_get(e, 1));
        post->n_mentions = (unsigned)i + 1;
    }
    json_array_foreach(json_object_get(in, "tags"), i, e) if (i < WF_POST_TAGS_MAX)
    {
        post->tag[i] = (unsigned)json_integer_value(e);
        post->n_tags = (unsigned)i + 1;
    }
    json_array_foreach(json_object_get(in, "emoji"), i, e) if (i < WF_POST_EMOJI_MAX)
    {
        post->emoji[i] = (unsigned)json_integer_value(e);
        post->n_emoji = (unsigned)i + 1;
    }
    json_array_foreach(json_object_get(in, "media"), i, e) if (i < WF_POST_MEDIA_MAX)
    {
        post->media[i].id = (uint64_t)num(e, "id");
        post->media[i].width = (unsigned)num(e, "width");
        post->media[i].height = (unsigned)num(e, "height");
        post->media[i].bytes = (uint64_t)num(e, "bytes");
        post->n_media = (unsigned)i + 1;
    }
    post->cw = (int)num(in, "cw");
    post->lang = (unsigned)num(in, "lang");
    post->link = (int)num(in, "link");
    post->page = (uint64_t)num(in, "page");
}

/* The arguments of input.json. "builder" is "act" (any kind: "kind" and the fields of
 * struct wf_act_args by name) or one of the historical builders (create, note, like,
 * follow, undo). */
static void args_of(const json_t *in, struct case_args *ca)
{
    const json_t *cr = json_object_get(in, "crowd"), *fr = json_object_get(in, "from"),
                 *pe = json_object_get(in, "persona");
    memset(ca, 0, sizeof(*ca));
    ca->c = (struct wf_crowd){
        .instances = (int)num(cr, "instances"),
        .actors = (int)num(cr, "actors"),
        .domain_template = str(cr, "domain"),
        .scheme = str(cr, "scheme"),
        .public_port = (int)num(cr, "public_port"),
        .version = "0",
    };
    struct wf_act_args *a = &ca->a;
    a->from.instance = (int)num(fr, "instance");
    a->from.actor = (int)num(fr, "actor");
    a->from.seq = (uint64_t)num(fr, "seq");
    a->p.actor = str(pe, "actor");
    a->p.mention = str(pe, "mention");
    a->published = (time_t)num(in, "published");
    a->object_id = str(in, "object");
    a->follow_seq = (uint64_t)num(in, "follow_seq");
    a->with_context = 1;
    const char *b = str(in, "builder");
    if (b && !strcmp(b, "act")) {
        a->kind = kind_of(str(in, "kind"));
        a->in_reply_to = str(in, "in_reply_to");
        a->object_author = str(in, "object_author");
        a->ref_seq = (uint64_t)num(in, "ref_seq");
        a->updated = (time_t)num(in, "updated");
        a->choice = (unsigned)num(in, "choice");
        a->reaction = str(in, "reaction");
        a->emoji = (unsigned)num(in, "emoji");
        a->undo_kind = kind_of(str(in, "undo_kind"));
        const json_t *po = json_object_get(in, "poll");
        if (po) {
            ca->poll.multiple = (int)num(po, "multiple");
            size_t i;
            const json_t *v;
            json_array_foreach(json_object_get(po, "votes"), i, v) if (i < WF_POLL_OPTIONS_MAX)
            {
                ca->poll.votes[i] = (uint64_t)json_integer_value(v);
                ca->poll.n = (unsigned)i + 1;
            }
            ca->poll.voters = (uint64_t)num(po, "voters");
            ca->poll.end = (time_t)num(po, "end");
            a->poll = &ca->poll;
        }
        if (json_object_get(in, "post")) {
            post_of(json_object_get(in, "post"), &ca->post);
            a->post = &ca->post;
        }
        return;
    }
    a->kind = !strcmp(b, "create")   ? WF_ACT_CREATE
              : !strcmp(b, "note")   ? WF_ACT_NOTE
              : !strcmp(b, "like")   ? WF_ACT_LIKE
              : !strcmp(b, "follow") ? WF_ACT_FOLLOW
                                     : WF_ACT_UNDO_FOLLOW;
}

/* The builder's document and the text writer's must be the same bytes. */
static int text_matches(const struct wf_crowd *c, const struct wf_act_args *a, json_t *doc)
{
    struct flood_err err = {0};
    size_t len = 0;
    char *t = wf_act_text(c, a, &len, &err);
    char *d = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    int same = t && d && len == strlen(t) && !strcmp(t, d);
    if (!same)
        printf("# text:  %s\n# jansson: %s\n", t ? t : err.msg, d ? d : "(null)");
    free(t);
    free(d);
    return same;
}

static json_t *build(const json_t *in, struct flood_err *err)
{
    struct case_args ca;
    args_of(in, &ca);
    const char *b = str(in, "builder");
    if (!strcmp(b, "act"))
        return wf_act_json(&ca.c, &ca.a, err);
    if (!strcmp(b, "update-actor"))
        return wf_act_update_actor(&ca.c, &ca.a.from, json_object_get(in, "actor_doc"),
                                   (uint32_t)num(in, "rev"), ca.a.published, ca.a.p.actor, err);
    if (!strcmp(b, "create"))
        return wf_act_create(&ca.c, &ca.a.from, &ca.a.p, ca.a.published, err);
    if (!strcmp(b, "note"))
        return wf_act_note(&ca.c, &ca.a.from, &ca.a.p, ca.a.published, 1, err);
    if (!strcmp(b, "like"))
        return wf_act_like(&ca.c, &ca.a.from, &ca.a.p, ca.a.object_id, err);
    if (!strcmp(b, "follow"))
        return wf_act_follow(&ca.c, &ca.a.from, &ca.a.p, 1, err);
    if (!strcmp(b, "undo"))
        return wf_act_undo_follow(&ca.c, &ca.a.from, ca.a.follow_seq, &ca.a.p, err);
    return NULL;
}

static void golden_cases(void)
{
    DIR *d = opendir(FIX);
    CHECK(d != NULL, "open %s", FIX);
    if (!d)
        return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        char in_path[512], exp_path[512];
        snprintf(in_path, sizeof(in_path), FIX "/%s/input.json", e->d_name);
        snprintf(exp_path, sizeof(exp_path), FIX "/%s/expected.json", e->d_name);
        FILE *f = fopen(in_path, "r");
        if (!f)
            continue;
        fclose(f);
        n++;
        json_t *in = load(in_path), *want = load(exp_path);
        struct flood_err err = {0};
        json_t *got = in ? build(in, &err) : NULL;
        CHECK(got != NULL, "%s: builds (%s)", e->d_name, err.msg);
        CHECK(want && got && json_equal(got, want), "%s: equals the golden document", e->d_name);
        if (in && strcmp(str(in, "builder"), "update-actor") != 0) {
            struct case_args ca;
            args_of(in, &ca);
            CHECK(text_matches(&ca.c, &ca.a, got), "%s: the text writer gives the same bytes",
                  e->d_name);
        }
        if (got && want && !json_equal(got, want)) {
            char *s = json_dumps(got, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            printf("# got: %s\n", s);
            free(s);
        }
        const char *persona = str(json_object_get(in, "persona"), "actor");
        const char *b = str(in, "builder");
        if (strcmp(b, "note") != 0) {
            CHECK_STR(validate(want, persona), "ok", "%s: golden keeps INTEROP's rules", e->d_name);
            CHECK_STR(got ? validate(got, persona) : "null", "ok",
                      "%s: built document keeps INTEROP's rules", e->d_name);
        }
        /* negative twin: another seq gives other ids (ids unique per send) */
        if (in && got) {
            json_t *in2 = json_deep_copy(in);
            json_t *fr = json_object_get(in2, "from");
            json_object_set_new(fr, "seq",
                                json_integer(json_integer_value(json_object_get(fr, "seq")) + 1));
            json_t *got2 = build(in2, &err);
            CHECK(got2 && !json_equal(got2, want) && strcmp(str(got2, "id"), str(got, "id")) != 0,
                  "%s: seq+1 gives another id", e->d_name);
            json_decref(got2);
            json_decref(in2);
        }
        json_decref(in);
        json_decref(want);
        json_decref(got);
    }
    closedir(d);
    CHECK(n >= 30, "%d golden cases found", n);
}

static void invalid_cases(void)
{
    DIR *d = opendir(FIX "/invalid");
    CHECK(d != NULL, "open " FIX "/invalid");
    if (!d)
        return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char path[512];
        snprintf(path, sizeof(path), FIX "/invalid/%s", e->d_name);
        json_t *j = load(path);
        n++;
        CHECK_STR(j ? validate_as(json_object_get(j, "doc"), str(j, "persona"), str(j, "signer"))
                    : "unreadable",
                  j ? str(j, "reason") : "?", "invalid/%s fails for its reason", e->d_name);
        json_decref(j);
    }
    closedir(d);
    CHECK(n >= 8, "%d negative twins found", n);
}

/* ---- mention names ------------------------------------------------------------------ */

static char *trim(char *s)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

static void mention_cases(void)
{
    FILE *f = fopen(FIX "/mention/cases.txt", "r");
    CHECK(f != NULL, "open mention cases");
    if (!f)
        return;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *a = line, *u = strstr(a, " | ");
        char *x = u ? strstr(u + 3, " | ") : NULL;
        if (!u || !x)
            continue;
        *u = '\0';
        *x = '\0';
        a = trim(a);
        u = trim(u + 3);
        char *want = trim(x + 3);
        char out[WF_MENTION_MAX] = "";
        struct flood_err err = {0};
        int rc = wf_mention_name(strcmp(a, "-") ? a : NULL, strcmp(u, "-") ? u : NULL, out, &err);
        n++;
        if (!strcmp(want, "ERROR"))
            CHECK(rc == -1 && err.msg[0], "mention '%s' '%s' refused (%s)", a, u, err.msg);
        else
            CHECK(rc == 0 && !strcmp(out, want), "mention '%s' '%s' = %s (got %s)", a, u, want,
                  out);
    }
    fclose(f);
    CHECK(n >= 10, "%d mention cases", n);
}

static void refusals(void)
{
    struct wf_crowd c = {20, 10, "flood%d.test", "https", 0, "0"};
    struct wf_act_from from = {1, 1, 7};
    struct flood_err err = {0};
    struct wf_persona_ref bad_utf8 = {"https://target.test/users/\xff", "@x@target.test"};
    json_t *j = wf_act_create(&c, &from, &bad_utf8, 0, &err);
    CHECK(j == NULL && err.msg[0], "a persona URL that is not UTF-8 is refused (%s)", err.msg);
    struct wf_persona_ref none = {NULL, NULL};
    j = wf_act_follow(&c, &from, &none, 1, &err);
    CHECK(j == NULL, "a persona without actor is refused");
    struct wf_persona_ref ok = {"https://target.test/users/a", "@a@target.test"};
    j = wf_act_like(&c, &from, &ok, "", &err);
    CHECK(j == NULL, "a Like without object is refused");
    j = wf_act_like(&c, &from, &ok, "https://target.test/p/1", &err);
    CHECK(j != NULL, "its twin with an object builds");
    json_decref(j);
    char url[WF_URL_MAX];
    wf_activity_url(&c, 2, 3, UINT64_MAX, url);
    CHECK_STR(url, "https://flood2.test/users/user3/activities/18446744073709551615",
              "activity URL of the largest seq");
    struct wf_route r;
    CHECK(wf_route(&c, "flood2.test", url + strlen("https://flood2.test"), &r) == 0 &&
              r.kind == WF_ROUTE_ACTIVITY && r.seq == UINT64_MAX && r.actor == 3,
          "the route parses the activity URL back");
    wf_note_url(&c, 2, 3, 5, url);
    CHECK(wf_route(&c, "flood2.test", url + strlen("https://flood2.test"), &r) == 0 &&
              r.kind == WF_ROUTE_NOTE && r.seq == 5,
          "the route parses the note URL back");
}

/* Strings jansson must escape, multibyte UTF-8, and the refusal of invalid UTF-8. */
static void text_escapes(void)
{
    struct wf_crowd c = {20, 10, "flood%d.test", "https", 0, "0"};
    static const char *const odd[] = {
        "https://t.test/users/a\"b\\c",
        "https://t.test/users/\x01\x1f\b\f\n\r\t/x",
        "https://t.test/users/\xc3\xa9l\xc3\xa8ve/\xe2\x80\xa8\xf0\x9f\x98\x80",
        "https://t.test/users/a/b?c=<d>&e='f'",
        "https://t.test/users/\x7f",
    };
    int all = 1;
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        for (int k = WF_ACT_CREATE; k <= WF_ACT_UNDO_FOLLOW; k++) {
            for (int ctx = 0; ctx <= 1; ctx++) {
                struct wf_act_args a = {.kind = (enum wf_act_kind)k,
                                        .from = {3, 4, 99},
                                        .p = {odd[i], odd[(i + 1) % 5]},
                                        .published = 1764493200,
                                        .object_id = odd[(i + 2) % 5],
                                        .follow_seq = 7,
                                        .with_context = ctx};
                struct flood_err err = {0};
                json_t *j = k == WF_ACT_CREATE ? wf_act_create(&c, &a.from, &a.p, a.published, &err)
                            : k == WF_ACT_NOTE
                                ? wf_act_note(&c, &a.from, &a.p, a.published, ctx, &err)
                            : k == WF_ACT_LIKE ? wf_act_like(&c, &a.from, &a.p, a.object_id, &err)
                            : k == WF_ACT_FOLLOW
                                ? wf_act_follow(&c, &a.from, &a.p, ctx, &err)
                                : wf_act_undo_follow(&c, &a.from, a.follow_seq, &a.p, &err);
                if (!j || !text_matches(&c, &a, j))
                    all = 0;
                json_decref(j);
            }
        }
    }
    CHECK(all, "text writer equals jansson's dump for escapes and UTF-8, every kind");
    /* the writer scans eight bytes at a time: each byte to escape at each offset */
    static const char *const special[] = {"\"",       "\\",           "\x01", "\x1f", "\x7f",
                                          "\xc3\xa9", "\xe2\x80\xa8", " ",    "~"};
    int swar = 1;
    for (size_t s = 0; s < sizeof(special) / sizeof(special[0]); s++) {
        for (int at = 0; at < 24; at++) {
            char url[128];
            snprintf(url, sizeof(url), "%.*s%s%.*s", at, "abcdefghijklmnopqrstuvwxyz", special[s],
                     at % 11, "ABCDEFGHIJK");
            struct wf_act_args a = {
                .kind = WF_ACT_FOLLOW, .from = {1, 1, 1}, .p = {url, "@a@t"}, .with_context = 1};
            struct flood_err err = {0};
            json_t *j = wf_act_follow(&c, &a.from, &a.p, 1, &err);
            if (!j || !text_matches(&c, &a, j))
                swar = 0;
            json_decref(j);
        }
    }
    CHECK(swar, "text writer equals jansson's dump with each special byte at offsets 0..23");
    static const char *const bad[] = {"https://t.test/\xff", "https://t.test/\xc0\xaf",
                                      "https://t.test/\xed\xa0\x80", "https://t.test/\xe2\x82",
                                      "https://t.test/\xf4\x90\x80\x80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct wf_act_args a = {.kind = WF_ACT_FOLLOW, .from = {1, 1, 1}, .p = {bad[i], "@a@t"}};
        struct flood_err err = {0};
        char *t = wf_act_text(&c, &a, NULL, &err);
        json_t *j = wf_act_follow(&c, &a.from, &a.p, 1, &err);
        CHECK(!t && !j, "invalid UTF-8 %zu refused by both writers", i);
        free(t);
        json_decref(j);
    }
    struct wf_act_args a = {
        .kind = WF_ACT_LIKE, .from = {1, 1, 1}, .p = {"https://t.test/a", "@a@t"}};
    struct flood_err err = {0};
    CHECK(wf_act_text(&c, &a, NULL, &err) == NULL, "text: a Like without object refused");
}

int main(void)
{
    golden_cases();
    text_escapes();
    invalid_cases();
    mention_cases();
    refusals();
    return check_done();
}
