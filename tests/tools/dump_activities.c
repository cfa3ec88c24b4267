/* tests/tools/dump_activities.c: N activities of every kind flood sends, as JSON lines
 * {"kind": NAME, "doc": DOCUMENT}, written by the library's text writer (what the sender
 * posts). Posts come from the default and heavy content profiles, seeded 1..N, with every
 * optional part forced on in the heavy one, so each term flood can write shows up:
 *   dump_activities [N]
 * tests/interop/jsonld.mjs reads them (tests/integration/activity_jsonld.sh). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webfinger/activity.h"
#include "flood/send/content_opt.h"
#include "webfinger/content.h"

static const struct wf_crowd crowd = {20, 10, "flood%d.test", "https", 0, "0"};

static int failures;

static void emit(const char *kind, const struct wf_act_args *a)
{
    struct flood_err err = {0, ""};
    size_t len = 0;
    char *t = wf_act_text(&crowd, a, &len, &err);
    if (!t) {
        fprintf(stderr, "dump_activities: %s: %s\n", kind, err.msg);
        failures++;
        return;
    }
    printf("{\"kind\":\"%s\",\"doc\":%s}\n", kind, t);
    free(t);
}

static void update_actor(uint64_t seed)
{
    struct wf_key_info key = {"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQ==\n-----END PUBLIC "
                              "KEY-----\n",
                              NULL};
    struct wf_doc doc = {0};
    wf_actor(&crowd, 2, 5, &key, &doc);
    json_t *actor = doc.body ? json_loadb(doc.body, doc.len, 0, NULL) : NULL;
    wf_doc_free(&doc);
    struct wf_act_from from = {2, 5, 1000 + seed};
    struct flood_err err = {0, ""};
    json_t *j = actor ? wf_act_update_actor(&crowd, &from, actor, (uint32_t)seed, 1764493200,
                                            "https://target.test/users/alice", &err)
                      : NULL;
    json_decref(actor);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!s) {
        fprintf(stderr, "dump_activities: update-actor: %s\n", err.msg);
        failures++;
        return;
    }
    printf("{\"kind\":\"update-actor\",\"doc\":%s}\n", s);
    free(s);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    struct wf_content_profile prof[2];
    if (wf_content_profile("default", &prof[0], NULL) < 0 ||
        wf_content_profile("heavy", &prof[1], NULL) < 0 ||
        content_opt_apply(&prof[1], "emoji=100%,links=100%,media=100%,cw=100%,hashtags=2-4", NULL) <
            0)
        return 1;
    static const char *const vis[WF_VIS__COUNT] = {"public", "unlisted", "followers", "direct"};
    for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
        for (int pr = 0; pr < 2; pr++) {
            struct wf_post post;
            wf_content_draw(&prof[pr], seed, 20, 10, 1, &post);
            struct wf_poll poll = {.multiple = (int)(seed % 2),
                                   .n = 2 + (unsigned)(seed % 3),
                                   .votes = {3, 1, 4, 1},
                                   .voters = 9,
                                   .end = 1764579600};
            struct wf_act_args a = {
                .from = {3, 7, 5497558138897 + seed * 10 + (uint64_t)pr},
                .p = {"https://target.test/users/alice", "@alice@target.test"},
                .published = 1764493200,
                .object_id = "https://target.test/users/alice/statuses/1",
                .object_author = "https://target.test/users/alice",
                .follow_seq = 5,
                .with_context = 1,
                .ref_seq = 5497558138800,
                .poll = &poll,
                .choice = (unsigned)seed % 2,
                .emoji = (unsigned)seed,
            };
            struct wf_act_args b = a;
            if (pr == 0) {
                b.kind = WF_ACT_CREATE;
                emit("create-plain", &b);
                b.kind = WF_ACT_NOTE;
                emit("note-plain", &b);
                b.kind = WF_ACT_LIKE;
                emit("like", &b);
                b.kind = WF_ACT_FOLLOW;
                emit("follow", &b);
                b.kind = WF_ACT_UNDO_FOLLOW;
                emit("undo-follow", &b);
                b.kind = WF_ACT_ANNOUNCE;
                emit("announce", &b);
                b.object_id = "https://flood4.test/users/user2/notes/77";
                b.object_author = "https://flood4.test/users/user2";
                emit("announce-crowd", &b);
                b = a;
                b.kind = WF_ACT_DELETE_NOTE;
                emit("delete", &b);
                b.kind = WF_ACT_DELETE_ACTOR;
                emit("delete-actor", &b);
                b.kind = WF_ACT_VOTE;
                emit("vote", &b);
                b.kind = WF_ACT_EMOJI_REACT;
                b.reaction = "\xf0\x9f\x91\x8d";
                emit("emoji-react-unicode", &b);
                b.reaction = NULL;
                emit("emoji-react-custom", &b);
                static const enum wf_act_kind undone[3] = {WF_ACT_LIKE, WF_ACT_ANNOUNCE,
                                                           WF_ACT_EMOJI_REACT};
                static const char *const undo_names[3] = {"undo-like", "undo-announce",
                                                          "undo-emoji-react"};
                for (int u = 0; u < 3; u++) {
                    b = a;
                    b.kind = WF_ACT_UNDO;
                    b.undo_kind = undone[u];
                    emit(undo_names[u], &b);
                }
                update_actor(seed);
            }
            b = a;
            b.post = &post;
            for (int v = 0; v < WF_VIS__COUNT; v++) {
                post.vis = (enum wf_vis)v;
                char name[48];
                snprintf(name, sizeof(name), "create-%s-%s", pr ? "heavy" : "default", vis[v]);
                b.kind = WF_ACT_CREATE;
                emit(name, &b);
            }
            post.vis = WF_VIS_PUBLIC;
            b.kind = WF_ACT_NOTE;
            emit("note-rich", &b);
            b.kind = WF_ACT_CREATE;
            b.in_reply_to = "https://flood4.test/users/user2/notes/77";
            emit("reply", &b);
            b.in_reply_to = NULL;
            b.kind = WF_ACT_UPDATE_NOTE;
            b.updated = 1764496800;
            emit("update-note", &b);
            b.updated = 0;
            b.kind = WF_ACT_QUESTION;
            emit(poll.multiple ? "question-anyof" : "question-oneof", &b);
        }
    }
    return failures ? 1 : 0;
}
