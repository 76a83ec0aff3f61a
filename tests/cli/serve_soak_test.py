#!/usr/bin/env python3
"""hetero serve under a soak of mixed requests, on loopback: SOAK_REQUESTS
(default 2000) requests from 6 client threads, a mix of completions and chat
completions, streamed and not, short and long prompts, some clients leaving
in the middle of a streamed reply, and a share of malformed ones (bad JSON,
bad fields, unknown paths, a megabyte of garbage, a body declared over the
server's 16 MiB limit). Every well-formed request must get a 200 with a
well-formed body, exactly one (one [DONE] per stream, completion ids never
repeated); every malformed one its 4xx; the server's /metrics must count
each request once (none lost, none answered twice); /health must keep
answering.
Afterwards the server's RSS and open descriptors must be flat: within 10 % +
16 MiB of the level after a warm-up round, descriptors back where they were.
Usage: serve_soak_test.py HETERO_BINARY"""
import http.client
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import serve_lib
from serve_lib import check

hetero = sys.argv[1]
N = int(os.environ.get("SOAK_REQUESTS", "2000"))
THREADS = 6
here = os.path.dirname(os.path.abspath(__file__))
model = os.path.join(here, "..", "..", "models", "stories260K.gguf")


def request(port, method, path, body=None, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body is not None else {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def declare_oversized(port):
    """A body declared over the limit and never sent: refused by its length."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1073741824\r\n\r\n")
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(256)
            if not chunk:
                break
            head += chunk
        m = re.match(rb"HTTP/1\.1 (\d+)", head)
        return int(m.group(1)) if m else 0
    finally:
        s.close()


def leave_mid_stream(port, prompt):
    """A streamed request whose client reads one chunk and closes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    body = json.dumps({"model": MODEL, "prompt": prompt, "max_tokens": 200, "stream": True})
    s.sendall((f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n{body}").encode())
    s.recv(256)
    s.close()


MODEL = ""  # the served model's id, from /v1/models
PROMPTS = ["Once upon a time", "The cat sat", "A", "Lily and Tom went to the park and " * 8, "Tell me about the sun."]


def one(port, rng, stats):
    kind = rng.random()
    prompt = rng.choice(PROMPTS)
    if kind < 0.05:
        leave_mid_stream(port, prompt)
        stats["left"] += 1
        stats["posted"] += 1
        return
    if kind < 0.15:  # malformed: each must get its 4xx
        bad = rng.choice([("POST", "/v1/completions", "{not json"),
                          ("POST", "/v1/completions", json.dumps({"prompt": "x", "max_tokens": -3})),
                          ("POST", "/v1/chat/completions", json.dumps({"messages": "not a list"})),
                          ("POST", "/v1/completions", json.dumps({"prompt": "x", "temperature": "hot"})),
                          ("GET", "/v1/nothing-here", None)])
        if rng.random() < 0.1:
            bad = ("POST", "/v1/completions", "{" + "x" * (1 << 20))  # a megabyte of garbage, within the limit
        if rng.random() < 0.05:
            bad = ("POST", "/v1/completions", "<1 GiB declared>")
            status = declare_oversized(port)
            if status != 413:
                stats["errors"].append(f"a body declared as 1 GiB: HTTP {status}, not 413")
        else:
            status, _ = request(port, *bad)
        stats["bad"] += 1
        stats["posted"] += bad[0] == "POST"
        if not 400 <= status < 500:
            stats["errors"].append(f"{bad[0]} {bad[1]} {bad[2]!r}: HTTP {status}")
        return
    stream = rng.random() < 0.3
    n = rng.choice([1, 4, 16])
    if kind < 0.55:
        path, body = "/v1/completions", {"model": MODEL, "prompt": prompt, "max_tokens": n, "temperature": 0, "stream": stream}
    else:
        path, body = "/v1/chat/completions", {"model": MODEL, "messages": [{"role": "user", "content": prompt}], "max_tokens": n,
                                              "stream": stream}
    status, raw = request(port, "POST", path, json.dumps(body))
    stats["good"] += 1
    stats["posted"] += 1
    if status != 200:
        stats["errors"].append(f"{path} stream={stream}: HTTP {status} {raw[:200]!r}")
        return
    text = raw.decode(errors="replace")
    if stream:
        if text.count("data: [DONE]") != 1:
            stats["errors"].append(f"{path}: a stream with {text.count('data: [DONE]')} [DONE]s: {text[-200:]!r}")
        ids = set(re.findall(r'"id":\s*"([^"]+)"', text))
        if len(ids) != 1:
            stats["errors"].append(f"{path}: a stream with ids {sorted(ids)[:4]}")
        stats["ids"] += sorted(ids)[:1]
    else:
        try:
            j = json.loads(text)
            if not j.get("choices"):
                stats["errors"].append(f"{path}: no choices: {text[:200]!r}")
            stats["ids"].append(j.get("id"))
        except ValueError:
            stats["errors"].append(f"{path}: not JSON: {text[:200]!r}")


def round_of(port, count, seed):
    stats = {"good": 0, "bad": 0, "left": 0, "posted": 0, "errors": [], "ids": []}
    lock = threading.Lock()
    todo = list(range(count))

    def worker(k):
        rng = random.Random(seed * 100 + k)
        local = {"good": 0, "bad": 0, "left": 0, "posted": 0, "errors": [], "ids": []}
        while True:
            with lock:
                if not todo:
                    break
                todo.pop()
            try:
                one(port, rng, local)
            except Exception as e:  # a connection error is a failure to answer
                local["errors"].append(f"{type(e).__name__}: {e}")
        with lock:
            for key in ("good", "bad", "left", "posted"):
                stats[key] += local[key]
            stats["errors"] += local["errors"]
            stats["ids"] += local["ids"]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return stats


with tempfile.TemporaryDirectory() as tmp:
    log = open(os.path.join(tmp, "serve.log"), "w")
    proc, _, port = serve_lib.start_server([hetero, "serve", "--providers", "cpu", "--port", "0", "-q", "-m", model, "-c", "512"], log)

    def rss_kb():
        return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{proc.pid}/status").read()).group(1))

    def fds():
        return len(os.listdir(f"/proc/{proc.pid}/fd"))

    def completions_answered():
        """The completion responses the server counted (/metrics), every status."""
        _, raw = request(port, "GET", "/metrics")
        return sum(int(v) for v in re.findall(rb'hetero_requests_total\{endpoint="/v1/(?:chat/)?completions",status="\d+"\} (\d+)', raw))

    status, raw = request(port, "GET", "/v1/models")
    MODEL = json.loads(raw)["data"][0]["id"]
    t0 = time.time()
    warm = round_of(port, min(200, N), 1)
    time.sleep(0.5)
    rss0, fds0 = rss_kb(), fds()
    answered0 = completions_answered()
    main = round_of(port, N, 2)
    time.sleep(1.0)  # clients that left: their requests are cancelled and their sockets closed
    rss1, fds1 = rss_kb(), fds()
    answered = completions_answered() - answered0
    errors = warm["errors"] + main["errors"]
    print(f"     {N} requests in {time.time() - t0:.1f} s after a warm-up of {min(200, N)}: {main['good']} well-formed, "
          f"{main['bad']} malformed, {main['left']} left mid-stream; RSS {rss0} -> {rss1} kB, descriptors {fds0} -> {fds1}")
    check("every well-formed request answered 200 with a well-formed body, every malformed one 4xx", not errors,
          "; ".join(errors[:5]) + (f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""))
    status, _ = request(port, "GET", "/health", timeout=5)
    check("/health answers after the soak", status == 200)
    ids = [i for i in warm["ids"] + main["ids"] if i]
    check("no completion id answered twice", len(ids) == len(set(ids)) and len(ids) >= main["good"],
          f"{len(ids)} ids, {len(set(ids))} distinct, {main['good']} well-formed requests")
    # A client that left mid-stream may or may not be counted (its reply was cut): between the two.
    check("the server answered each completion request once: none lost, none twice",
          main["posted"] - main["left"] <= answered <= main["posted"], f"{main['posted']} sent ({main['left']} left mid-stream), {answered} counted")
    check("open descriptors back where they were", fds1 <= fds0, f"{fds0} -> {fds1}")
    check("RSS flat: within 10 % + 16 MiB of the level after the warm-up", rss1 <= rss0 * 1.1 + 16384, f"{rss0} -> {rss1} kB")
    proc.send_signal(2)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        check("the server stops on SIGINT", False)
sys.exit(serve_lib.exit_status())
