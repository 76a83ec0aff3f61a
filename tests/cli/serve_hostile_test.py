#!/usr/bin/env python3
"""hetero serve against hostile clients, on loopback, in well under a minute:
headers and bodies sent a byte at a time, chunked and declared bodies over
the size limit, one client opening more connections than it may, clients
leaving mid-stream and mid-reply, a chat template that loops or builds a huge
string, malformed JSON and sampling fields. Throughout, a probe asks /health
every 100 ms over a fresh connection (from the same address as the
attackers) and must be answered within 1 s (2 s under the large requests),
and a well-behaved client (from another loopback address) must get every
answer. Afterwards the server's RSS
and open descriptors (/proc/PID) must be back where they were. Last, SIGTERM
while a template renders and a reply is generated: a prompt exit, the cut
reply reported as an error; and an IPv6 listener printing its URL in brackets.
Usage: serve_hostile_test.py HETERO_BINARY"""
import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import serve_lib
from serve_lib import check

hetero = sys.argv[1]
# The limits under test, small so the suite stays short (the defaults are 10 s and 30 s).
HEADER_TIMEOUT, BODY_TIMEOUT, PER_CLIENT = 2.0, 3.0, 24
SERVE_ARGS = os.environ.get("HETERO_SERVE_TEST_ARGS",
                            f"--header-timeout {HEADER_TIMEOUT} --body-timeout {BODY_TIMEOUT} "
                            f"--max-client-connections {PER_CLIENT} --max-connections 96").split()
started = time.time()


TEMPLATE = """{%- if messages[-1].content == 'LOOP' -%}
{%- for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor -%}
{%- elif messages[-1].content == 'HUGE' -%}
{%- set ns = namespace(s='xxxxxxxx') -%}{%- for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor -%}{{ ns.s }}
{%- endif -%}
{%- for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}<|im_start|>assistant
"""


class Server:
    def __init__(self, tmp, name, host="127.0.0.1", context=4096):
        self.log_path = os.path.join(tmp, name + ".log")
        self.log = open(self.log_path, "w")
        self.host = host
        self.proc, self.url, self.port = serve_lib.start_server(
            [hetero, "serve", "--providers", "cpu", "--port", "0", "-q", "--host", host, "-m", os.path.join(tmp, "model.gguf"), "-c",
             str(context), "--chat-template", os.path.join(tmp, "hostile.jinja"), *SERVE_ARGS], self.log)

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))


def connect(srv, source="127.0.0.1", timeout=10):
    s = socket.create_connection((srv.host, srv.port), timeout=timeout, source_address=(source, 0) if srv.host == "127.0.0.1" else None)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def request(srv, method, path, body=None, source="127.0.0.1", timeout=60):
    """One request on a fresh connection: (status, parsed JSON or text, seconds)."""
    t0 = time.time()
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=timeout,
                                      source_address=(source, 0) if srv.host == "127.0.0.1" else None)
    try:
        data = json.dumps(body) if isinstance(body, dict) else body
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data is not None else {})
        r = conn.getresponse()
        return r.status, serve_lib.parse_body(r.read()), time.time() - t0
    finally:
        conn.close()


def read_all(s, limit=1 << 20):
    """What the server sends until it closes (or the socket's timeout)."""
    out = b""
    try:
        while len(out) < limit:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    return out


def status_of(response):
    m = re.match(rb"HTTP/1\.[01] (\d+)", response)
    return int(m.group(1)) if m else None


class Background(threading.Thread):
    """Repeats `step` every `interval` s until stopped; step returns (ok, detail)."""

    def __init__(self, step, interval):
        super().__init__(daemon=True)
        self.step, self.interval, self.stopping = step, interval, threading.Event()
        self.results, self.phase = [], "start"

    def run(self):
        while not self.stopping.is_set():
            phase = self.phase
            try:
                ok, detail = self.step()
            except Exception as e:  # a probe that got no answer at all
                ok, detail = False, repr(e)
            self.results.append((phase, ok, detail))
            self.stopping.wait(self.interval)

    def failures(self):
        return [r for r in self.results if not r[1]]


def completion(max_tokens=2, prompt="Once upon a time", **extra):
    return {"model": "random", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, **extra}


NO_EOS = {"2": -100}  # gen-model's EOS barred, for replies that must still be running when a signal comes


def chat(content, max_tokens=4, **extra):
    return {"model": "random", "messages": [{"role": "user", "content": content}], "max_tokens": max_tokens, "temperature": 0, **extra}


