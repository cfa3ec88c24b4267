#!/usr/bin/env python3
"""tests/tools/activity_goldens.py: writes fixtures/activity/<case>/{input,expected}.json for
the activity kinds of the realistic-traffic work, from the rules, not from flood: INTEROP.md
("Activities", "What a server does with each activity") and the servers' serializers
(Mastodon's ActivityPub::NoteSerializer, ActivitySerializer, DeleteSerializer,
VoteSerializer, UpdatePollSerializer and TagManager#to/#cc for addressing; Pleroma's
EmojiReact; Misskey's _misskey_reaction). The URL forms are the crowd's documented ones
(webfinger/activity.h, webfinger/media.h). Two values need arithmetic, done here from their
public definitions: a BlurHash of one component (woltapp/blurhash's encoder: size flag 0,
max-AC 0, the DC colour in four base-83 digits) of the image colour (SplitMix64's finalizer
of the media id, mid-tones 48 + x % 160), and the avatar dimensions of an Update(Person)
(the largest square PNG of stored deflate blocks, PNG spec sizes, in 120,000 bytes).

Run once to (re)write the files; flood's builders are then compared with them by
tests/unit/test_wf_activity.c. Existing cases are left alone.
  python3 tests/tools/activity_goldens.py
"""
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "activity")
AS = "https://www.w3.org/ns/activitystreams"
PUBLIC = AS + "#Public"
# the extension terms, as Mastodon declares them (ContextHelper::CONTEXT_EXTENSION_MAP),
# EmojiReact from Pleroma's litepub context, the reaction from Misskey's
EXT = {
    "sensitive": "as:sensitive",
    "Hashtag": "as:Hashtag",
    "toot": "http://joinmastodon.org/ns#",
    "Emoji": "toot:Emoji",
    "blurhash": "toot:blurhash",
    "votersCount": "toot:votersCount",
    "litepub": "http://litepub.social/ns#",
    "EmojiReact": "litepub:EmojiReact",
    "misskey": "https://misskey-hub.net/ns#",
    "_misskey_reaction": "misskey:_misskey_reaction",
}
CTX_EXT = [AS, EXT]

CROWD = {"instances": 20, "actors": 10, "domain": "flood%d.test", "scheme": "https", "public_port": 0}
ALICE = {"actor": "https://target.test/users/alice", "mention": "@alice@target.test"}
ALICE_POST = "https://target.test/users/alice/statuses/1"
PUBLISHED = 1764493200  # 2025-11-30T09:00:00Z
WHEN = "2025-11-30T09:00:00Z"
UPDATED = 1764496800
WHEN_UP = "2025-11-30T10:00:00Z"
END = 1764579600
WHEN_END = "2025-12-01T09:00:00Z"

TAGS = ["fediverse", "photography", "caturday", "music", "art", "linux"]  # the vocabulary's first
EMOJI = ["blobcat", "blobcatheart", "ablobcatwave"]
LANGS = ["en", "de", "ja"]
POLL = ["yes", "no", "maybe", "show me the results"]


def base(i):
    return "https://flood%d.test" % i


def actor(i, a):
    return "%s/users/user%d" % (base(i), a)


def activity(i, a, seq):
    return "%s/activities/%d" % (actor(i, a), seq)


def note(i, a, seq):
    return "%s/notes/%d" % (actor(i, a), seq)


def h_card(href, name):
    return '<span class="h-card"><a href="%s" class="u-url mention">%s</a></span>' % (href, name)


def mention_tag(href, name):
    return {"type": "Mention", "href": href, "name": name}


# ---- the arithmetic ------------------------------------------------------------------

M64 = (1 << 64) - 1


def splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


B83 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~"


