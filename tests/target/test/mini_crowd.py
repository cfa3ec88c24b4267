#!/usr/bin/env python3
"""A one-actor fake instance for the reference target's smoke test.

Answers for any host name (by the Host header): WebFinger for acct:user1@HOST, the actor
http://HOST/users/user1 with the RSA public key given in --public-key, and an inbox
(/users/user1/inbox and /inbox) that appends every body it receives, one JSON line each,
to --inbox-log and answers 202. Prints "listening on http://127.0.0.1:PORT" when ready and
stops by itself after --lifetime seconds.
"""
import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--public-key", required=True)
    ap.add_argument("--inbox-log", required=True)
    ap.add_argument("--lifetime", type=float, default=120.0)
    args = ap.parse_args()
    with open(args.public_key, encoding="ascii") as f:
        pem = f.read()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def host(self):
            return self.headers.get("Host", "localhost")

        def actor_id(self):
            return f"http://{self.host()}/users/user1"

        def reply(self, status, body, ctype):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urlsplit(self.path)
            if url.path == "/.well-known/webfinger":
                res = parse_qs(url.query).get("resource", [""])[0]
                if res != f"acct:user1@{self.host().split(':')[0]}":
                    return self.reply(404, {"error": "not found"}, "application/json")
                return self.reply(200, {
                    "subject": res,
                    "links": [{"rel": "self", "type": "application/activity+json",
                               "href": self.actor_id()}],
                }, "application/jrd+json")
            if url.path == "/users/user1":
                aid = self.actor_id()
                return self.reply(200, {
                    "@context": ["https://www.w3.org/ns/activitystreams",
                                 "https://w3id.org/security/v1"],
                    "id": aid,
                    "type": "Person",
                    "preferredUsername": "user1",
                    "inbox": aid + "/inbox",
                    "outbox": aid + "/outbox",
                    "followers": aid + "/followers",
                    "following": aid + "/following",
                    "endpoints": {"sharedInbox": f"http://{self.host()}/inbox"},
                    "publicKey": {"id": aid + "#main-key", "owner": aid, "publicKeyPem": pem},
                }, "application/activity+json")
            return self.reply(404, {"error": "not found"}, "application/json")

        def do_POST(self):
            url = urlsplit(self.path)
            n = int(self.headers.get("Content-Length", "0") or 0)
            body = self.rfile.read(n)
            if url.path not in ("/inbox", "/users/user1/inbox"):
                return self.reply(404, {"error": "not found"}, "application/json")
            with lock, open(args.inbox_log, "a", encoding="utf-8") as f:
                f.write(body.decode("utf-8", "replace").replace("\n", " ") + "\n")
            return self.reply(202, None, "text/plain")

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on http://127.0.0.1:{srv.server_address[1]}", flush=True)
    threading.Timer(args.lifetime, srv.shutdown).start()
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
