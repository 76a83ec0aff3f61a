#!/usr/bin/env python3
"""hetero serve --parallel N: concurrent requests decode together.

1. Six greedy requests with different prompts and lengths (completions and
   chat completions, streamed and not), sent all at once to
   `serve --parallel 4`, get exactly the replies a `serve --parallel 1`
   gives them one after another.
2. Two streams at once interleave: each gets tokens while the other is
   still running, alternating, not one reply after the other.
3. Past --max-queue waiting requests, a request gets 503 with an OpenAI
   error object (code "server_busy") and a Retry-After header.

Usage: serve_parallel_test.py HETERO_BINARY [PROVIDER] (default cpu)"""
import functools
import http.client
import json
import os
import sys
import tempfile
import threading
import time

import serve_lib
from serve_lib import check

sys.setswitchinterval(1e-4)  # the client threads take turns often: arrival order follows the server's
hetero = sys.argv[1]
provider = sys.argv[2] if len(sys.argv) > 2 else "cpu"
here = os.path.dirname(os.path.abspath(__file__))
model = os.path.join(here, "..", "..", "models", "stories260K.gguf")


Server = functools.partial(serve_lib.Server, hetero, provider, model, ctx=512)  # Server(tmp, name, *flags, ctx=...)


def post(port, path, body, timeout=120):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read().decode()
    finally:
        conn.close()


