/* webfinger/activity_build.c: every activity the sender posts, written once against the
 * two-backend writer (jout.h). The rules, from INTEROP.md and the servers' code:
 *
 * - Create(Note): the Note on the actor's host, attributedTo it; addressing as Mastodon
 *   writes it (ActivityPub::TagManager#to/#cc): public to Public, cc followers and the
 *   mentioned; unlisted to followers, cc Public and the mentioned; followers-only to
 *   followers, cc the mentioned; direct to the mentioned. The persona is always mentioned
 *   (a Mention tag with href its actor) when the post is addressed to it: Mastodon drops a
 *   Create unrelated to a local account. The plain form (post NULL) is the historical note.
 * - A reply carries inReplyTo; Mastodon and GoToSocial then fetch the parent chain.
 * - Announce: id, type, actor, object a URI (Misskey re-fetches even an embedded one),
 *   to Public, cc the author, the persona (when it is not the author) and the followers.
 * - Update(Note): the Note again (same id), with `updated` later than `published`.
 * - Delete: object a Tombstone {id, type, formerType: Note}, to Public.
 * - Delete of an account (Mastodon's delete_person: object == actor): object the actor's id,
 *   to Public; the receiver then checks the actor is gone (a GET answering 410 or 404).
 * - Question: oneOf/anyOf items {type: Note, name, replies: {type: Collection,
 *   totalItems}}, endTime, votersCount. A vote: Create(Note) with `name` the option and
 *   inReplyTo the poll, no content (GoToSocial), to the poll's author.
 * - EmojiReact (Misskey, Pleroma): content (and Misskey's _misskey_reaction) a unicode
 *   emoji, or ":name:" with its Emoji tag (Misskey needs the tag for a custom one).
 * - "@context": the ActivityStreams URL, and an inline object declaring the extension terms
 *   (as Mastodon writes them) in every document that uses one (ext_context).
 * - Undo: the undone activity embedded whole (Mastodon ignores an Undo given by id). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webfinger/activity.h"
#include "webfinger/content.h"
#include "webfinger/jout.h"
#include "webfinger/media.h"
#include "webfinger/sput.h"

static const char *const poll_options[WF_POLL_OPTIONS_MAX] = {"yes", "no", "maybe",
                                                              "show me the results"};

const char *wf_poll_option(unsigned i)
{
    return poll_options[i % WF_POLL_OPTIONS_MAX];
}

/* ---- HTML text ------------------------------------------------------------------------ */

struct html {
    char *p;
    size_t len, cap;
};

/* Room for n more bytes and the NUL. */
static void h_reserve(struct html *h, size_t n)
{
    if (h->len + n + 1 > h->cap) {
        size_t cap = h->cap ? h->cap : 1024;
        while (h->len + n + 1 > cap)
            cap *= 2;
        h->p = flood_xrealloc(h->p, cap);
        h->cap = cap;
    }
}

static void h_raw(struct html *h, const char *s, size_t n)
{
    h_reserve(h, n);
    memcpy(h->p + h->len, s, n);
    h->len += n;
    h->p[h->len] = '\0';
}

static void h_lit(struct html *h, const char *s)
{
    h_raw(h, s, strlen(s));
}

/* s HTML-escaped (the persona's URL and name come from the network). */
static void h_esc(struct html *h, const char *s)
{
    for (const char *run = s;; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        case '\0':
            h_raw(h, run, (size_t)(s - run));
            return;
        default:
            continue;
        }
        h_raw(h, run, (size_t)(s - run));
        h_lit(h, rep);
        run = s + 1;
    }
}

static void h_mention(struct html *h, const char *href, const char *name)
{
    h_lit(h, "<span class=\"h-card\"><a href=\"");
    h_esc(h, href);
    h_lit(h, "\" class=\"u-url mention\">");
    h_esc(h, name);
    h_lit(h, "</a></span>");
}

/* ---- pieces ----------------------------------------------------------------------------- */

/* The terms flood writes beyond ActivityStreams, declared inline as Mastodon does
 * (ContextHelper::CONTEXT_EXTENSION_MAP; EmojiReact as Pleroma's litepub context, the
 * reaction as Misskey's): without them a JSON-LD processor reads "sensitive" or "Hashtag"
 * as blank-node terms ("@vocab": "_:" in the ActivityStreams context) or drops them. */
