#!/usr/bin/env python3
"""hetero serve's features for real clients, over plain HTTP:
- the API key (--api-key / HETERO_API_KEY / --api-key-file): 401 with an
  OpenAI error object on /v1/* and /metrics without it, /health and CORS
  preflights free;
- CORS: a list of origins (echoed, Vary: Origin, others get no header), and
  "none" (no headers, no preflight);
- --alias: /v1/models lists the name and the aliases, any model name is
  answered by the one model, replies name it as asked;
- /metrics in Prometheus' text format: counters, gauges and the time-to-first-
  token histogram move with requests;
- fields hetero does not implement refused with 400 naming them, the harmless
  ones accepted;
- the samplers: logit_bias, min_p, the penalties (on the shipped model, whose
  stories repeat words), and seeds: the same seed gives the same text, and
  the seed the server logs for a request without one reproduces it.
Usage: serve_features_test.py HETERO_BINARY"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import serve_lib
from serve_lib import check

hetero = sys.argv[1]
KEY = "test-key-0123"
SHIPPED_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "stories260K.gguf")


class Server:
    def __init__(self, tmp, name, *args, env=None, model=None):
        self.log_path = os.path.join(tmp, name + ".log")
        self.proc, _, self.port = serve_lib.start_server(
            [hetero, "serve", "--providers", "cpu", "--port", "0", "-q", "-m", model or os.path.join(tmp, "model.gguf"), *args],
            self.log_path, env={**os.environ, **(env or {})})

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        self.proc.terminate()
        return self.proc.wait(timeout=30)

    def request(self, method, path, body=None, headers=None, key=KEY):
        """(status, parsed JSON or text, headers) on a fresh connection."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            h = {"Content-Type": "application/json"} if body is not None else {}
            if key:
                h["Authorization"] = "Bearer " + key
            h.update(headers or {})
            conn.request(method, path, body=json.dumps(body) if isinstance(body, dict) else body, headers=h)
            r = conn.getresponse()
            return r.status, serve_lib.parse_body(r.read()), {k.lower(): v for k, v in r.getheaders()}
        finally:
            conn.close()


def chat(content="Hello", max_tokens=6, **extra):
    return {"model": "random", "messages": [{"role": "user", "content": content}], "max_tokens": max_tokens, "temperature": 0, **extra}


def completion(prompt="Once upon a time", max_tokens=6, **extra):
    return {"model": "random", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, **extra}


def metrics(srv):
    """{"name{labels}": value} of a /metrics scrape."""
    st, text, headers = srv.request("GET", "/metrics")
    assert st == 200 and headers["content-type"].startswith("text/plain; version=0.0.4"), (st, headers)
    return serve_lib.parse_metrics(text)


def error_names(body, status_param):
    return isinstance(body, dict) and set(body.get("error", {})) == {"message", "type", "param", "code"} and body["error"]["param"] == status_param


