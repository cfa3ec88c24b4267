#!/usr/bin/env python3
"""tests/tools/tls_pipeline.py: a TLS client (Python's ssl, on OpenSSL) that pipelines N GETs
on one connection and reads nothing for WAIT_S seconds: the server's answers pile up until its
socket is full and it must wait for room. Then it reads, and prints how many whole answers came
back and their status lines: a test sees every request answered and none cut off.

  tls_pipeline.py PORT HOST PATH N WAIT_S

TLS runs on memory buffers (ssl.MemoryBIO): the requests are encrypted up front and a thread
of their own writes them to the socket while the main thread waits, then reads.
"""
import socket
import ssl
import sys
import threading
import time


def main():
    port, host, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    n, wait_s = int(sys.argv[4]), float(sys.argv[5])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname=host)
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(out.read())
            chunk = raw.recv(65536)
            if not chunk:
                print("handshake: the server closed")
                return 1
            inc.write(chunk)
    raw.sendall(out.read())
    req = (
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
        "Accept: application/activity+json\r\n\r\n"
    ).encode()
    tls.write(req * n)
    wire = out.read()
    sender = threading.Thread(target=lambda: raw.sendall(wire))
    sender.start()
    time.sleep(wait_s)
    buf = b""
    answers = 0
    statuses = {}
    deadline = time.monotonic() + 30
    # each answer: a head with Content-Length, then that many bytes
    while answers < n and time.monotonic() < deadline:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            head = buf[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            if len(buf) >= end + 4 + length:
                status = head.split("\r\n")[0]
                statuses[status] = statuses.get(status, 0) + 1
                buf = buf[end + 4 + length:]
                answers += 1
                continue
        try:
            plain = tls.read(65536)
            buf += plain
            continue
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLError as e:
            print(f"tls: {e}")
            break
        try:
            chunk = raw.recv(65536)
        except OSError as e:
            print(f"recv: {e}")
            break
        if not chunk:
            print("the server closed the connection")
            break
        inc.write(chunk)
    sender.join(5)
    print(f"answers {answers} of {n}")
    for k, v in sorted(statuses.items()):
        print(f"{v} {k}")
    raw.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