static void ext_context(struct wf_jo *j)
{
    wf_jo_obj(j, NULL);
    wf_jo_str(j, "sensitive", "as:sensitive");
    wf_jo_str(j, "Hashtag", "as:Hashtag");
    wf_jo_str(j, "toot", "http://joinmastodon.org/ns#");
    wf_jo_str(j, "Emoji", "toot:Emoji");
    wf_jo_str(j, "blurhash", "toot:blurhash");
    wf_jo_str(j, "votersCount", "toot:votersCount");
    wf_jo_str(j, "litepub", "http://litepub.social/ns#");
    wf_jo_str(j, "EmojiReact", "litepub:EmojiReact");
    wf_jo_str(j, "misskey", "https://misskey-hub.net/ns#");
    wf_jo_str(j, "_misskey_reaction", "misskey:_misskey_reaction");
    wf_jo_end(j);
}

/* Whether a's document uses a term of ext_context: a rich post (sensitive, Hashtag,
 * Emoji, blurhash), a poll (votersCount), a reaction (EmojiReact) and its Undo. */
static int uses_ext(const struct wf_act_args *a)
{
    enum wf_act_kind k = a->kind == WF_ACT_UNDO ? a->undo_kind : a->kind;
    if (k == WF_ACT_QUESTION || k == WF_ACT_EMOJI_REACT)
        return 1;
    if (k == WF_ACT_VOTE || k == WF_ACT_DELETE_NOTE || k == WF_ACT_DELETE_ACTOR ||
        a->kind == WF_ACT_UNDO)
        return 0;
    return (k == WF_ACT_CREATE || k == WF_ACT_NOTE || k == WF_ACT_UPDATE_NOTE) && a->post &&
           !a->post->plain;
}

/* "@context": the ActivityStreams URL alone (the historical form), or with the terms. */
static void context(struct wf_jo *j, const struct wf_act_args *a)
{
    if (!a || !uses_ext(a)) {
        wf_jo_str(j, "@context", WF_AS_CONTEXT);
        return;
    }
    wf_jo_arr(j, "@context");
    wf_jo_str(j, NULL, WF_AS_CONTEXT);
    ext_context(j);
    wf_jo_end(j);
}

struct ids {
    char actor[WF_URL_MAX], id[WF_URL_MAX], followers[WF_URL_MAX + 16], base[WF_URL_MAX];
};

static void ids_of(const struct wf_crowd *c, const struct wf_act_from *f, struct ids *d)
{
    wf_actor_url(c, f->instance, f->actor, d->actor);
    wf_activity_url(c, f->instance, f->actor, f->seq, d->id);
    size_t n = 0;
    d->followers[0] = '\0';
    wf_sput_str(d->followers, sizeof(d->followers), &n, d->actor);
    wf_sput(d->followers, sizeof(d->followers), &n, "/followers", 10);
    wf_base_url(c, f->instance, d->base);
}

static void crowd_mention(const struct wf_crowd *c, const struct wf_post_mention *m,
                          char href[WF_URL_MAX], char name[WF_MENTION_MAX])
{
    char user[WF_NAME_MAX], base[WF_URL_MAX];
    wf_actor_url(c, m->instance, m->actor, href);
    wf_actor_name(m->actor, user);
    wf_base_url(c, m->instance, base);
    /* the host as the crowd's URLs carry it, with their port: @user1@flood1.test:8080 */
    const char *host = strstr(base, "://");
    host = host ? host + 3 : base;
    snprintf(name, WF_MENTION_MAX, "@%.60s@%.250s", user, host);
}

