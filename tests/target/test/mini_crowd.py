#!/usr/bin/env python3
"""A small fake instance for the reference target's tests.

Answers for any host name (by the Host header), for the actors named in --actors (default
user1), all sharing the RSA public key given in --public-key:

  /.well-known/webfinger?resource=acct:NAME@HOST, /.well-known/nodeinfo, /nodeinfo/2.1
  /users/NAME            the Person, with icon (avatar) and image (header) URLs that carry
                         a version; POST /_crowd/bump?actor=NAME changes name and images,
                         and with &rotate=1 also its key to the one in --next-public-key
  /users/NAME/main-key   the key document
  /users/NAME/notes/TAG-N  a Note made on request: in reply to TAG-(N-1) when N > 1, so
                         TAG-4 heads a chain of 4 posts; TAG-1 is a reply to nothing
  /users/NAME/avatar.png, /users/NAME/header.png, /emoji/NAME.png
                         PNG bytes
  /media/NAME.EXT        bytes of type EXT (png, jpg, gif, webp, bin) starting with that
                         type's magic number; ?size=N sets the length (default 2048) and
                         ?magic=EXT2 starts them with EXT2's magic instead (a liar)
  /pages/NAME            an HTML page with OpenGraph tags, og:image /media/NAME-og.png
  POST /inbox, /users/NAME/inbox
                         appends the body, one JSON line each, to --inbox-log; 202

Every GET but those of /_crowd/ is counted by kind, with the body bytes sent, by the same
rule as the target's tests/target/lib/fetchkind.mjs (written again here, independently):
GET /_crowd/stats answers {"by_kind": {KIND: {"count", "bytes"}}, "total": {...},
"urls": {URL: count}}; POST /_crowd/reset zeroes it. Prints
"listening on http://127.0.0.1:PORT" when ready and stops by itself after --lifetime
seconds.
"""
import argparse
import html
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

KINDS = ["webfinger", "nodeinfo", "actor", "key", "note", "collection", "avatar", "media",
         "link", "emoji", "other"]