def trickle(sockets, payload_of, interval, stop):
    """Sends each socket its payload a byte every `interval` s; notes when the server ended each."""
    ended = {}
    pos = {s: 0 for s in sockets}
    while not stop.is_set() and len(ended) < len(sockets):
        for s in sockets:
            if s in ended:
                continue
            data = payload_of(s)
            try:
                s.send(data[pos[s] % len(data):][:1])
                pos[s] += 1
            except OSError:
                ended[s] = time.time()
        stop.wait(interval)
    return ended


def slow_clients(srv, source, preamble, payload, n, limit_s, label):
    """n clients from `source` sending `preamble` at once, then trickling `payload`; each must be answered with 408
    within limit_s."""
    socks = [connect(srv, source) for _ in range(n)]
    t0 = time.time()
    for s in socks:
        s.sendall(preamble)
    stop = threading.Event()
    ended_at = {}
    answers = {}

    def watch(s):
        s.settimeout(limit_s + 5)
        answers[s] = read_all(s)
        ended_at[s] = time.time()

    watchers = [threading.Thread(target=watch, args=(s,), daemon=True) for s in socks]
    for w in watchers:
        w.start()
    feeder = threading.Thread(target=trickle, args=([s for s in socks], lambda s: payload, 0.2, stop), daemon=True)
    feeder.start()
    for w in watchers:
        w.join(timeout=max(0.1, t0 + limit_s + 6 - time.time()))
    stop.set()
    latest = max((ended_at.get(s, time.time()) - t0 for s in socks), default=0)
    statuses = [status_of(answers.get(s, b"")) for s in socks]
    for s in socks:
        s.close()
    check(f"{label}: all {n} dropped within {limit_s:.1f} s (latest {latest:.1f} s), with 408",
          latest <= limit_s and all(st == 408 for st in statuses), f"statuses {statuses}")


def main():
    tmp = tempfile.mkdtemp()
    subprocess.run([hetero, "gen-model", os.path.join(tmp, "model.gguf"), "--shape", "stories15m", "--type", "q8_0"], check=True,
                   capture_output=True)
    with open(os.path.join(tmp, "hostile.jinja"), "w") as f:
        f.write(TEMPLATE)
    srv = Server(tmp, "server")
    try:
        run_suite(srv)
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
    sigterm_checks(tmp)
    ipv6_checks(tmp)
    print(f"     suite ran {time.time() - started:.1f} s")
    sys.exit(serve_lib.exit_status())