/* The HTML content of a rich post (mentions, words, hashtags, link, emoji). */
static void rich_content(const struct wf_crowd *c, const struct wf_act_args *a, const struct ids *d,
                         struct html *h)
{
    const struct wf_post *post = a->post;
    h_lit(h, "<p>");
    if (post->persona) {
        h_mention(h, a->p.actor, a->p.mention);
        h_lit(h, " ");
    }
    for (unsigned i = 0; i < post->n_mentions; i++) {
        char href[WF_URL_MAX], name[WF_MENTION_MAX];
        crowd_mention(c, &post->mention[i], href, name);
        h_mention(h, href, name);
        h_lit(h, " ");
    }
    /* the words straight into the buffer, no copy */
    size_t cap = (size_t)post->length + 32;
    h_reserve(h, cap);
    h->len += wf_content_words(post, h->p + h->len, cap);
    if (a->updated)
        h_lit(h, " (edited)");
    for (unsigned i = 0; i < post->n_emoji; i++) {
        h_lit(h, " :");
        h_lit(h, wf_content_emoji(post->emoji[i]));
        h_lit(h, ":");
    }
    if (post->link) {
        char page[WF_URL_MAX];
        wf_page_url(c, a->from.instance, post->page, page);
        h_lit(h, " <a href=\"");
        h_esc(h, page);
        h_lit(h, "\" rel=\"nofollow noopener noreferrer\" target=\"_blank\">");
        h_esc(h, page);
        h_lit(h, "</a>");
    }
    for (unsigned i = 0; i < post->n_tags; i++) {
        char tag[WF_TAG_NAME_MAX];
        wf_content_tag(post->tag[i], tag);
        h_lit(h, " <a href=\"");
        h_esc(h, d->base);
        h_lit(h, "/tags/");
        h_lit(h, tag);
        h_lit(h, "\" class=\"mention hashtag\" rel=\"tag\">#<span>");
        h_lit(h, tag);
        h_lit(h, "</span></a>");
    }
    h_lit(h, "</p>");
}

static void plain_content(const struct wf_act_args *a, uint64_t seq, struct html *h)
{
    char tail[80];
    h_lit(h, "<p>");
    h_mention(h, a->p.actor, a->p.mention);
    snprintf(tail, sizeof(tail), " flood note %" PRIu64 "%s</p>", seq,
             a->updated ? " (edited)" : "");
    h_lit(h, tail);
}

/* to and cc of a post (as Mastodon addresses it). */
static void addressing(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                       const struct ids *d)
{
    const struct wf_post *post = a->post;
    if (!post || post->plain) {
        wf_jo_arr(j, "to");
        wf_jo_str(j, NULL, WF_AS_PUBLIC);
        wf_jo_end(j);
        wf_jo_arr(j, "cc");
        wf_jo_str(j, NULL, a->p.actor);
        wf_jo_str(j, NULL, d->followers);
        wf_jo_end(j);
        return;
    }
    enum wf_vis v = post->vis;
    wf_jo_arr(j, "to");
    if (v == WF_VIS_PUBLIC)
        wf_jo_str(j, NULL, WF_AS_PUBLIC);
    else if (v != WF_VIS_DIRECT)
        wf_jo_str(j, NULL, d->followers);
    int mentions_in_to = v == WF_VIS_DIRECT;
    if (mentions_in_to && post->persona)
        wf_jo_str(j, NULL, a->p.actor);
    for (unsigned i = 0; mentions_in_to && i < post->n_mentions; i++) {
        char href[WF_URL_MAX];
        wf_actor_url(c, post->mention[i].instance, post->mention[i].actor, href);
        wf_jo_str(j, NULL, href);
    }
    wf_jo_end(j);
    wf_jo_arr(j, "cc");
    if (v == WF_VIS_PUBLIC)
        wf_jo_str(j, NULL, d->followers);
    else if (v == WF_VIS_UNLISTED)
        wf_jo_str(j, NULL, WF_AS_PUBLIC);
    if (!mentions_in_to && post->persona)
        wf_jo_str(j, NULL, a->p.actor);
    for (unsigned i = 0; !mentions_in_to && i < post->n_mentions; i++) {
        char href[WF_URL_MAX];
        wf_actor_url(c, post->mention[i].instance, post->mention[i].actor, href);
        wf_jo_str(j, NULL, href);
    }
    wf_jo_end(j);
}

static void mention_tag(struct wf_jo *j, const char *href, const char *name)
{
    wf_jo_obj(j, NULL);
    wf_jo_str(j, "type", "Mention");
    wf_jo_str(j, "href", href);
    wf_jo_str(j, "name", name);
    wf_jo_end(j);
}

