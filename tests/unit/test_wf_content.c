/* Unit tests of webfinger/content and the issue-12 builders: every kind's text equals
 * jansson's dump of its tree (plain and rich posts, seeded), each kind keeps the rules the
 * servers read (INTEROP.md), and over 20,000 seeded posts the default profile's shares are
 * within tolerance (mentions, visibility, media, Zipf-like hashtags). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "webfinger/activity.h"
#include "webfinger/content.h"

static const struct wf_crowd crowd = {20, 10, "flood%d.test", "https", 0, "0"};

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int same_text(const struct wf_act_args *a, json_t **tree_out)
{
    struct flood_err err = {0};
    json_t *t = wf_act_json(&crowd, a, &err);
    size_t len = 0;
    char *x = wf_act_text(&crowd, a, &len, &err);
    char *d = t ? json_dumps(t, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    int same = x && d && len == strlen(d) && !strcmp(x, d);
    if (!same)
        printf("# kind %d: text %s\n# jansson %s\n", (int)a->kind, x ? x : err.msg, d ? d : "-");
    free(x);
    free(d);
    if (tree_out)
        *tree_out = t;
    else
        json_decref(t);
    return same;
}

static void every_kind(void)
{
    struct wf_content_profile prof[3];
    CHECK(wf_content_profile("plain", &prof[0], NULL) == 0 &&
              wf_content_profile("default", &prof[1], NULL) == 0 &&
              wf_content_profile("heavy", &prof[2], NULL) == 0,
          "three named profiles");
    struct wf_poll poll = {
        .multiple = 0, .n = 3, .votes = {4, 1, 0}, .voters = 5, .end = 1764579600};
    int all = 1, n = 0;
    for (int pr = 0; pr < 3; pr++) {
        for (uint64_t seed = 1; seed <= 200; seed++) {
            struct wf_post post;
            wf_content_draw(&prof[pr], seed, 20, 10, 1, &post);
            for (int k = 0; k < WF_ACT__COUNT; k++) {
                struct wf_act_args a = {
                    .kind = (enum wf_act_kind)k,
                    .from = {3, 7, 5497558138897 + seed},
                    .p = {"https://target.test/users/alice", "@alice@target.test"},
                    .published = 1764493200,
                    .object_id = "https://target.test/users/alice/statuses/1",
                    .object_author = "https://target.test/users/alice",
                    .follow_seq = 5,
                    .with_context = 1,
                    .post = &post,
                    .in_reply_to = seed % 2 ? "https://flood4.test/users/user1/notes/9" : NULL,
                    .ref_seq = 5497558138800,
                    .updated = k == WF_ACT_UPDATE_NOTE ? 1764496800 : 0,
                    .poll = &poll,
                    .choice = (unsigned)seed % 3,
                    .reaction = seed % 3 ? "\xf0\x9f\x91\x8d" : NULL,
                    .emoji = (unsigned)seed,
                    .undo_kind = seed % 3 == 0   ? WF_ACT_LIKE
                                 : seed % 3 == 1 ? WF_ACT_ANNOUNCE
                                                 : WF_ACT_EMOJI_REACT,
                    .object_only = (int)(seed % 5 == 0),
                };
                n++;
                if (!same_text(&a, NULL))
                    all = 0;
            }
        }
    }
    CHECK(all, "%d documents: text writer equals jansson's dump for every kind and profile", n);
}

/* The rules of INTEROP.md for the new kinds, checked on built documents. */
static void kind_rules(void)
{
    struct wf_content_profile prof;
    CHECK(wf_content_profile("heavy", &prof, NULL) == 0, "heavy profile");
    struct wf_post post;
    /* a seed with media, a link and hashtags */
    uint64_t seed = 1;
    for (; seed < 10000; seed++) {
        wf_content_draw(&prof, seed, 20, 10, 1, &post);
        if (post.n_media && post.link && post.n_tags && post.n_emoji && post.vis == WF_VIS_PUBLIC)
            break;
    }
    CHECK(seed < 10000, "a heavy post with media, link, tags, emoji (seed %llu)",
          (unsigned long long)seed);
    struct wf_act_args a = {.kind = WF_ACT_CREATE,
                            .from = {2, 3, 77},
                            .p = {"https://target.test/users/alice", "@alice@target.test"},
                            .published = 1764493200,
                            .post = &post};
    json_t *c = NULL;
    CHECK(same_text(&a, &c) && c, "rich Create builds");
    json_t *note = json_object_get(c, "object");
    const json_t *att = json_array_get(json_object_get(note, "attachment"), 0);
    CHECK(!strcmp(str(att, "type"), "Image") && !strcmp(str(att, "mediaType"), "image/png") &&
              strstr(str(att, "url"), "https://flood2.test/media/") && str(att, "blurhash")[0] &&
              json_integer_value(json_object_get(att, "width")) > 0,
          "attachment: Image, image/png, a media URL, blurhash, width");
    CHECK(strstr(str(note, "content"), "href=\"https://flood2.test/pages/") != NULL,
          "content links a crowd page");
    int mention = 0, hashtag = 0, emoji = 0;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(note, "tag"), i, t)
    {
        mention += !strcmp(str(t, "type"), "Mention") &&
                   !strcmp(str(t, "href"), "https://target.test/users/alice");
        hashtag += !strcmp(str(t, "type"), "Hashtag") && str(t, "name")[0] == '#';
        emoji += !strcmp(str(t, "type"), "Emoji") &&
                 strstr(str(json_object_get(t, "icon"), "url"), "/emoji/") != NULL;
    }
    CHECK(mention == 1 && hashtag >= 1 && emoji >= 1,
          "tags: the persona's Mention, Hashtag, Emoji");
    CHECK(json_is_object(json_object_get(note, "contentMap")), "contentMap present");
    json_decref(c);

    /* visibility: Mastodon's addressing */
    for (int v = 0; v < WF_VIS__COUNT; v++) {
        post.vis = (enum wf_vis)v;
        json_t *d = wf_act_json(&crowd, &a, NULL);
        char *to = json_dumps(json_object_get(d, "to"), JSON_COMPACT);
        char *cc = json_dumps(json_object_get(d, "cc"), JSON_COMPACT);
        int pub_to = strstr(to, "#Public") != NULL, pub_cc = strstr(cc, "#Public") != NULL;
        int fol_to = strstr(to, "/followers") != NULL;
        int persona = strstr(to, "users/alice") || strstr(cc, "users/alice");
        int ok = persona && (v == WF_VIS_PUBLIC      ? pub_to && !pub_cc
                             : v == WF_VIS_UNLISTED  ? fol_to && pub_cc
                             : v == WF_VIS_FOLLOWERS ? fol_to && !pub_to && !pub_cc
                                                     : !pub_to && !pub_cc && !fol_to);
        CHECK(ok, "visibility %d: to %s cc %s", v, to, cc);
        free(to);
        free(cc);
        json_decref(d);
    }

    /* Delete: a Tombstone with formerType Note; Undo embeds; Question; vote; EmojiReact */
    a = (struct wf_act_args){.kind = WF_ACT_DELETE_NOTE,
                             .from = {2, 3, 78},
                             .p = {"https://target.test/users/alice", "@alice@target.test"},
                             .ref_seq = 77};
    json_t *d = wf_act_json(&crowd, &a, NULL);
    json_t *o = json_object_get(d, "object");
    CHECK(!strcmp(str(d, "type"), "Delete") && !strcmp(str(o, "type"), "Tombstone") &&
              !strcmp(str(o, "formerType"), "Note") &&
              !strcmp(str(o, "id"), "https://flood2.test/users/user3/notes/77"),
          "Delete of note 77 with a Tombstone");
    json_decref(d);
    a.kind = WF_ACT_UNDO;
    a.undo_kind = WF_ACT_ANNOUNCE;
    a.object_id = "https://target.test/p/1";
    d = wf_act_json(&crowd, &a, NULL);
    o = json_object_get(d, "object");
    CHECK(!strcmp(str(o, "type"), "Announce") && !strcmp(str(o, "actor"), str(d, "actor")) &&
              !strcmp(str(o, "id"), "https://flood2.test/users/user3/activities/77") &&
              !json_object_get(o, "@context"),
          "Undo embeds the Announce whole, same actor, no inner context");
    json_decref(d);
    a.undo_kind = WF_ACT_FOLLOW;
    CHECK(wf_act_json(&crowd, &a, NULL) == NULL, "an Undo of another kind is refused");
    struct wf_poll poll = {.multiple = 1, .n = 2, .votes = {3, 4}, .voters = 6, .end = 1764579600};
    a = (struct wf_act_args){.kind = WF_ACT_QUESTION,
                             .from = {2, 3, 79},
                             .p = {"https://target.test/users/alice", "@alice@target.test"},
                             .published = 1764493200,
                             .poll = &poll};
    d = wf_act_json(&crowd, &a, NULL);
    o = json_object_get(d, "object");
    json_t *opt = json_array_get(json_object_get(o, "anyOf"), 1);
    CHECK(
        !strcmp(str(o, "type"), "Question") && !strcmp(str(o, "endTime"), "2025-12-01T09:00:00Z") &&
            json_integer_value(json_object_get(o, "votersCount")) == 6 &&
            !strcmp(str(opt, "type"), "Note") && !strcmp(str(opt, "name"), "no") &&
            json_integer_value(json_object_get(json_object_get(opt, "replies"), "totalItems")) == 4,
        "Question: anyOf Notes with replies.totalItems, endTime, votersCount");
    json_decref(d);
    poll.n = 1;
    CHECK(wf_act_json(&crowd, &a, NULL) == NULL, "a one-option poll is refused");
    a.kind = WF_ACT_VOTE;
    a.object_id = "https://flood4.test/users/user4/notes/79";
    a.object_author = "https://flood4.test/users/user4";
    a.choice = 2;
    d = wf_act_json(&crowd, &a, NULL);
    o = json_object_get(d, "object");
    CHECK(!strcmp(str(o, "name"), "maybe") && !strcmp(str(o, "inReplyTo"), a.object_id) &&
              !json_object_get(o, "content"),
          "vote: name an option, inReplyTo the poll, no content");
    json_decref(d);
    a.kind = WF_ACT_EMOJI_REACT;
    a.reaction = NULL;
    a.emoji = 0;
    d = wf_act_json(&crowd, &a, NULL);
    json_t *tg = json_array_get(json_object_get(d, "tag"), 0);
    CHECK(!strcmp(str(d, "type"), "EmojiReact") && !strcmp(str(d, "content"), ":blobcat:") &&
              !strcmp(str(tg, "type"), "Emoji") && !strcmp(str(tg, "name"), ":blobcat:"),
          "custom EmojiReact: :shortcode: with its Emoji tag");
    json_decref(d);
    a.object_id = NULL;
    CHECK(wf_act_json(&crowd, &a, NULL) == NULL, "an EmojiReact without object is refused");
}

