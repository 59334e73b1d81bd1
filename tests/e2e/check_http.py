#!/usr/bin/env python3
"""Socket clients for tests/e2e/test_http.sh.

hold PORT READY REPORT GROUP...: GROUP is NAME=FROM:COUNT[:silent|:line|:trickle],
  COUNT connections from address FROM that never finish their request (silent:
  nothing sent; line: a request line, then nothing; trickle: a header line
  every second, slowloris), opened in the order given. Touches READY once all
  are connected, and writes REPORT (JSON) once the server closed them all or
  after 15 s: per group, per connection, the seconds from its connect to its
  close (None if still open) and the first line it read.
ask PORT FROM REQUEST: one request (Python escapes in REQUEST), prints the
  status line and the seconds it took (the answer read to its end).
serve PORT_FILE BODY: an HTTP server on loopback answering every request 200
  with BODY, its port written to PORT_FILE.
guess PORT CAFILE USER SECONDS MAX REPORT FROM...: a login flood, one thread per
  address FROM, each asking GET /metrics over TLS (trusting CAFILE) with USER
  and a new wrong password each time, one request at a time, until SECONDS or
  MAX requests; writes REPORT (JSON): per address, the count of each status
  and the largest Retry-After seen.
"""
import base64
import http.server
import json
import os
import select
import socket
import ssl
import sys
import threading
import time


def connect(port, src):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def hold(port, ready, report, *groups):
    socks = []
    for g in groups:
        name, spec = g.split("=")
        src, count, kind = (spec.split(":") + ["silent"])[:3]
        for _ in range(int(count)):
            s = connect(int(port), src)
            if kind != "silent":
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            socks.append({"s": s, "t0": time.monotonic(), "closed": None, "read": b"",
                          "group": name, "trickle": kind == "trickle"})
    open(ready, "w").close()
    end = time.monotonic() + 15
    next_line = time.monotonic() + 1
    while time.monotonic() < end and any(c["closed"] is None for c in socks):
        live = [c for c in socks if c["closed"] is None]
        r, _, _ = select.select([c["s"] for c in live], [], [], 0.05)
        now = time.monotonic()
        for c in live:
            if c["s"] in r:
                try:
                    data = c["s"].recv(4096)
                except OSError:
                    data = b""
                c["read"] += data
                if not data:
                    c["closed"] = now - c["t0"]
        if now >= next_line:
            next_line = now + 1
            for c in (c for c in live if c["trickle"]):
                try:
                    c["s"].sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
    out = {}
    for c in socks:
        out.setdefault(c["group"], []).append(
            {"closed": c["closed"], "first": c["read"].split(b"\r\n")[0].decode(errors="replace")})
    with open(report + ".tmp", "w") as f:
        json.dump(out, f)
    os.rename(report + ".tmp", report)


def ask(port, src, req):
    t0 = time.monotonic()
    s = connect(int(port), src)
    s.settimeout(10)
    s.sendall(req.encode().decode("unicode_escape").encode("latin-1"))
    data = b""
    try:
        while True:
            d = s.recv(4096)
            if not d:
                break
            data += d
    except OSError as e:
        data += ("<%s>" % e).encode()
    print(data.split(b"\r\n")[0].decode(errors="replace"), "%.2f" % (time.monotonic() - t0))


def serve(port_file, body):
    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            b = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(b)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    srv.serve_forever()


def guess_one(port, ctx, user, end, most, src, out):
    seen = {"codes": {}, "retry_after": 0}
    for n in range(int(most)):
        if time.monotonic() >= end:
            break
        cred = base64.b64encode(("%s:guess-%s-%d" % (user, src, n)).encode()).decode()
        code, retry = "000", 0
        try:
            with ctx.wrap_socket(connect(port, src), server_hostname="127.0.0.1") as s:
                s.settimeout(10)
                s.sendall(("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n"
                           "Connection: close\r\n\r\n" % cred).encode())
                data = b""
                while True:
                    d = s.recv(4096)
                    if not d:
                        break
                    data += d
            head = data.split(b"\r\n\r\n")[0].decode(errors="replace").split("\r\n")
            code = head[0].split()[1] if head[0] else "000"
            for h in head[1:]:
                if h.lower().startswith("retry-after:"):
                    retry = int(h.split(":")[1])
        except (OSError, ValueError, IndexError):
            pass
        seen["codes"][code] = seen["codes"].get(code, 0) + 1
        seen["retry_after"] = max(seen["retry_after"], retry)
        time.sleep(0.01)
    out[src] = seen


def guess(port, cafile, user, seconds, most, report, *srcs):
    ctx = ssl.create_default_context(cafile=cafile)
    end = time.monotonic() + float(seconds)
    out = {}
    threads = [threading.Thread(target=guess_one, args=(int(port), ctx, user, end, most, src, out))
               for src in srcs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(report + ".tmp", "w") as f:
        json.dump(out, f)
    os.rename(report + ".tmp", report)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "hold":
        hold(*args)
    elif cmd == "ask":
        ask(*args)
    elif cmd == "serve":
        serve(*args)
    elif cmd == "guess":
        guess(*args)
    else:
        sys.exit("check_http.py: unknown command " + cmd)