static void tags(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                 const struct ids *d)
{
    const struct wf_post *post = a->post;
    if (!post || post->plain) {
        wf_jo_arr(j, "tag");
        mention_tag(j, a->p.actor, a->p.mention);
        wf_jo_end(j);
        return;
    }
    wf_jo_arr(j, "tag");
    if (post->persona)
        mention_tag(j, a->p.actor, a->p.mention);
    for (unsigned i = 0; i < post->n_mentions; i++) {
        char href[WF_URL_MAX], name[WF_MENTION_MAX];
        crowd_mention(c, &post->mention[i], href, name);
        mention_tag(j, href, name);
    }
    for (unsigned i = 0; i < post->n_tags; i++) {
        char tag[WF_TAG_NAME_MAX], href[WF_URL_MAX + 64], name[WF_TAG_NAME_MAX + 1];
        wf_content_tag(post->tag[i], tag);
        snprintf(href, sizeof(href), "%s/tags/%s", d->base, tag);
        snprintf(name, sizeof(name), "#%s", tag);
        wf_jo_obj(j, NULL);
        wf_jo_str(j, "type", "Hashtag");
        wf_jo_str(j, "href", href);
        wf_jo_str(j, "name", name);
        wf_jo_end(j);
    }
    for (unsigned i = 0; i < post->n_emoji; i++) {
        unsigned dup = 0;
        for (unsigned k = 0; k < i; k++)
            dup |= post->emoji[k] == post->emoji[i];
        if (dup)
            continue;
        char url[WF_URL_MAX], id[WF_URL_MAX + 48], name[WF_EMOJI_NAME_MAX + 2];
        const char *e = wf_content_emoji(post->emoji[i]);
        wf_emoji_url(c, a->from.instance, e, url);
        snprintf(id, sizeof(id), "%s/emoji/%s", d->base, e);
        snprintf(name, sizeof(name), ":%s:", e);
        wf_jo_obj(j, NULL);
        wf_jo_str(j, "id", id);
        wf_jo_str(j, "type", "Emoji");
        wf_jo_str(j, "name", name);
        wf_jo_obj(j, "icon");
        wf_jo_str(j, "type", "Image");
        wf_jo_str(j, "mediaType", "image/png");
        wf_jo_str(j, "url", url);
        wf_jo_end(j);
        wf_jo_end(j);
    }
    wf_jo_end(j);
}

static void attachments(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a)
{
    const struct wf_post *post = a->post;
    if (!post || post->plain || post->n_media == 0)
        return;
    wf_jo_arr(j, "attachment");
    for (unsigned i = 0; i < post->n_media; i++) {
        const struct wf_media *m = &post->media[i];
        char url[WF_URL_MAX], hash[WF_BLURHASH_MAX], alt[96];
        wf_media_url(c, a->from.instance, m, url);
        wf_media_blurhash(m->id, hash);
        snprintf(alt, sizeof(alt), "A flood test image, %u by %u", m->width, m->height);
        wf_jo_obj(j, NULL);
        wf_jo_str(j, "type", "Image"); /* an image; Mastodon and GoToSocial also take Document */
        wf_jo_str(j, "mediaType", "image/png");
        wf_jo_str(j, "url", url);
        wf_jo_str(j, "name", alt);
        wf_jo_str(j, "blurhash", hash);
        wf_jo_int(j, "width", m->width);
        wf_jo_int(j, "height", m->height);
        wf_jo_end(j);
    }
    wf_jo_end(j);
}

static void poll_items(struct wf_jo *j, const struct wf_poll *poll)
{
    char end[32];
    wf_iso_time(poll->end, end);
    wf_jo_str(j, "endTime", end);
    wf_jo_int(j, "votersCount", (int64_t)poll->voters);
    wf_jo_arr(j, poll->multiple ? "anyOf" : "oneOf");
    for (unsigned i = 0; i < poll->n && i < WF_POLL_OPTIONS_MAX; i++) {
        wf_jo_obj(j, NULL);
        wf_jo_str(j, "type", "Note");
        wf_jo_str(j, "name", wf_poll_option(i));
        wf_jo_obj(j, "replies");
        wf_jo_str(j, "type", "Collection");
        wf_jo_int(j, "totalItems", (int64_t)poll->votes[i]);
        wf_jo_end(j);
        wf_jo_end(j);
    }
    wf_jo_end(j);
}