static void shares(void)
{
    struct wf_content_profile p;
    CHECK(wf_content_profile("default", &p, NULL) == 0, "default profile");
    enum { N = 20000 };
    unsigned mentions[5] = {0}, vis[WF_VIS__COUNT] = {0}, media = 0, cw = 0, link = 0;
    unsigned tags[WF_TAG_VOCAB] = {0}, longest = 0, short_posts = 0;
    for (uint64_t s = 0; s < N; s++) {
        struct wf_post post;
        wf_content_draw(&p, s * 7919 + 1, 20, 10, 1, &post);
        mentions[post.n_mentions + 1]++;
        vis[post.vis]++;
        media += post.n_media > 0;
        cw += post.cw;
        link += post.link;
        for (unsigned i = 0; i < post.n_tags; i++)
            tags[post.tag[i]]++;
        longest = post.length > longest ? post.length : longest;
        short_posts += post.length < 300;
    }
    /* geometric 0.3 over 1..4: 0.701, 0.210, 0.063, 0.019 */
    CHECK(mentions[0] == 0 && fabs(mentions[1] / (double)N - 0.701) < 0.015 &&
              fabs(mentions[2] / (double)N - 0.210) < 0.015 && mentions[4] > 0,
          "mentions 1..4: %u %u %u %u", mentions[1], mentions[2], mentions[3], mentions[4]);
    CHECK(fabs(vis[0] / (double)N - 0.60) < 0.015 && fabs(vis[1] / (double)N - 0.20) < 0.015 &&
              fabs(vis[2] / (double)N - 0.15) < 0.015 && fabs(vis[3] / (double)N - 0.05) < 0.01,
          "visibility shares %u %u %u %u (60/20/15/5)", vis[0], vis[1], vis[2], vis[3]);
    CHECK(fabs(media / (double)N - 0.20) < 0.015, "media share %.3f (0.20)", media / (double)N);
    CHECK(fabs(cw / (double)N - 0.08) < 0.01, "CW share %.3f (0.08)", cw / (double)N);
    CHECK(fabs(link / (double)N - 0.15) < 0.015, "link share %.3f (0.15)", link / (double)N);
    CHECK(tags[0] > 5 * tags[9] && tags[9] > tags[99], "Zipf-like: top tag %u, 10th %u, 100th %u",
          tags[0], tags[9], tags[99]);
    CHECK(short_posts > N * 8 / 10 && longest > 1500 && longest <= 5000,
          "lengths: %u of %u under 300 chars, longest %u", short_posts, N, longest);
    struct wf_post a, b;
    wf_content_draw(&p, 42, 20, 10, 1, &a);
    wf_content_draw(&p, 42, 20, 10, 1, &b);
    CHECK(!memcmp(&a, &b, sizeof(a)), "same seed, same post");
}

static void profiles(void)
{
    struct wf_content_profile p;
    struct flood_err err = {0};
    CHECK(wf_content_profile("nope", &p, &err) < 0, "unknown profile refused (%s)", err.msg);
    CHECK(wf_content_profile("plain", &p, NULL) == 0 && p.plain, "plain is plain");
}

int main(void)
{
    every_kind();
    kind_rules();
    shares();
    profiles();
    return check_done();
}