def run_suite(srv):
    # Warm up every path once (three large requests at once among them: the
    # allocator's working size), then take the levels the end must return to.
    for body in (completion(), chat("Hello", 2)):
        request(srv, "POST", "/v1/completions" if "prompt" in body else "/v1/chat/completions", body)
    large_requests(srv)
    time.sleep(0.5)
    rss0, fds0 = srv.rss_kb(), srv.fds()

    def probe():
        # Within 1 s; 2 s while three 6 MiB requests are parsed at once,
        # which on a 2-core machine running other tests beside this one
        # starves every thread for about a second (seen: 1.13 s). A /health
        # that waited for them would still show in the other phases.
        limit = 2.0 if health.phase == "large requests" else 1.0
        st, body, dt = request(srv, "GET", "/health", timeout=3)
        return st == 200 and dt < limit, f"{st} in {dt:.2f} s"

    health = Background(probe, 0.1)

    def good_client():
        st, body, dt = request(srv, "POST", "/v1/completions", completion(), source="127.0.0.2", timeout=30)
        return st == 200, f"{st} in {dt:.2f} s: {str(body)[:200]}"

    good = Background(good_client, 0.5)
    health.start()
    good.start()

    health.phase = good.phase = "slow headers"
    slow_clients(srv, "127.0.0.3", b"", b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: a\r\n" * 200, 20,
                 HEADER_TIMEOUT + 1.0, "20 clients sending headers a byte at a time")
    slow_clients(srv, "127.0.0.3", b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n", b"X-Pad: a\r\n" * 200, 20,
                 HEADER_TIMEOUT + 1.0, "20 clients sending header lines a byte at a time")
    health.phase = good.phase = "slow body"
    slow_clients(srv, "127.0.0.4",
                 b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n",
                 b'{"model": "random", "prompt": "' + b"a" * 5000, 20, BODY_TIMEOUT + 1.0, "20 clients sending a body a byte at a time")

    health.phase = good.phase = "oversized Content-Length"
    s = connect(srv)
    t0 = time.time()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{")
    s.settimeout(10)
    answer = read_all(s)
    dt = time.time() - t0
    s.close()
    check(f"Content-Length of 100 MB: 413 before the body is read ({dt:.2f} s)", status_of(answer) == 413 and dt < 1.0,
          answer[:300])

    health.phase = good.phase = "chunked oversize"
    s = connect(srv)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"x" * (1 << 20)
    sent = 0
    try:
        while sent < (40 << 20):
            s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sent += len(chunk)
        s.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    s.settimeout(10)
    answer = read_all(s)
    s.close()
    check(f"a chunked body over 16 MiB: 413 (the server stopped reading after {sent >> 20} MiB of 40)",
          status_of(answer) == 413 and sent < (40 << 20), answer[:300])

    health.phase = good.phase = "many connections from one client"
    socks = [connect(srv, "127.0.0.5") for _ in range(PER_CLIENT + 16)]
    t0 = time.time()
    first = {}  # each socket's first answer
    while len(first) < len(socks) and time.time() < t0 + 3.0:
        readable, _, _ = select.select([s for s in socks if s not in first], [], [], 0.1)
        for s in readable:
            try:
                first[s] = s.recv(4096)
            except OSError:
                first[s] = b""
    refused = sum(status_of(got) == 503 and b"too_many_connections" in got for got in first.values())
    st, body, dt = request(srv, "GET", "/health", source="127.0.0.5", timeout=3)
    for s in socks:
        s.close()
    check(f"{PER_CLIENT + 16} connections from one client: the 16 past its cap get 503 ({refused} did)", refused == 16)
    check(f"that client's /health past its cap is still answered ({dt:.2f} s)", st == 200 and dt < 1.0, f"{st} {body}")

    health.phase = good.phase = "malformed requests"
    st, body, _ = request(srv, "POST", "/v1/chat/completions", '{"model": "random", "messages": [}')
    check("malformed JSON: 400 with an error object", st == 400 and "error" in body, str(body))
    for field, value in (("top_p", 0), ("top_p", 1.5), ("temperature", -1), ("temperature", "hot"), ("max_tokens", 0),
                         ("presence_penalty", 3), ("seed", 1.5), ("n", 2), ("stop", [1])):
        st, body, _ = request(srv, "POST", "/v1/chat/completions", chat("Hello", **{field: value}))
        check(f"{field} = {value!r}: 400 naming it", st == 400 and body["error"]["param"] == field, str(body))

    health.phase = good.phase = "hostile template"
    for content, budget in (("LOOP", "time"), ("HUGE", "size")):
        st, body, dt = request(srv, "POST", "/v1/chat/completions", chat(content))
        ok = st == 400 and body["error"]["type"] == "invalid_request_error" and "template" in body["error"]["message"] and dt < 4
        check(f"a template that {'loops' if content == 'LOOP' else 'builds a huge string'}: 400 template error in {dt:.1f} s "
              f"({budget} budget)", ok, str(body)[:300])

    health.phase = good.phase = "client leaves mid-stream"
    s = connect(srv)
    body = json.dumps(chat("Tell me everything", 900, stream=True, logit_bias=NO_EOS)).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    got = b""
    while got.count(b"data: ") < 4:
        got += s.recv(4096)
    s.close()
    st, _, dt = request(srv, "POST", "/v1/completions", completion())
    check(f"a client leaving mid-stream: the next request answered in {dt:.2f} s", st == 200 and dt < 2.0)

    health.phase = good.phase = "client leaves mid-reply"
    s = connect(srv)
    body = json.dumps(chat("Tell me everything", 4000)).encode()  # seconds of work even at ~1,500 tokens a second
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    time.sleep(0.3)
    s.close()
    st, _, dt = request(srv, "POST", "/v1/completions", completion())
    time.sleep(0.3)
    check(f"a client leaving a non-streamed request: its generation cancelled, the next answered in {dt:.2f} s",
          st == 200 and dt < 2.0 and srv.text().count("cancelled") >= 2, srv.text()[-500:])

    # Large legal requests, three at a time: the allocator must not keep what they used.
    health.phase = good.phase = "large requests"
    rss_rounds = []
    for _ in range(6):
        large_requests(srv)
        rss_rounds.append(srv.rss_kb())
    print(f"     RSS after each round of three 6 MiB requests (kB): {rss_rounds}")
    check("RSS levels off under large requests (round 6 <= round 2 + 5 % + 8 MiB, and below 200 MiB)",
          rss_rounds[5] <= rss_rounds[1] * 1.05 + 8192 and rss_rounds[5] < 200 << 10, str(rss_rounds))

    health.stopping.set()
    good.stopping.set()
    health.join()
    good.join()
    latencies = [float(d.split(" in ")[1].split(" ")[0]) for _, ok, d in health.results if " in " in d]
    print(f"     /health: {len(health.results)} probes, latency max {max(latencies):.3f} s, "
          f"median {sorted(latencies)[len(latencies) // 2]:.3f} s")
    bad = health.failures()
    check("/health answered within 1 s throughout (2 s under the large requests)", not bad, "; ".join(f"[{p}] {d}" for p, _, d in bad[:5]))
    bad = good.failures()
    check(f"a well-behaved client got all its {len(good.results)} answers", not bad and len(good.results) > 10,
          "; ".join(f"[{p}] {d}" for p, _, d in bad[:5]))

    time.sleep(1.5)  # the last connections end, freed memory goes back
    rss1, fds1 = srv.rss_kb(), srv.fds()
    print(f"     server RSS {rss0} kB -> {rss1} kB, open descriptors {fds0} -> {fds1}")
    check("open descriptors back where they were", fds1 <= fds0, f"{fds0} -> {fds1}")
    check("RSS back within 10 % + 16 MiB of where it was", rss1 <= rss0 * 1.1 + 16384, f"{rss0} -> {rss1}")


def large_requests(srv):
    """Three 6 MiB requests at once (tokenized, then refused as longer than the context)."""
    big = completion(prompt="word " * (1200 << 10))
    threads = [threading.Thread(target=request, args=(srv, "POST", "/v1/completions", big)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(0.2)  # the connections end after their responses


def sigterm_checks(tmp):
    """SIGTERM while one client's template renders and another's reply is generated."""
    # A long context and reply: a fast machine generates ~1,000 tokens a second on this model, and the
    # reply must still be running when the signal comes.
    srv = Server(tmp, "server-sigterm", context=16384)
    results = {}

    def ask(name, path, body):
        try:
            results[name] = request(srv, "POST", path, body, timeout=30)
        except Exception as e:  # noqa: BLE001 (a closed connection is an answer here too)
            results[name] = (None, repr(e), 0)

    # EOS (id 2 in gen-model's vocabulary) is barred: a batched step's rounding may lead greedy decoding to it.
    threads = [threading.Thread(target=ask, args=("reply", "/v1/chat/completions", chat("Tell me everything", 16000, logit_bias=NO_EOS)))]
    threads[0].start()
    time.sleep(1.0)  # the reply is being generated
    threads.append(threading.Thread(target=ask, args=("template", "/v1/chat/completions", chat("LOOP"))))
    threads[1].start()
    time.sleep(0.4)  # the template is rendering (its budget is 2 s)
    t0 = time.time()
    srv.proc.send_signal(signal.SIGTERM)
    try:
        rc = srv.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.proc.kill()
        rc = None
    dt = time.time() - t0
    for t in threads:
        t.join()
    check(f"SIGTERM while a template renders and a reply is generated: exit 0 in {dt:.2f} s (< 1 s)", rc == 0 and dt < 1.0,
          srv.text()[-400:])
    st, body, _ = results.get("reply", (None, None, 0))
    check("the reply cut by SIGTERM: 503 with an error object (code server_shutting_down), not a finished reply",
          st == 503 and isinstance(body, dict) and body["error"]["code"] == "server_shutting_down", f"{st} {str(body)[:300]}")


def ipv6_checks(tmp):
    if not socket.has_ipv6:
        print("skip IPv6 (no IPv6 here)")
        return
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        print("skip IPv6 (no ::1 here)")
        return
    srv = Server(tmp, "server-ipv6", host="::1")
    check(f"--host ::1 prints its URL with brackets ({srv.url})", srv.url == f"http://[::1]:{srv.port}", srv.text()[-300:])
    # A stream cut by SIGTERM ends with an error event, not with finish_reason "stop".
    s = socket.create_connection(("::1", srv.port), timeout=20)
    body = json.dumps(chat("Tell me everything", 900, stream=True, logit_bias=NO_EOS)).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    got = b""
    while got.count(b"data: ") < 4:
        got += s.recv(4096)
    srv.proc.send_signal(signal.SIGTERM)
    got += read_all(s)
    s.close()
    srv.proc.wait(timeout=10)
    events = [line[6:] for line in got.decode(errors="replace").split("\n") if line.startswith("data: ")]
    last = json.loads(events[-2]) if len(events) >= 2 and events[-1].strip() == "[DONE]" else {}
    finishes = [c["choices"][0].get("finish_reason") for c in map(json.loads, events[:-1]) if "choices" in c]
    check("a stream cut by SIGTERM ends with an error event (code server_shutting_down), no finish_reason",
          last.get("error", {}).get("code") == "server_shutting_down" and not any(finishes), str(events[-3:])[:400])


if __name__ == "__main__":
    main()