static const char *const cw_texts[4] = {"spoilers", "politics", "food", "eye contact"};

/* The Note (or Question) of a, numbered note_seq. */
static void write_note(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                       uint64_t note_seq, const char *key, int with_context)
{
    struct ids d;
    ids_of(c, &a->from, &d);
    char id[WF_URL_MAX], when[32];
    wf_note_url(c, a->from.instance, a->from.actor, note_seq, id);
    wf_iso_time(a->published, when);
    int question = a->kind == WF_ACT_QUESTION;
    const struct wf_post *post = a->post;
    int rich = post && !post->plain;

    wf_jo_obj(j, key);
    if (with_context)
        context(j, a);
    wf_jo_str(j, "id", id);
    wf_jo_str(j, "type", question ? "Question" : "Note");
    wf_jo_str(j, "attributedTo", d.actor);
    if (a->in_reply_to)
        wf_jo_str(j, "inReplyTo", a->in_reply_to);
    if (rich) {
        if (post->cw)
            wf_jo_str(j, "summary", cw_texts[post->seed % 4]);
        wf_jo_bool(j, "sensitive", post->cw);
    }
    struct html h = {0};
    if (rich) /* one allocation: the words and about 256 bytes a part around them */
        h_reserve(&h, post->length + 256 * (2 + post->n_mentions + post->n_tags + post->n_emoji));
    if (rich)
        rich_content(c, a, &d, &h);
    else
        plain_content(a, note_seq, &h);
    wf_jo_strn(j, "content", h.p, h.len);
    if (rich) {
        wf_jo_obj(j, "contentMap");
        /* the same text: its escaped form is copied, not escaped again */
        wf_jo_strn_again(j, wf_content_lang(post->lang), h.p, h.len);
        wf_jo_end(j);
    }
    free(h.p);
    wf_jo_str(j, "published", when);
    if (a->updated) {
        char up[32];
        wf_iso_time(a->updated, up);
        wf_jo_str(j, "updated", up);
    }
    addressing(j, c, a, &d);
    tags(j, c, a, &d);
    attachments(j, c, a);
    if (question && a->poll)
        poll_items(j, a->poll);
    wf_jo_end(j);
}

/* The head every activity shares: {"@context", "id", "type", "actor". */
static void head(struct wf_jo *j, const struct wf_act_args *a, const struct ids *d,
                 const char *type, const char *key, int with_context)
{
    wf_jo_obj(j, key);
    if (with_context)
        context(j, a);
    wf_jo_str(j, "id", d->id);
    wf_jo_str(j, "type", type);
    wf_jo_str(j, "actor", d->actor);
}

static void write_create(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                         const struct ids *d)
{
    char when[32];
    wf_iso_time(a->published, when);
    head(j, a, d, "Create", NULL, 1);
    wf_jo_str(j, "published", when);
    addressing(j, c, a, d);
    write_note(j, c, a, a->from.seq, "object", 0);
    wf_jo_end(j);
}

/* The vote's Note: name, attributedTo, to the poll's author, inReplyTo the poll. */
static void write_vote_note(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                            const char *key, int with_context)
{
    struct ids d;
    ids_of(c, &a->from, &d);
    char id[WF_URL_MAX];
    wf_note_url(c, a->from.instance, a->from.actor, a->from.seq, id);
    wf_jo_obj(j, key);
    if (with_context)
        wf_jo_str(j, "@context", WF_AS_CONTEXT);
    wf_jo_str(j, "id", id);
    wf_jo_str(j, "type", "Note");
    wf_jo_str(j, "name", wf_poll_option(a->choice));
    wf_jo_str(j, "attributedTo", d.actor);
    wf_jo_arr(j, "to");
    wf_jo_str(j, NULL, a->object_author);
    wf_jo_end(j);
    wf_jo_str(j, "inReplyTo", a->object_id);
    wf_jo_end(j);
}

