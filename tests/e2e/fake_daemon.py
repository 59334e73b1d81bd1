#!/usr/bin/env python3
"""A hostile or odd cuprobe daemon (or Prometheus) on loopback, for test_capture_client.sh.

fake_daemon.py ADDR PORT_FILE LOG MODE [ARG]: listens on ADDR (a loopback address) at a
port the kernel picks, written to PORT_FILE; appends each request it reads, raw (repr),
one line each, to LOG; then answers as MODE says:
  endless        200, no Content-Length, a body that never ends
  drip           200, then a byte of body a second
  tlsdrip        a TLS record header (16 KiB of handshake to come), then a byte a second
  redirect       302 to ARG, empty body
  json           200 with ARG (a JSON text) as the body
  job            a daemon of one rank: GET /targets, POST /capture ok, and GET /trace as
                 ARG says: "huge" (Content-Length: 2 GiB, then bytes without end) or
                 "slow" (no length, 64 KiB every 10 ms without end)
Every connection is served by a thread of its own; the process runs until killed.
"""
import json
import os
import socketserver
import sys
import threading
import time

ADDR, PORT_FILE, LOG, MODE = sys.argv[1:5]
ARG = sys.argv[5] if len(sys.argv) > 5 else ""
LOCK = threading.Lock()
CHUNK = b"x" * 65536

TARGETS = {"targets": [{"pid": 42, "rank": 0, "world_size": 1, "step": 1,
                        "steps_per_second": 1, "host": "fake", "found": "exec"}]}
CAPTURE = {"ranks": [{"pid": 42, "result": "ok", "why": "", "first_step": 3, "last_step": 3,
                      "launches": 1, "trace": "/fake/captures/run_0/fake_42.1.pt.trace.json"}]}


def head(status, length=None, extra=""):
    h = "HTTP/1.1 %s\r\n%sConnection: close\r\n" % (status, extra)
    if length is not None:
        h += "Content-Length: %d\r\n" % length
    return (h + "\r\n").encode()


def json_answer(obj):
    body = (obj if isinstance(obj, str) else json.dumps(obj)).encode()
    return head("200 OK", len(body), "Content-Type: application/json\r\n") + body


class Handler(socketserver.BaseRequestHandler):
    def read_request(self):
        """The request's head; for tlsdrip, the first read (a ClientHello has no blank line)."""
        self.request.settimeout(3)
        data = b""
        try:
            while not (data and MODE == "tlsdrip") and b"\r\n\r\n" not in data and \
                    len(data) < 65536:
                got = self.request.recv(4096)
                if not got:
                    break
                data += got
        except OSError:
            pass
        with LOCK, open(LOG, "a") as f:
            f.write(repr(data) + "\n")
        return data

    def forever(self, first, chunk, pause):
        self.request.sendall(first)
        while True:
            self.request.sendall(chunk)
            time.sleep(pause)

    def job(self, line):
        if line.startswith(b"GET /targets"):
            self.request.sendall(json_answer(TARGETS))
        elif line.startswith(b"POST /capture"):
            self.request.sendall(json_answer(CAPTURE))
        elif ARG == "huge":
            self.forever(head("200 OK", 2 << 30), CHUNK, 0.01)
        else:
            self.forever(head("200 OK"), CHUNK, 0.01)

    def handle(self):
        line = self.read_request().split(b"\r\n", 1)[0]
        try:
            if MODE == "endless":
                self.forever(head("200 OK"), CHUNK, 0)
            elif MODE == "drip":
                self.forever(head("200 OK"), b"{", 1)
            elif MODE == "tlsdrip":
                self.forever(b"\x16\x03\x03\x40\x00", b"\x00", 1)
            elif MODE == "redirect":
                self.request.sendall(head("302 Found", 0, "Location: %s\r\n" % ARG))
            elif MODE == "json":
                self.request.sendall(json_answer(ARG))
            elif MODE == "job":
                self.job(line)
        except OSError:
            pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server((ADDR, 0), Handler)
# Renamed into place: the port file appears whole.
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
srv.serve_forever()
