#!/usr/bin/env python3
"""tests/tools/recorder.py OUT PORTFILE: an HTTP server on a loopback port (written to
PORTFILE) that answers every POST 202 and appends its request line, headers and body to OUT,
so a test can look for bytes that must never reach the wire. Stops after 120 s."""
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

out, lock = open(sys.argv[1], "ab"), threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        with lock:
            out.write(self.requestline.encode() + b"\n" + bytes(self.headers) + body + b"\n")
            out.flush()
        self.send_response(202)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[2], "w") as f:
    f.write(str(srv.server_address[1]))
threading.Timer(120, srv.shutdown).start()
srv.serve_forever()