static void write_vote(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                       const struct ids *d)
{
    char when[32];
    wf_iso_time(a->published, when);
    head(j, a, d, "Create", NULL, 1);
    wf_jo_str(j, "published", when);
    wf_jo_arr(j, "to");
    wf_jo_str(j, NULL, a->object_author);
    wf_jo_end(j);
    write_vote_note(j, c, a, "object", 0);
    wf_jo_end(j);
}

/* Like, Announce, EmojiReact: the activities an Undo embeds. */
static void write_reaction(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                           const struct ids *d, const char *key, int with_context)
{
    char when[32];
    wf_iso_time(a->published, when);
    if (a->kind == WF_ACT_LIKE) {
        head(j, a, d, "Like", key, with_context);
        wf_jo_str(j, "object", a->object_id);
        wf_jo_arr(j, "to");
        wf_jo_str(j, NULL, a->p.actor);
        wf_jo_end(j);
    } else if (a->kind == WF_ACT_ANNOUNCE) {
        head(j, a, d, "Announce", key, with_context);
        wf_jo_str(j, "published", when);
        wf_jo_arr(j, "to");
        wf_jo_str(j, NULL, WF_AS_PUBLIC);
        wf_jo_end(j);
        wf_jo_arr(j, "cc");
        if (a->object_author)
            wf_jo_str(j, NULL, a->object_author);
        /* an Announce of a post the persona did not write (a crowd note) is addressed to
         * it too: Mastodon takes an Announce of a remote post only from an account it
         * follows or one that addresses a local account */
        if (a->p.actor && (!a->object_author || strcmp(a->p.actor, a->object_author)))
            wf_jo_str(j, NULL, a->p.actor);
        wf_jo_str(j, NULL, d->followers);
        wf_jo_end(j);
        wf_jo_str(j, "object", a->object_id);
    } else {
        head(j, a, d, "EmojiReact", key, with_context);
        wf_jo_str(j, "object", a->object_id);
        /* Misskey reads _misskey_reaction first, Pleroma content */
        if (a->reaction) {
            wf_jo_str(j, "content", a->reaction);
            wf_jo_str(j, "_misskey_reaction", a->reaction);
        } else {
            const char *e = wf_content_emoji(a->emoji);
            char name[WF_EMOJI_NAME_MAX + 2], url[WF_URL_MAX], id[WF_URL_MAX + 48];
            snprintf(name, sizeof(name), ":%s:", e);
            wf_emoji_url(c, a->from.instance, e, url);
            snprintf(id, sizeof(id), "%s/emoji/%s", d->base, e);
            wf_jo_str(j, "content", name);
            wf_jo_str(j, "_misskey_reaction", name);
            wf_jo_arr(j, "tag");
            wf_jo_obj(j, NULL);
            wf_jo_str(j, "id", id);
            wf_jo_str(j, "type", "Emoji");
            wf_jo_str(j, "name", name);
            wf_jo_obj(j, "icon");
            wf_jo_str(j, "type", "Image");
            wf_jo_str(j, "mediaType", "image/png");
            wf_jo_str(j, "url", url);
            wf_jo_end(j);
            wf_jo_end(j);
            wf_jo_end(j);
        }
        wf_jo_arr(j, "to");
        wf_jo_str(j, NULL, a->p.actor);
        wf_jo_end(j);
    }
    wf_jo_end(j);
}

static void write_follow(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_from *f,
                         const struct wf_persona_ref *p, const char *key, int with_context)
{
    struct ids d;
    ids_of(c, f, &d);
    head(j, NULL, &d, "Follow", key, with_context);
    wf_jo_str(j, "object", p->actor);
    wf_jo_end(j);
}

static void write_update_note(struct wf_jo *j, const struct wf_crowd *c,
                              const struct wf_act_args *a, const struct ids *d)
{
    char when[32];
    wf_iso_time(a->updated, when);
    head(j, a, d, "Update", NULL, 1);
    wf_jo_str(j, "published", when);
    addressing(j, c, a, d);
    write_note(j, c, a, a->ref_seq, "object", 0);
    wf_jo_end(j);
}