def stream_events(port, path, body, on_piece, timeout=120):
    """Posts a streamed request; calls on_piece(text) for each content chunk as it arrives; returns the whole text."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {r.read()[:200]!r}")
    text = ""
    for line in r:
        line = line.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if "error" in event:
            raise RuntimeError(f"error event: {event}")
        choice = event["choices"][0]
        piece = choice["delta"].get("content") or "" if "delta" in choice else choice.get("text", "")
        if piece:
            on_piece(piece)
            text += piece
    conn.close()
    return text


def queue_depth(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    return int(serve_lib.parse_metrics(text)["hetero_queue_depth"])


# EOS (id 2) barred for the replies that must still run while others arrive: greedy text
# depends on the float rounding of the CPU's kernels and thread count, and may end early.
NO_EOS = {"2": -100}


def reply_text(status, raw):
    if status != 200:
        return f"HTTP {status}: {raw[:200]}"
    j = json.loads(raw)
    c = j["choices"][0]
    return c["message"]["content"] if "message" in c else c["text"]


# Different prompts and lengths; chat and plain; streamed and not.
REQUESTS = [
    ("/v1/completions", {"prompt": "Once upon a time, there was a little girl named Lily", "max_tokens": 120}, False),
    ("/v1/completions", {"prompt": "The dog ran", "max_tokens": 35}, True),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Tell me a story about a cat."}], "max_tokens": 80}, False),
    ("/v1/completions", {"prompt": "Tom and his mom went to the park. They saw a big tree and", "max_tokens": 200}, True),
    ("/v1/completions", {"prompt": "A", "max_tokens": 60}, False),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Why is the sky blue?"}], "max_tokens": 150}, True),
]


def run_one(port, req):
    path, body, stream = req
    body = dict(body, model="m", temperature=0)
    if stream:
        return stream_events(port, path, dict(body, stream=True), lambda piece: None)
    return reply_text(*[x for i, x in enumerate(post(port, path, body)) if i != 1])


with tempfile.TemporaryDirectory() as tmp:
    # 1. The replies of one slot, one request at a time.
    single = Server(tmp, "single", "--parallel", "1")
    expected = [run_one(single.port, r) for r in REQUESTS]
    single.stop()
    check("the one-slot server answers every request", all(e and not e.startswith("HTTP") for e in expected), str(expected))

    parallel = Server(tmp, "parallel", "--parallel", "4", "--prefill-chunk", "8")
    got = [None] * len(REQUESTS)

    def worker(i):
        try:
            got[i] = run_one(parallel.port, REQUESTS[i])
        except Exception as e:
            got[i] = f"{type(e).__name__}: {e}"

    for attempt in range(2):  # the second round finds every slot's cache holding an earlier prompt
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(REQUESTS))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        diffs = [f"request {i}: {got[i]!r} != {expected[i]!r}" for i in range(len(REQUESTS)) if got[i] != expected[i]]
        check(f"round {attempt + 1}: {len(REQUESTS)} concurrent requests on 4 slots get the one-at-a-time replies", not diffs,
              "\n     ".join(diffs))

    # 2. Two streams at once alternate.
    arrivals = []
    lock = threading.Lock()

    def streamer(tag, prompt):
        def note(piece):
            with lock:
                arrivals.append(tag)
        stream_events(parallel.port, "/v1/completions",
                      {"model": "m", "prompt": prompt, "max_tokens": 300, "temperature": 0, "stream": True, "logit_bias": NO_EOS}, note)

    threads = [threading.Thread(target=streamer, args=(tag, p)) for tag, p in (("a", "Once upon a time"), ("b", "The little bird"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    a_at = [i for i, t in enumerate(arrivals) if t == "a"]
    b_at = [i for i, t in enumerate(arrivals) if t == "b"]
    switches = sum(1 for i in range(1, len(arrivals)) if arrivals[i] != arrivals[i - 1])
    # One after the other, one stream would get all its pieces after the other's last (1 switch). The
    # clients' threads take turns in slices, so pieces come in small runs: ask for many switches and
    # for a quarter of each stream's pieces arriving while the other still streams.
    a_during_b = sum(1 for i in a_at if b_at and i < b_at[-1])
    b_during_a = sum(1 for i in b_at if a_at and i < a_at[-1])
    check("two streams interleave: each gets tokens while the other runs, alternating",
          a_at and b_at and switches >= 8 and a_during_b >= len(a_at) // 4 and b_during_a >= len(b_at) // 4,
          f"{len(a_at)} and {len(b_at)} pieces, {switches} switches: {''.join(arrivals)[:120]}")
    parallel.stop()

    # 3. A full queue answers 503 at once.
    busy = Server(tmp, "busy", "--parallel", "1", "--max-queue", "1", ctx=4096)
    started = threading.Event()
    results = {}

    def long_stream(tag):
        def note(piece):
            started.set()
        try:
            stream_events(busy.port, "/v1/completions",
                          {"model": "m", "prompt": "Once upon a time", "max_tokens": 4000, "temperature": 0, "stream": True,
                           "logit_bias": NO_EOS}, note)
            results[tag] = "done"
        except Exception as e:
            results[tag] = str(e)

    first = threading.Thread(target=long_stream, args=("first",))
    first.start()
    started.wait(60)
    second = threading.Thread(target=long_stream, args=("second",))  # waits for the slot
    second.start()
    deadline = time.time() + 60
    while queue_depth(busy.port) < 1 and time.time() < deadline:  # the second waits for the slot
        time.sleep(0.01)
    status, headers, raw = post(busy.port, "/v1/completions", {"model": "m", "prompt": "Hi", "max_tokens": 4})
    first.join()
    second.join()
    try:
        err = json.loads(raw)["error"]
    except (ValueError, KeyError):
        err = {}
    check("past --max-queue a request gets 503 (server_busy, Retry-After) while the others finish",
          status == 503 and err.get("code") == "server_busy" and "Retry-After" in headers and results == {"first": "done", "second": "done"},
          f"HTTP {status} {raw[:200]} headers {headers} others {results}")
    busy.stop()

    # 4. More slots than the machine has cores: every stream runs at once
    # (each streamed reply holds a server thread to its end).
    wide = Server(tmp, "wide", "--parallel", "12")
    first_piece, ended = {}, {}

    def wide_stream(i):
        def note(piece):
            first_piece.setdefault(i, time.monotonic())
        try:
            stream_events(wide.port, "/v1/completions",
                          {"model": "m", "prompt": f"Once upon a time {i}", "max_tokens": 300, "temperature": 0, "stream": True,
                           "logit_bias": NO_EOS}, note)
        finally:
            ended[i] = time.monotonic()

    threads = [threading.Thread(target=wide_stream, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("12 streams on --parallel 12 all get their first token before any of them ends",
          len(first_piece) == 12 and len(ended) == 12 and max(first_piece.values()) < min(ended.values()),
          f"{len(first_piece)} streams started, {len(ended)} ended; last start {max(first_piece.values(), default=0):.3f}, "
          f"first end {min(ended.values(), default=0):.3f}")
    wide.stop()
sys.exit(serve_lib.exit_status())