with tempfile.TemporaryDirectory() as tmp:
    # stories15M's shape with random weights: slow enough that a generation to the full context is still running while it is looked at.
    if subprocess.run([hetero, "gen-model", os.path.join(tmp, "model.gguf"), "--shape", "stories15m", "--type", "q8_0"],
                      capture_output=True).returncode != 0:
        print("gen-model failed")
        sys.exit(1)

    # Startup refusals, before the model is loaded.
    key_file = os.path.join(tmp, "key")
    with open(key_file, "w") as f:
        f.write(f"  {KEY}-file  \n")
    for args, says in (((f"--api-key", KEY, "--api-key-file", key_file), "not both"),
                       (("--cors-origin", "none", "--cors-origin", "https://a.example"), "beside other origins"),
                       (("--cors-origin", "app.example.com"), "not an origin")):
        p = subprocess.run([hetero, "serve", "--providers", "cpu", "--port", "0", "-q", "-m", os.path.join(tmp, "model.gguf"), *args],
                           capture_output=True, text=True, timeout=60)
        check(f"serve {' '.join(args)}: refused at start ({says})", p.returncode != 0 and says in p.stderr, p.stderr[-300:])

    # One slot, so that a second request waits in the queue (the /metrics queue-depth check).
    srv = Server(tmp, "keyed", "--parallel", "1", "--alias", "gpt-test", "--alias", "second-name", "--cors-origin", "https://app.example.com",
                 "--cors-origin", "http://localhost:3000", env={"HETERO_API_KEY": KEY})

    # ---- the API key ----
    st, body, h = srv.request("GET", "/health", key=None)
    check("/health needs no key", st == 200 and body == {"status": "ok"}, f"{st} {body}")
    for path, method, payload in (("/v1/models", "GET", None), ("/v1/chat/completions", "POST", chat()), ("/v1/completions", "POST", completion()),
                                  ("/metrics", "GET", None), ("/v1/models/random", "GET", None)):
        st, body, h = srv.request(method, path, payload, key=None)
        check(f"{method} {path} without the key: 401, invalid_api_key, WWW-Authenticate",
              st == 401 and error_names(body, None) and body["error"]["code"] == "invalid_api_key" and h.get("www-authenticate") == "Bearer",
              f"{st} {body} {h}")
    st, body, _ = srv.request("GET", "/v1/models", key=KEY + "x")
    check("a wrong key: 401 'Incorrect API key'", st == 401 and "Incorrect" in body["error"]["message"], f"{st} {body}")
    st, body, _ = srv.request("GET", "/v1/models", key=KEY[:-1])
    check("a key one character short: 401", st == 401, f"{st} {body}")
    st, body, _ = srv.request("GET", "/v1/models", headers={"Authorization": "bearer " + KEY}, key=None)
    check("the key with the scheme in lower case: 200", st == 200, f"{st} {body}")

    # ---- aliases and model names ----
    st, body, _ = srv.request("GET", "/v1/models")
    ids = [m["id"] for m in body.get("data", [])] if st == 200 else []
    check("/v1/models lists the name and both aliases", ids == ["random", "gpt-test", "second-name"], f"{st} {body}")
    st, body, _ = srv.request("GET", "/v1/models/gpt-test")
    check("/v1/models/ALIAS", st == 200 and body["id"] == "gpt-test", f"{st} {body}")
    st, body, _ = srv.request("GET", "/v1/models/no-such-model")
    check("/v1/models/UNKNOWN: 404 model_not_found", st == 404 and body["error"]["code"] == "model_not_found", f"{st} {body}")
    st, plain, _ = srv.request("POST", "/v1/chat/completions", chat())
    greedy = plain["choices"][0]["message"]["content"] if st == 200 else None
    for name, answered_as in (("gpt-test", "gpt-test"), ("model", "model"), ("NAME", "random"), ("gpt-4o", "random")):
        st, body, _ = srv.request("POST", "/v1/chat/completions", {**chat(), "model": name})
        check(f"model '{name}' is answered by the one model, named '{answered_as}'",
              st == 200 and body["model"] == answered_as and body["choices"][0]["message"]["content"] == greedy, f"{st} {body}")

    # ---- CORS with a list of origins ----
    st, body, h = srv.request("POST", "/v1/completions", completion(), headers={"Origin": "https://app.example.com"})
    check("an allowed origin is named back, with Vary: Origin",
          st == 200 and h.get("access-control-allow-origin") == "https://app.example.com" and h.get("vary") == "Origin", str(h))
    st, body, h = srv.request("POST", "/v1/completions", completion(), headers={"Origin": "https://elsewhere.example"})
    check("another origin gets no Access-Control-Allow-Origin", st == 200 and "access-control-allow-origin" not in h, str(h))
    st, body, h = srv.request("OPTIONS", "/v1/chat/completions", key=None,
                              headers={"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
                                       "Access-Control-Request-Headers": "authorization,content-type,x-stainless-os"})
    check("a preflight needs no key: 204, methods, the headers asked for named back",
          st == 204 and "POST" in h.get("access-control-allow-methods", "") and
          h.get("access-control-allow-headers") == "authorization,content-type,x-stainless-os" and
          h.get("access-control-allow-origin") == "http://localhost:3000", f"{st} {h}")

    # ---- fields hetero does not implement ----
    refusals = [("/v1/chat/completions", chat(tools=[{"type": "function", "function": {"name": "f"}}]), "tools"),
                ("/v1/chat/completions", chat(tool_choice="required"), "tool_choice"),
                ("/v1/chat/completions", chat(functions=[{"name": "f"}]), "functions"),
                ("/v1/chat/completions", chat(response_format={"type": "xml"}), "response_format"),
                ("/v1/chat/completions", chat(n=2), "n"),
                ("/v1/chat/completions", chat(echo=True), "echo"),
                ("/v1/chat/completions", chat(frobnicate=1), "frobnicate"),
                ("/v1/chat/completions", chat(modalities=["text", "audio"]), "modalities"),
                ("/v1/chat/completions", chat(stream=True, stream_options={"chunk_size": 3}), "stream_options.chunk_size"),
                ("/v1/chat/completions", {**chat(), "messages": [{"role": "user", "content": "hi", "name": "bob"}]}, "messages[0].name"),
                ("/v1/chat/completions", chat(logit_bias={"99999": 1}), "logit_bias"),
                ("/v1/chat/completions", chat(logit_bias={"A": 1}), "logit_bias"),
                ("/v1/chat/completions", chat(logit_bias={"5": 101}), "logit_bias"),
                ("/v1/chat/completions", chat(min_p=1.5), "min_p"),
                ("/v1/chat/completions", chat(repeat_penalty=0), "repeat_penalty"),
                ("/v1/chat/completions", chat(repetition_penalty=1.1, repeat_penalty=1.1), "repeat_penalty"),
                ("/v1/chat/completions", chat(repeat_last_n=-2), "repeat_last_n"),
                ("/v1/chat/completions", chat(frequency_penalty=2.5), "frequency_penalty"),
                ("/v1/chat/completions", chat(top_k=-1), "top_k"),
                ("/v1/completions", completion(echo=True), "echo"),
                ("/v1/completions", completion(best_of=3), "best_of"),
                ("/v1/completions", completion(suffix="The end."), "suffix"),
                ("/v1/completions", completion(logprobs=6), "logprobs"),
                ("/v1/completions", completion(tools=[]), "tools")]
    for path, payload, param in refusals:
        st, body, _ = srv.request("POST", path, payload)
        check(f"{path.split('/')[-1]} with {param}: 400 naming it", st == 400 and error_names(body, param), f"{st} {body}")
    harmless = [("/v1/chat/completions", chat(user="u1", metadata={"k": "v"}, store=False, parallel_tool_calls=True, service_tier="auto")),
                ("/v1/chat/completions", chat(tools=[], tool_choice="none", response_format={"type": "text"}, modalities=["text"])),
                ("/v1/chat/completions", chat(stream=True, stream_options={"include_usage": True, "include_obfuscation": False})),
                ("/v1/chat/completions", chat(functions=None, logprobs=None, frobnicate=None)),
                ("/v1/completions", completion(echo=False, best_of=1, suffix="", user="u2"))]
    for path, payload in harmless:
        st, body, _ = srv.request("POST", path, payload)
        check(f"{path.split('/')[-1]} with {sorted(set(payload) - {'model', 'messages', 'prompt', 'max_tokens', 'temperature'})}: accepted",
              st == 200, f"{st} {body}")

    # ---- samplers ----
    def text_of(body):
        c = body["choices"][0]
        return c["message"]["content"] if "message" in c else c["text"]

    st, body, _ = srv.request("POST", "/v1/completions", completion(max_tokens=5, logit_bias={"68": 100}))  # token 68 is the byte 'A'
    check("logit_bias +100 on a token at temperature 0: it is every token", st == 200 and text_of(body) == "AAAAA", f"{st} {body}")
    st, body, _ = srv.request("POST", "/v1/chat/completions", chat(temperature=1.5, min_p=1, seed=5))
    check("min_p 1 at temperature 1.5 keeps only the likeliest token: the greedy reply", st == 200 and text_of(body) == greedy, f"{st} {body}")

    sampled = dict(temperature=1.0, top_p=0.9, min_p=0.02, presence_penalty=0.5, frequency_penalty=0.3, repetition_penalty=1.1,
                   logit_bias={"68": 2}, max_tokens=24)
    answers = [srv.request("POST", "/v1/completions", completion(seed=s, **sampled)) for s in (11, 11, 12)]
    texts = [text_of(b) if st == 200 else None for st, b, _ in answers]
    check("the same seed gives the same text; another seed another", texts[0] == texts[1] and texts[0] != texts[2] and texts[0], str(texts))
    st, body, _ = srv.request("POST", "/v1/completions", completion(**sampled))
    logged = re.search(re.escape(body["id"]) + r": .* seed (\d+)", srv.text()) if st == 200 else None
    again = srv.request("POST", "/v1/completions", completion(seed=int(logged.group(1)), **sampled))[1] if logged else {}
    check("a request without a seed: the seed the server logs reproduces it", logged is not None and text_of(again) == text_of(body),
          f"{body} {again} {srv.text()[-300:]}")

    # ---- /metrics ----
    before = metrics(srv)
    st, body, _ = srv.request("POST", "/v1/chat/completions", chat(max_tokens=5))
    srv.request("GET", "/v1/models", key="wrong")
    # A response is counted just after it is written: scrape until both are in.
    chat_ok, refused = 'hetero_requests_total{endpoint="/v1/chat/completions",status="200"}', 'hetero_requests_total{endpoint="/v1/models",status="401"}'
    deadline = time.time() + 10
    while True:
        after = metrics(srv)
        if time.time() > deadline or (after.get(chat_ok, 0) > before.get(chat_ok, 0) and after.get(refused, 0) > before.get(refused, 0)):
            break
        time.sleep(0.05)

    def moved(name):
        return after.get(name, 0) - before.get(name, 0)

    check("/metrics: the chat request counted by endpoint and status",
          moved(chat_ok) == 1, str(after))
    check("/metrics: the refused request counted as a 401",
          moved(refused) == 1, str(after))
    check("/metrics: prompt and generated tokens moved by the request's usage",
          st == 200 and moved("hetero_prompt_tokens_total") == body["usage"]["prompt_tokens"] and moved("hetero_generated_tokens_total") == 5,
          f"{body.get('usage')} {after}")
    check("/metrics: one more time to first token observed, in a bucket no later than +Inf",
          moved("hetero_time_to_first_token_seconds_count") == 1 and moved('hetero_time_to_first_token_seconds_bucket{le="+Inf"}') == 1 and
          moved("hetero_time_to_first_token_seconds_sum") > 0, str(after))
    check("/metrics: a decode speed, nothing waiting or in flight when idle",
          after["hetero_tokens_per_second"] > 0 and after["hetero_queue_depth"] == 0 and after["hetero_requests_in_flight"] == 0, str(after))
    buckets = [v for k, v in after.items() if k.startswith("hetero_time_to_first_token_seconds_bucket")]
    check("/metrics: histogram buckets are cumulative", buckets == sorted(buckets) and len(buckets) == 12, str(buckets))

    # While one generation runs to the full context, a second waits: in flight 2, queue depth 1.
    results = {}

    def ask(name, payload):
        results[name] = srv.request("POST", "/v1/chat/completions", payload)

    long_conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    long_conn.request("POST", "/v1/chat/completions", json.dumps(chat("Go on forever", max_tokens=None, stream=True)),
                      {"Content-Type": "application/json", "Authorization": "Bearer " + KEY})
    long_reply = long_conn.getresponse()
    long_reply.read(64)  # generating
    waiter = threading.Thread(target=ask, args=("queued", chat(max_tokens=3)))
    waiter.start()
    seen = None
    deadline = time.time() + 60
    while time.time() < deadline:
        m = metrics(srv)
        if m["hetero_requests_in_flight"] == 2 and m["hetero_queue_depth"] == 1:
            seen = m
            break
        time.sleep(0.05)
    check("/metrics while one request runs and another waits: in flight 2, queue depth 1", seen is not None)
    long_conn.close()  # the client leaves: its generation stops, the queued one runs
    waiter.join(120)
    check("the queued request is answered once the first client leaves", results.get("queued", (0,))[0] == 200, str(results))
    deadline = time.time() + 30
    while time.time() < deadline and metrics(srv)["hetero_requests_in_flight"] != 0:
        time.sleep(0.05)
    check("/metrics: nothing in flight once both are done", metrics(srv)["hetero_requests_in_flight"] == 0)
    check("the keyed server stops cleanly", srv.stop() == 0)

    # ---- the key from a file; CORS off; penalties on a model whose stories repeat words ----
    srv = Server(tmp, "file", "--api-key-file", key_file, "--cors-origin", "none", model=SHIPPED_MODEL)
    st, body, h = srv.request("POST", "/v1/completions", completion(), key=KEY + "-file", headers={"Origin": "https://app.example.com"})
    check("--api-key-file: the file's key (trimmed) is accepted", st == 200, f"{st} {body}")
    check("--cors-origin none: no Access-Control-Allow-Origin", "access-control-allow-origin" not in h, str(h))
    st, body, _ = srv.request("POST", "/v1/completions", completion(), key=KEY)
    check("--api-key-file: another key is refused", st == 401, f"{st} {body}")
    st, body, h = srv.request("OPTIONS", "/v1/completions", key=None, headers={"Origin": "https://app.example.com"})
    check("--cors-origin none: no preflight answer", st != 204 and "access-control-allow-origin" not in h, f"{st} {h}")
    story = dict(model="stories260K", prompt="Once upon a time", max_tokens=48, temperature=0)
    st, body, _ = srv.request("POST", "/v1/completions", story, key=KEY + "-file")
    greedy_story = text_of(body) if st == 200 else None
    for extra, changes in ((dict(frequency_penalty=2, presence_penalty=2), True), (dict(presence_penalty=2), True),
                           (dict(repeat_penalty=3, repeat_last_n=-1), True), (dict(repetition_penalty=3, repeat_last_n=0), False)):
        st, body, _ = srv.request("POST", "/v1/completions", {**story, **extra}, key=KEY + "-file")
        check(f"{extra} {'changes' if changes else 'leaves'} the greedy story",
              st == 200 and greedy_story and (text_of(body) != greedy_story) == changes, f"{greedy_story!r} {body}")
    check("the second server stops cleanly", srv.stop() == 0)

sys.exit(serve_lib.exit_status())