static void write_delete(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                         const struct ids *d)
{
    char note[WF_URL_MAX];
    wf_note_url(c, a->from.instance, a->from.actor, a->ref_seq, note);
    head(j, a, d, "Delete", NULL, 1);
    wf_jo_arr(j, "to");
    wf_jo_str(j, NULL, WF_AS_PUBLIC);
    wf_jo_end(j);
    wf_jo_obj(j, "object");
    wf_jo_str(j, "id", note);
    wf_jo_str(j, "type", "Tombstone");
    wf_jo_str(j, "formerType", "Note");
    wf_jo_end(j);
    wf_jo_end(j);
}

/* Delete(Person): as Mastodon's DeleteActorSerializer writes an account deletion, object the
 * actor's own id (a URI, not embedded), to Public. */
static void write_delete_actor(struct wf_jo *j, const struct wf_act_args *a, const struct ids *d)
{
    head(j, a, d, "Delete", NULL, 1);
    wf_jo_arr(j, "to");
    wf_jo_str(j, NULL, WF_AS_PUBLIC);
    wf_jo_end(j);
    wf_jo_str(j, "object", d->actor);
    wf_jo_end(j);
}

static void write_undo(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a,
                       const struct ids *d)
{
    head(j, a, d, "Undo", NULL, 1);
    if (a->kind == WF_ACT_UNDO_FOLLOW) {
        struct wf_act_from f = a->from;
        f.seq = a->follow_seq;
        write_follow(j, c, &f, &a->p, "object", 0);
    } else {
        struct wf_act_args inner = *a;
        inner.kind = a->undo_kind;
        inner.from.seq = a->ref_seq;
        struct ids id2;
        ids_of(c, &inner.from, &id2);
        write_reaction(j, c, &inner, &id2, "object", 0);
    }
    wf_jo_end(j);
}

/* Refuse what no builder can make. */
static int check_args(const struct wf_act_args *a, struct flood_err *err)
{
    if (!a || !a->p.actor || !a->p.mention) {
        flood_err_set(err, FLOOD_EINVAL, "activity: persona without actor or mention name");
        return -1;
    }
    enum wf_act_kind k = a->kind == WF_ACT_UNDO ? a->undo_kind : a->kind;
    if ((unsigned)a->kind >= WF_ACT__COUNT || (a->kind == WF_ACT_UNDO && k != WF_ACT_LIKE &&
                                               k != WF_ACT_ANNOUNCE && k != WF_ACT_EMOJI_REACT)) {
        flood_err_set(err, FLOOD_EINVAL, "activity: no such kind %d", (int)a->kind);
        return -1;
    }
    if ((k == WF_ACT_LIKE || k == WF_ACT_ANNOUNCE || k == WF_ACT_EMOJI_REACT || k == WF_ACT_VOTE) &&
        (!a->object_id || !*a->object_id)) {
        flood_err_set(err, FLOOD_EINVAL, "activity: a %s needs an object id",
                      k == WF_ACT_LIKE   ? "Like"
                      : k == WF_ACT_VOTE ? "vote"
                                         : "reaction");
        return -1;
    }
    if (k == WF_ACT_VOTE && !a->object_author) {
        flood_err_set(err, FLOOD_EINVAL, "activity: a vote needs the poll's author");
        return -1;
    }
    if (a->kind == WF_ACT_QUESTION && (!a->poll || a->poll->n < 2)) {
        flood_err_set(err, FLOOD_EINVAL, "activity: a Question needs at least two options");
        return -1;
    }
    return 0;
}