MAGIC = {
    "png": (b"\x89PNG\r\n\x1a\n", "image/png"),
    "jpg": (b"\xff\xd8\xff\xe0", "image/jpeg"),
    "gif": (b"GIF89a", "image/gif"),
    "webp": (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
    "bin": (b"\x00\x01\x02\x03", "application/octet-stream"),
}
PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
MAX_SIZE = 64 * 1024 * 1024


def fetch_kind(path):
    """The kind of a GET by its path (no query, no fragment)."""
    if path in ("/.well-known/webfinger", "/.well-known/host-meta"):
        return "webfinger"
    if path == "/.well-known/nodeinfo" or path.startswith("/nodeinfo/"):
        return "nodeinfo"
    if path == "/actor":
        return "actor"
    if path == "/actor/main-key":
        return "key"
    for prefix, kind in (("/media/", "media"), ("/pages/", "link"), ("/emoji/", "emoji")):
        if path.startswith(prefix):
            return kind
    parts = path.split("/")
    if len(parts) < 3 or parts[1] != "users" or parts[2] == "":
        return "other"
    if len(parts) == 3:
        return "actor"
    sub, rest = parts[3], "/".join(parts[4:])
    if len(parts) == 4 and sub == "main-key":
        return "key"
    if sub in ("notes", "activities") and rest:
        return "note"
    if sub in ("inbox", "outbox", "followers", "following", "featured"):
        return "collection"
    if sub == "collections" and rest:
        return "collection"
    if sub.startswith("avatar") or sub.startswith("header"):
        return "avatar"
    return "other"


def media_bytes(ext, size, magic=None):
    head = MAGIC[magic or ext][0]
    size = max(size, len(head))
    return head + bytes((i * 7) & 0xFF for i in range(size - len(head)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--public-key", required=True)
    ap.add_argument("--inbox-log", required=True)
    ap.add_argument("--next-public-key", help="the key an actor rotates to (bump&rotate=1)")
    ap.add_argument("--actors", default="user1", help="comma-separated actor names")
    ap.add_argument("--lifetime", type=float, default=120.0)
    args = ap.parse_args()
    with open(args.public_key, encoding="ascii") as f:
        pem = f.read()
    next_pem = None
    if args.next_public_key:
        with open(args.next_public_key, encoding="ascii") as f:
            next_pem = f.read()
    actors = set(a for a in args.actors.split(",") if a)
    lock = threading.Lock()
    versions = {}
    rotated = set()
    counts = {}

    def reset():
        counts.clear()
        counts.update({"by_kind": {k: {"count": 0, "bytes": 0} for k in KINDS},
                       "total": {"count": 0, "bytes": 0}, "urls": {}})

    reset()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def host(self):
            return self.headers.get("Host", "localhost")

        def base(self):
            return f"http://{self.host()}"

        def reply(self, status, body, ctype, count=True):
            if isinstance(body, (bytes, bytearray)):
                data = bytes(body)
            elif isinstance(body, str):
                data = body.encode()
            else:
                data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                try:
                    self.wfile.write(data)
                except OSError:
                    pass  # the client stopped reading (a size bound): sent what it took
            if count and self.command == "GET":
                url = urlsplit(self.path)
                kind = fetch_kind(url.path)
                with lock:
                    for e in (counts["by_kind"][kind], counts["total"]):
                        e["count"] += 1
                        e["bytes"] += len(data)
                    full = self.base() + self.path
                    counts["urls"][full] = counts["urls"].get(full, 0) + 1

        def not_found(self):
            return self.reply(404, {"error": "not found"}, "application/json")

        def actor_doc(self, name):
            aid = f"{self.base()}/users/{name}"
            v = versions.get(name, 1)
            return {
                "@context": ["https://www.w3.org/ns/activitystreams",
                             "https://w3id.org/security/v1"],
                "id": aid,
                "type": "Person",
                "preferredUsername": name,
                "name": f"{name} v{v}",
                "inbox": aid + "/inbox",
                "outbox": aid + "/outbox",
                "followers": aid + "/followers",
                "following": aid + "/following",
                "endpoints": {"sharedInbox": f"{self.base()}/inbox"},
                "icon": {"type": "Image", "mediaType": "image/png",
                         "url": f"{aid}/avatar.png?v={v}"},
                "image": {"type": "Image", "mediaType": "image/png",
                          "url": f"{aid}/header.png?v={v}"},
                "publicKey": {"id": aid + "#main-key", "owner": aid,
                              "publicKeyPem": next_pem if name in rotated else pem},
            }

        def note_doc(self, name, note):
            m = re.fullmatch(r"([a-z0-9_]+)-([0-9]{1,3})", note)
            if not m:
                return None
            aid = f"{self.base()}/users/{name}"
            n = int(m.group(2))
            doc = {
                "@context": "https://www.w3.org/ns/activitystreams",
                "id": f"{aid}/notes/{note}",
                "type": "Note",
                "attributedTo": aid,
                "content": f"<p>note {note}</p>",
                "published": "2025-01-01T00:00:00Z",
                "to": [PUBLIC],
                "cc": [aid + "/followers"],
            }
            if n > 1:
                doc["inReplyTo"] = f"{aid}/notes/{m.group(1)}-{n - 1}"
            return doc

        def do_GET(self):
            url = urlsplit(self.path)
            q = parse_qs(url.query)
            path = url.path
            if path == "/_crowd/stats":
                with lock:
                    return self.reply(200, counts, "application/json", count=False)
            if path == "/.well-known/webfinger":
                res = q.get("resource", [""])[0]
                m = re.fullmatch(r"acct:([a-z0-9_]+)@(.+)", res)
                if not m or m.group(1) not in actors or m.group(2) != self.host().split(":")[0]:
                    return self.not_found()
                return self.reply(200, {
                    "subject": res,
                    "links": [{"rel": "self", "type": "application/activity+json",
                               "href": f"{self.base()}/users/{m.group(1)}"}],
                }, "application/jrd+json")
            if path == "/.well-known/nodeinfo":
                return self.reply(200, {"links": [{
                    "rel": "http://nodeinfo.diaspora.software/ns/schema/2.1",
                    "href": f"{self.base()}/nodeinfo/2.1"}]}, "application/json")
            if path == "/nodeinfo/2.1":
                return self.reply(200, {
                    "version": "2.1", "software": {"name": "mini-crowd", "version": "0.1.0"},
                    "protocols": ["activitypub"], "services": {"inbound": [], "outbound": []},
                    "openRegistrations": False, "usage": {"users": {"total": len(actors)}},
                    "metadata": {}}, "application/json")
            if path.startswith("/media/"):
                m = re.fullmatch(r"/media/([A-Za-z0-9_.-]+)\.(png|jpg|gif|webp|bin)", path)
                if not m:
                    return self.not_found()
                ext = m.group(2)
                magic = q.get("magic", [ext])[0]
                size = q.get("size", ["2048"])[0]
                if magic not in MAGIC or not size.isdigit() or int(size) > MAX_SIZE:
                    return self.not_found()
                return self.reply(200, media_bytes(ext, int(size), magic), MAGIC[ext][1])
            if path.startswith("/emoji/"):
                if not re.fullmatch(r"/emoji/[A-Za-z0-9_-]+\.png", path):
                    return self.not_found()
                return self.reply(200, media_bytes("png", 512), "image/png")
            if path.startswith("/pages/"):
                m = re.fullmatch(r"/pages/([A-Za-z0-9_-]+)", path)
                if not m:
                    return self.not_found()
                name = m.group(1)
                image = f"{self.base()}/media/{name}-og.png"
                page = (f"<!doctype html><html><head><title>{name}</title>\n"
                        f'<meta property="og:title" content="Page {html.escape(name)}">\n'
                        f'<meta property="og:description" content="About {name} &amp; more">\n'
                        f'<meta content="{image}" property="og:image">\n'
                        f"</head><body><p>{name}</p></body></html>\n")
                return self.reply(200, page, "text/html; charset=utf-8")
            parts = path.split("/")
            if len(parts) >= 3 and parts[1] == "users" and parts[2] in actors:
                name = parts[2]
                if len(parts) == 3:
                    return self.reply(200, self.actor_doc(name), "application/activity+json")
                if len(parts) == 4 and parts[3] == "main-key":
                    key = self.actor_doc(name)["publicKey"]
                    key["@context"] = "https://w3id.org/security/v1"
                    return self.reply(200, key, "application/activity+json")
                if len(parts) == 4 and parts[3] in ("avatar.png", "header.png"):
                    return self.reply(200, media_bytes("png", 1024), "image/png")
                if len(parts) == 5 and parts[3] == "notes":
                    doc = self.note_doc(name, parts[4])
                    if doc:
                        return self.reply(200, doc, "application/activity+json")
            return self.not_found()

        def do_POST(self):
            url = urlsplit(self.path)
            n = int(self.headers.get("Content-Length", "0") or 0)
            body = self.rfile.read(min(n, 1 << 20))
            if url.path == "/_crowd/reset":
                with lock:
                    reset()
                return self.reply(200, {"ok": True}, "application/json", count=False)
            if url.path == "/_crowd/bump":
                q = parse_qs(url.query)
                name = q.get("actor", [""])[0]
                rotate = q.get("rotate", [""])[0] == "1"
                if name not in actors or (rotate and not next_pem):
                    return self.not_found()
                with lock:
                    versions[name] = versions.get(name, 1) + 1
                    if rotate:
                        rotated.add(name)
                return self.reply(200, {"version": versions[name]}, "application/json",
                                  count=False)
            parts = url.path.split("/")
            personal = len(parts) == 4 and parts[1] == "users" and parts[2] in actors \
                and parts[3] == "inbox"
            if url.path != "/inbox" and not personal:
                return self.not_found()
            with lock, open(args.inbox_log, "a", encoding="utf-8") as f:
                f.write(body.decode("utf-8", "replace").replace("\n", " ") + "\n")
            return self.reply(202, None, "text/plain")

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    print(f"listening on http://127.0.0.1:{srv.server_address[1]}", flush=True)
    threading.Timer(args.lifetime, srv.shutdown).start()
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