def encode83(v, length):
    return "".join(B83[(v // 83 ** (length - 1 - i)) % 83] for i in range(length))


def blurhash(media_id):
    z = splitmix64(media_id)
    r, g, b = (48 + ((z >> s) & 0xFF) % 160 for s in (0, 8, 16))
    return encode83(0, 1) + encode83(0, 1) + encode83((r << 16) | (g << 8) | b, 4)


def png_bytes(w, h):
    raw = h * (1 + 3 * w)
    blocks = max(1, -(-raw // 65535))
    return 8 + 25 + 12 + (2 + raw + 5 * blocks + 4) + 12


def square_fit(budget):
    side = 1
    while png_bytes(side + 1, side + 1) <= budget:
        side += 1
    least = png_bytes(side, side)
    size = budget if budget - least >= 12 else least + 12 if budget > least else least
    return side, size


# ---- the documents ---------------------------------------------------------------------

def plain_note(i, a, seq, content_tail, extra=None, ctx=None):
    n = {}
    if ctx:
        n["@context"] = ctx
    n.update({"id": note(i, a, seq), "type": "Note", "attributedTo": actor(i, a)})
    n.update(extra or {})
    n.update({
        "content": "<p>%s %s</p>" % (h_card(ALICE["actor"], ALICE["mention"]), content_tail),
        "published": WHEN,
        "to": [PUBLIC],
        "cc": [ALICE["actor"], actor(i, a) + "/followers"],
        "tag": [mention_tag(ALICE["actor"], ALICE["mention"])],
    })
    return n


def create(i, a, seq, obj, to, cc, ctx=AS, published=WHEN, kind="Create"):
    d = {"@context": ctx, "id": activity(i, a, seq), "type": kind, "actor": actor(i, a),
         "published": published, "to": to}
    if cc is not None:
        d["cc"] = cc
    d["object"] = obj
    return d


def rich_post(i, a, seq, vis, post_in, in_reply_to=None, updated=None):
    """A rich Note (length 0: no running text) per Mastodon's NoteSerializer."""
    followers = actor(i, a) + "/followers"
    crowd = [(m[0], m[1]) for m in post_in.get("mentions", [])]
    mentioned = [ALICE["actor"]] + [actor(*m) for m in crowd]
    # TagManager#to / #cc
    to, cc = {
        "public": ([PUBLIC], [followers] + mentioned),
        "unlisted": ([followers], [PUBLIC] + mentioned),
        "followers": ([followers], mentioned),
        "direct": (mentioned, []),
    }[vis]
    html = "<p>" + h_card(ALICE["actor"], ALICE["mention"]) + " "
    for m in crowd:
        html += h_card(actor(*m), "@user%d@flood%d.test" % (m[1], m[0])) + " "
    if updated:
        html += " (edited)"
    for e in post_in.get("emoji", []):
        html += " :%s:" % EMOJI[e]
    for t in post_in.get("tags", []):
        html += ' <a href="%s/tags/%s" class="mention hashtag" rel="tag">#<span>%s</span></a>' % (
            base(i), TAGS[t], TAGS[t])
    html += "</p>"
    n = {"id": note(i, a, seq), "type": "Note", "attributedTo": actor(i, a)}
    if in_reply_to:
        n["inReplyTo"] = in_reply_to
    if post_in.get("cw"):
        n["summary"] = ["spoilers", "politics", "food", "eye contact"][post_in["seed"] % 4]
    n["sensitive"] = bool(post_in.get("cw"))
    n["content"] = html
    n["contentMap"] = {LANGS[post_in.get("lang", 0)]: html}
    n["published"] = WHEN
    if updated:
        n["updated"] = WHEN_UP
    n["to"], n["cc"] = to, cc
    tags = [mention_tag(ALICE["actor"], ALICE["mention"])]
    tags += [mention_tag(actor(*m), "@user%d@flood%d.test" % (m[1], m[0])) for m in crowd]
    tags += [{"type": "Hashtag", "href": "%s/tags/%s" % (base(i), TAGS[t]), "name": "#" + TAGS[t]}
             for t in post_in.get("tags", [])]
    for e in post_in.get("emoji", []):
        tags.append({"id": "%s/emoji/%s" % (base(i), EMOJI[e]), "type": "Emoji",
                     "name": ":%s:" % EMOJI[e],
                     "icon": {"type": "Image", "mediaType": "image/png",
                              "url": "%s/emoji/%s.png" % (base(i), EMOJI[e])}})
    n["tag"] = tags
    if post_in.get("media"):
        n["attachment"] = [{
            "type": "Image", "mediaType": "image/png",
            "url": "%s/media/%d-%dx%d-%d.png" % (base(i), m["id"], m["width"], m["height"], m["bytes"]),
            "name": "A flood test image, %d by %d" % (m["width"], m["height"]),
            "blurhash": blurhash(m["id"]), "width": m["width"], "height": m["height"],
        } for m in post_in["media"]]
    return n, to, cc


def head(i, a, seq, kind, ctx=AS):
    d = {}
    if ctx is not None:
        d["@context"] = ctx
    d.update({"id": activity(i, a, seq), "type": kind, "actor": actor(i, a)})
    return d


def emoji_react(i, a, seq, reaction=None, emoji=None, ctx=CTX_EXT):
    d = head(i, a, seq, "EmojiReact", ctx)
    d["object"] = ALICE_POST
    if reaction:
        d["content"] = reaction
        d["_misskey_reaction"] = reaction
    else:
        name = ":%s:" % EMOJI[emoji]
        d["content"] = name
        d["_misskey_reaction"] = name
        d["tag"] = [{"id": "%s/emoji/%s" % (base(i), EMOJI[emoji]), "type": "Emoji", "name": name,
                     "icon": {"type": "Image", "mediaType": "image/png",
                              "url": "%s/emoji/%s.png" % (base(i), EMOJI[emoji])}}]
    d["to"] = [ALICE["actor"]]
    return d


def announce(i, a, seq, obj, author, ctx=AS):
    # The target processes an Announce of a post not its own only when one of its accounts
    # follows the booster or is addressed (Mastodon's Announce#related_to_local_activity?),
    # so a boost of a crowd note names the persona in cc beside the note's author.
    d = head(i, a, seq, "Announce", ctx)
    cc = [author] + ([ALICE["actor"]] if author != ALICE["actor"] else [])
    d.update({"published": WHEN, "to": [PUBLIC], "cc": cc + [actor(i, a) + "/followers"],
              "object": obj})
    return d


def like(i, a, seq, ctx=AS):
    d = head(i, a, seq, "Like", ctx)
    d.update({"object": ALICE_POST, "to": [ALICE["actor"]]})
    return d


def poll(multiple, votes, voters, seq):
    q = plain_note(3, 7, seq, "flood note %d" % seq, ctx=None)
    q["type"] = "Question"
    q["endTime"] = WHEN_END
    q["votersCount"] = voters
    q["anyOf" if multiple else "oneOf"] = [
        {"type": "Note", "name": POLL[k], "replies": {"type": "Collection", "totalItems": v}}
        for k, v in enumerate(votes)]
    return q


def cases():
    seq = 5497558138897
    base_in = {"crowd": CROWD, "from": {"instance": 3, "actor": 7, "seq": seq}, "persona": ALICE,
               "published": PUBLISHED}
    out = {}

    def add(name, extra, doc):
        d = dict(base_in)
        d["builder"] = "act"
        d.update(extra)
        out[name] = (d, doc)

    crowd_note = note(4, 2, 77)
    add("announce-persona-post",
        {"kind": "announce", "object": ALICE_POST, "object_author": ALICE["actor"]},
        announce(3, 7, seq, ALICE_POST, ALICE["actor"]))
    add("announce-crowd-note",
        {"kind": "announce", "object": crowd_note, "object_author": actor(4, 2)},
        announce(3, 7, seq, crowd_note, actor(4, 2)))
    for name, parent in (("reply-crowd-note", crowd_note), ("reply-persona-post", ALICE_POST)):
        n = plain_note(3, 7, seq, "flood note %d" % seq, {"inReplyTo": parent})
        add(name, {"kind": "create", "in_reply_to": parent},
            create(3, 7, seq, n, [PUBLIC], [ALICE["actor"], actor(3, 7) + "/followers"]))
    # Update(Note): the Note again with `updated`, same id; the activity's published is the edit
    ref = seq - 97
    n = plain_note(3, 7, ref, "flood note %d (edited)" % ref)
    n["updated"] = WHEN_UP
    order = ["id", "type", "attributedTo", "content", "published", "updated", "to", "cc", "tag"]
    n = {k: n[k] for k in order}
    add("update-note", {"kind": "update-note", "ref_seq": ref, "updated": UPDATED},
        create(3, 7, seq, n, [PUBLIC], [ALICE["actor"], actor(3, 7) + "/followers"],
               published=WHEN_UP, kind="Update"))
    d = head(3, 7, seq, "Delete")
    d.update({"to": [PUBLIC], "object": {"id": note(3, 7, ref), "type": "Tombstone", "formerType": "Note"}})
    add("delete-note", {"kind": "delete-note", "ref_seq": ref}, d)
    # an account deletion as Mastodon sends and accepts it (DeleteActorSerializer; delete.rb's
    # delete_person when object == actor): object the actor's id, to Public
    d = head(3, 7, seq, "Delete")
    d.update({"object": actor(3, 7), "to": [PUBLIC]})
    add("delete-actor", {"kind": "delete-actor"}, d)
    for name, multiple, votes, voters in (("question-oneof", 0, [4, 1, 0], 5),
                                          ("question-anyof", 1, [3, 2, 2, 1], 4)):
        q = poll(multiple, votes, voters, seq)
        add(name, {"kind": "question",
                   "poll": {"multiple": multiple, "votes": votes, "voters": voters, "end": END}},
            create(3, 7, seq, q, [PUBLIC], [ALICE["actor"], actor(3, 7) + "/followers"], ctx=CTX_EXT))
    poll_id = "https://target.test/users/alice/statuses/2"
    v = {"id": note(3, 7, seq), "type": "Note", "name": "no", "attributedTo": actor(3, 7),
         "to": [ALICE["actor"]], "inReplyTo": poll_id}
    d = head(3, 7, seq, "Create")
    d.update({"published": WHEN, "to": [ALICE["actor"]], "object": v})
    add("vote", {"kind": "vote", "object": poll_id, "object_author": ALICE["actor"], "choice": 1}, d)
    add("emoji-react-unicode", {"kind": "emoji-react", "object": ALICE_POST, "reaction": "\U0001F44D"},
        emoji_react(3, 7, seq, reaction="\U0001F44D"))
    add("emoji-react-custom", {"kind": "emoji-react", "object": ALICE_POST, "emoji": 2},
        emoji_react(3, 7, seq, emoji=2))
    undone = seq - 40
    for name, kind, inner, ctx in (
            ("undo-announce", "announce", announce(3, 7, undone, ALICE_POST, ALICE["actor"], None), AS),
            ("undo-like", "like", like(3, 7, undone, None), AS),
            ("undo-emoji-react", "emoji-react", emoji_react(3, 7, undone, reaction="\u2764\ufe0f", ctx=None), CTX_EXT)):
        d = head(3, 7, seq, "Undo", ctx)
        d["object"] = inner
        extra = {"kind": "undo", "undo_kind": kind, "ref_seq": undone, "object": ALICE_POST,
                 "object_author": ALICE["actor"]}
        if kind == "emoji-react":
            extra["reaction"] = "\u2764\ufe0f"
        add(name, extra, d)

    # rich posts: length 0 (no running text: the words come from a seeded generator)
    media = [{"id": 1234567, "width": 640, "height": 480,
              "bytes": png_bytes(640, 480) + 1000}]
    posts = {
        "create-media": ("public", {"seed": 1, "media": media}),
        "create-hashtags": ("public", {"seed": 2, "tags": [0, 5]}),
        "create-content-warning": ("public", {"seed": 3, "cw": 1, "lang": 1}),
        "create-emoji": ("public", {"seed": 4, "emoji": [0, 1]}),
        "create-public": ("public", {"seed": 5, "mentions": [[5, 3]]}),
        "create-unlisted": ("unlisted", {"seed": 6, "mentions": [[5, 3]]}),
        "create-followers-only": ("followers", {"seed": 7, "mentions": [[5, 3]]}),
        "create-direct": ("direct", {"seed": 8, "mentions": [[5, 3]]}),
        "create-contentmap": ("public", {"seed": 9, "lang": 2}),
    }
    for name, (vis, p) in posts.items():
        n, to, cc = rich_post(3, 7, seq, vis, p)
        pin = dict(p)
        pin["vis"] = vis
        add(name, {"kind": "create", "post": pin}, create(3, 7, seq, n, to, cc, ctx=CTX_EXT))

    # Update(Person), revision 2: the actor embedded with the revision applied
    actor_doc = {
        "@context": [AS, "https://w3id.org/security/v1"],
        "id": actor(2, 5), "type": "Person", "preferredUsername": "user5", "name": "user5",
        "inbox": actor(2, 5) + "/inbox", "manuallyApprovesFollowers": False,
        "publicKey": {"id": actor(2, 5) + "#main-key", "owner": actor(2, 5),
                      "publicKeyPem": "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n"},
    }
    rev = 2
    avatar_id = (0xA7A7 << 48) ^ (2 << 32) ^ (5 << 12) ^ rev
    side, size = square_fit(120 * 1000)
    obj = {k: v for k, v in actor_doc.items() if k != "@context"}
    obj["name"] = "user5 (rev 2)"
    obj["icon"] = {"type": "Image", "mediaType": "image/png",
                   "url": "%s/media/%d-%dx%d-%d.png" % (base(2), avatar_id, side, side, size)}
    obj["updated"] = WHEN
    d = {"@context": [AS, "https://w3id.org/security/v1",
                      {"manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
                       "toot": "http://joinmastodon.org/ns#", "discoverable": "toot:discoverable",
                       "indexable": "toot:indexable"}],
         "id": activity(2, 5, 99), "type": "Update", "actor": actor(2, 5), "published": WHEN,
         "to": [PUBLIC], "object": obj, "cc": [ALICE["actor"]]}
    inp = {"builder": "update-actor", "crowd": CROWD, "from": {"instance": 2, "actor": 5, "seq": 99},
           "persona": ALICE, "published": PUBLISHED, "rev": rev, "actor_doc": actor_doc}
    out["update-actor"] = (inp, d)
    return out


def main():
    for name, (inp, doc) in cases().items():
        d = os.path.join(ROOT, name)
        if os.path.exists(os.path.join(d, "expected.json")) and "--force" not in sys.argv:
            continue
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input.json"), "w") as f:
            json.dump(inp, f, indent=1, ensure_ascii=False)
            f.write("\n")
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print("wrote", name)


if __name__ == "__main__":
    main()