static void build(struct wf_jo *j, const struct wf_crowd *c, const struct wf_act_args *a)
{
    struct ids d;
    ids_of(c, &a->from, &d);
    switch (a->kind) {
    case WF_ACT_NOTE:
        write_note(j, c, a, a->from.seq, NULL, a->with_context);
        break;
    case WF_ACT_CREATE:
    case WF_ACT_QUESTION:
        if (a->object_only)
            write_note(j, c, a, a->from.seq, NULL, 1);
        else
            write_create(j, c, a, &d);
        break;
    case WF_ACT_VOTE:
        if (a->object_only)
            write_vote_note(j, c, a, NULL, 1);
        else
            write_vote(j, c, a, &d);
        break;
    case WF_ACT_LIKE:
    case WF_ACT_ANNOUNCE:
    case WF_ACT_EMOJI_REACT:
        write_reaction(j, c, a, &d, NULL, 1);
        break;
    case WF_ACT_FOLLOW:
        write_follow(j, c, &a->from, &a->p, NULL, a->with_context);
        break;
    case WF_ACT_UNDO_FOLLOW:
    case WF_ACT_UNDO:
        write_undo(j, c, a, &d);
        break;
    case WF_ACT_UPDATE_NOTE:
        write_update_note(j, c, a, &d);
        break;
    case WF_ACT_DELETE_NOTE:
        write_delete(j, c, a, &d);
        break;
    case WF_ACT_DELETE_ACTOR:
        write_delete_actor(j, a, &d);
        break;
    default:
        j->bad = 1;
    }
}

json_t *wf_act_json(const struct wf_crowd *c, const struct wf_act_args *a, struct flood_err *err)
{
    if (check_args(a, err) < 0)
        return NULL;
    struct wf_jo j;
    wf_jo_init(&j, 1, 0);
    build(&j, c, a);
    json_t *t = wf_jo_tree(&j);
    if (!t)
        flood_err_set(err, FLOOD_EINVAL,
                      "activity: cannot build the document (a value is not "
                      "UTF-8?)");
    return t;
}

char *wf_act_text(const struct wf_crowd *c, const struct wf_act_args *a, size_t *len,
                  struct flood_err *err)
{
    if (check_args(a, err) < 0)
        return NULL;
    /* room for the text twice (content, contentMap) and the parts: no regrowth */
    size_t hint = 2048;
    if (a->post && !a->post->plain)
        hint += 2 * (size_t)a->post->length +
                512 * (a->post->n_mentions + a->post->n_tags + a->post->n_emoji + a->post->n_media);
    struct wf_jo j;
    wf_jo_init(&j, 0, hint);
    build(&j, c, a);
    char *t = wf_jo_text(&j, len);
    if (!t)
        flood_err_set(err, FLOOD_EINVAL,
                      "activity: cannot write the document (a value is not "
                      "UTF-8?)");
    return t;
}

/* ---- the historical builders, now through wf_act_json ---------------------------------- */

json_t *wf_act_note(const struct wf_crowd *c, const struct wf_act_from *from,
                    const struct wf_persona_ref *p, time_t published, int with_context,
                    struct flood_err *err)
{
    struct wf_act_args a = {
        .kind = WF_ACT_NOTE, .from = *from, .published = published, .with_context = with_context};
    if (p)
        a.p = *p;
    return wf_act_json(c, &a, err);
}

json_t *wf_act_create(const struct wf_crowd *c, const struct wf_act_from *from,
                      const struct wf_persona_ref *p, time_t published, struct flood_err *err)
{
    struct wf_act_args a = {.kind = WF_ACT_CREATE, .from = *from, .published = published};
    if (p)
        a.p = *p;
    return wf_act_json(c, &a, err);
}

json_t *wf_act_like(const struct wf_crowd *c, const struct wf_act_from *from,
                    const struct wf_persona_ref *p, const char *object_id, struct flood_err *err)
{
    struct wf_act_args a = {.kind = WF_ACT_LIKE, .from = *from, .object_id = object_id};
    if (p)
        a.p = *p;
    return wf_act_json(c, &a, err);
}

json_t *wf_act_follow(const struct wf_crowd *c, const struct wf_act_from *from,
                      const struct wf_persona_ref *p, int with_context, struct flood_err *err)
{
    struct wf_act_args a = {.kind = WF_ACT_FOLLOW, .from = *from, .with_context = with_context};
    if (p)
        a.p = *p;
    return wf_act_json(c, &a, err);
}

json_t *wf_act_undo_follow(const struct wf_crowd *c, const struct wf_act_from *from,
                           uint64_t follow_seq, const struct wf_persona_ref *p,
                           struct flood_err *err)
{
    struct wf_act_args a = {.kind = WF_ACT_UNDO_FOLLOW, .from = *from, .follow_seq = follow_seq};
    if (p)
        a.p = *p;
    return wf_act_json(c, &a, err);
}
