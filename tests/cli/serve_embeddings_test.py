#!/usr/bin/env python3
"""POST /v1/embeddings of hetero serve.

1. Every input form (a string, strings, token ids, arrays of token ids)
   gives one unit vector of the model's width per input, in order, with
   usage counting the tokens; token ids give what the text they encode gives.
2. encoding_format base64 decodes (little-endian float32) to the float
   vectors; the same text gives the same vector, different texts different
   ones; a batch gives what single requests give.
3. Embeddings between completions leave the completions unchanged: greedy
   replies, with embeddings sent while they run, equal those of a server
   that embeds nothing.
4. Every malformed field is a 400 naming it (param), and so are inputs too
   long for the context, empty inputs, too many inputs, token ids outside
   the vocabulary and a `dimensions` other than the model's width.
5. hetero embed prints the vectors the server gives.

Usage: serve_embeddings_test.py HETERO_BINARY [PROVIDER] (default cpu)"""
import base64
import functools
import http.client
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import threading

import serve_lib
from serve_lib import check

hetero = sys.argv[1]
provider = sys.argv[2] if len(sys.argv) > 2 else "cpu"
here = os.path.dirname(os.path.abspath(__file__))
model = os.path.join(here, "..", "..", "models", "stories260K.gguf")
CTX = 256
WIDTH = 64  # stories260K's n_embd


Server = functools.partial(serve_lib.Server, hetero, provider, model, ctx=CTX)  # Server(tmp, name, *flags)


def post(port, path, body, raw=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", path, body=raw if raw is not None else json.dumps(body), headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        text = r.read().decode()
        try:
            return r.status, json.loads(text)
        except json.JSONDecodeError:
            return r.status, text
    finally:
        conn.close()


def embed(port, inp, **extra):
    status, body = post(port, "/v1/embeddings", {"model": "stories260K", "input": inp, **extra})
    if status != 200:
        raise RuntimeError(f"HTTP {status}: {body}")
    return body


def vectors(body):
    return [d["embedding"] for d in body["data"]]


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (norm(a) * norm(b))


def close(a, b, tol=1e-5):
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b))


texts = ["Once upon a time", "The cat sat on the mat.", "Lily went to the park with her mom."]

with tempfile.TemporaryDirectory() as tmp:
    srv = Server(tmp, "embed", "--parallel", "2")
    p = srv.port

    # 1. Every input form.
    one = embed(p, texts[0])
    check("a string: one unit vector of the model's width",
          one["object"] == "list" and len(one["data"]) == 1 and one["data"][0]["object"] == "embedding" and one["data"][0]["index"] == 0
          and len(one["data"][0]["embedding"]) == WIDTH and abs(norm(one["data"][0]["embedding"]) - 1) < 1e-5, json.dumps(one)[:300])
    check("the model is named as asked, usage counts the tokens",
          one["model"] == "stories260K" and one["usage"]["prompt_tokens"] == one["usage"]["total_tokens"] > 1, json.dumps(one.get("usage")))
    many = embed(p, texts)
    check("an array of strings: one vector each, indexed in order",
          [d["index"] for d in many["data"]] == [0, 1, 2] and all(abs(norm(v) - 1) < 1e-5 for v in vectors(many)))
    singles = [vectors(embed(p, t))[0] for t in texts]
    check("a batch gives what single requests give", all(close(a, b) for a, b in zip(vectors(many), singles)))
    check("usage of a batch is the sum of the singles' usage",
          many["usage"]["prompt_tokens"] == sum(embed(p, t)["usage"]["prompt_tokens"] for t in texts))
    again = vectors(embed(p, texts[0]))[0]
    check("the same text gives the same vector", close(again, singles[0], 0))
    check("different texts give different vectors", max(cosine(singles[0], singles[1]), cosine(singles[1], singles[2])) < 0.9999,
          f"cosines {cosine(singles[0], singles[1])}, {cosine(singles[1], singles[2])}")
    # Token ids: BOS (1) and ids of the vocabulary; the text that gives the same ids gives the same vector.
    ids = [1, 403, 407, 261, 378]
    by_ids = embed(p, ids)
    check("an array of token ids: one vector, usage = the ids", len(by_ids["data"]) == 1 and by_ids["usage"]["prompt_tokens"] == len(ids))
    by_lists = embed(p, [ids, ids[:3]])
    check("an array of arrays of token ids: one vector each, the first as the single ids give",
          len(by_lists["data"]) == 2 and close(vectors(by_lists)[0], vectors(by_ids)[0]) and not close(vectors(by_lists)[1], vectors(by_ids)[0])
          and by_lists["usage"]["prompt_tokens"] == 8)
    mixed = embed(p, [texts[0], ids])
    check("strings and token ids mixed", close(vectors(mixed)[0], singles[0]) and close(vectors(mixed)[1], vectors(by_ids)[0]))
    long_ok = embed(p, [[1] + [403] * (CTX - 1)])
    check("an input of exactly the context is embedded", long_ok["usage"]["prompt_tokens"] == CTX)

    # 2. base64.
    b64 = embed(p, texts, encoding_format="base64")
    decoded = [list(struct.unpack(f"<{len(base64.b64decode(d['embedding'])) // 4}f", base64.b64decode(d["embedding"]))) for d in b64["data"]]
    check("base64 is the little-endian float32 of the float vectors",
          all(isinstance(d["embedding"], str) for d in b64["data"]) and all(close(a, b, 1e-7) for a, b in zip(decoded, vectors(many))))
    check("encoding_format float and dimensions = the width are accepted",
          close(vectors(embed(p, texts[0], encoding_format="float", dimensions=WIDTH, user="u1"))[0], singles[0]))

    # 3. Embeddings between completions leave the completions as they were.
    prompts = ["Once upon a time, there was a", "The little bird", "Tom and his dog"]
    def complete(prompt):
        status, body = post(p, "/v1/completions", {"model": "m", "prompt": prompt, "max_tokens": 48, "temperature": 0})
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {body}")
        return body["choices"][0]["text"]
    alone = [complete(q) for q in prompts]
    results = {}
    embedded = []
    def run_completion(i):
        results[i] = complete(prompts[i])
    def run_embeddings():
        for k in range(6):
            embedded.append(vectors(embed(p, texts[k % 3]))[0])
    threads = [threading.Thread(target=run_completion, args=(i,)) for i in range(len(prompts))] + [threading.Thread(target=run_embeddings)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("completions with embeddings running beside them give the replies they give alone",
          [results.get(i) for i in range(len(prompts))] == alone, f"{[results.get(i) for i in range(len(prompts))]} vs {alone}")
    check("embeddings beside completions give the vectors they give alone",
          len(embedded) == 6 and all(close(v, singles[k % 3]) for k, v in enumerate(embedded)))
    # The slots' caches were not touched: a completion that extends a cached prompt still gives the same reply.
    check("a completion after the embeddings gives the same reply again", complete(prompts[0]) == alone[0])

    # 4. Malformed requests: 400 naming the field.
    def refused(name, body, param, status=400, raw=None, needle=None):
        st, reply = post(p, "/v1/embeddings", body, raw=raw)
        err = reply.get("error", {}) if isinstance(reply, dict) else {}
        ok = st == status and err.get("param") == param and (needle is None or needle in err.get("message", ""))
        check(f"refused ({status}, param {param}): {name}", ok, f"HTTP {st}: {reply}")
    refused("no input", {"model": "m"}, "input")
    refused("input null", {"model": "m", "input": None}, "input")
    refused("input a number", {"model": "m", "input": 5}, "input")
    refused("input an object", {"model": "m", "input": {"text": "a"}}, "input")
    refused("input an empty array", {"model": "m", "input": []}, "input")
    refused("an empty string", {"model": "m", "input": ""}, "input", needle="empty string")
    refused("an empty string among others, named by index", {"model": "m", "input": ["a", ""]}, "input", needle="'input'[1]")
    refused("an empty array of token ids among others", {"model": "m", "input": [[1, 2], []]}, "input", needle="'input'[1]")
    refused("a negative token id", {"model": "m", "input": [1, -3]}, "input")
    refused("a fractional token id", {"model": "m", "input": [1, 2.5]}, "input")
    refused("a token id outside the vocabulary", {"model": "m", "input": [1, 512]}, "input", needle="vocabulary")
    refused("strings and numbers in one array", {"model": "m", "input": [1, "a"]}, "input")
    refused("a nested array of strings", {"model": "m", "input": [["a"]]}, "input")
    refused("an input longer than the context, named by index", {"model": "m", "input": ["a", [1] * (CTX + 1)]}, "input", needle="'input'[1]")
    refused("a text longer than the context", {"model": "m", "input": "Once upon a time " * 200}, "input", needle="context")
    refused("more than 2048 inputs", {"model": "m", "input": ["a"] * 2049}, "input", needle="2048")
    refused("no model", {"input": "a"}, "model")
    refused("model a number", {"model": 3, "input": "a"}, "model")
    refused("encoding_format other", {"model": "m", "input": "a", "encoding_format": "int8"}, "encoding_format")
    refused("encoding_format a number", {"model": "m", "input": "a", "encoding_format": 1}, "encoding_format")
    refused("dimensions other than the width", {"model": "m", "input": "a", "dimensions": 32}, "dimensions", needle=str(WIDTH))
    refused("dimensions not an integer", {"model": "m", "input": "a", "dimensions": "64"}, "dimensions")
    refused("dimensions zero", {"model": "m", "input": "a", "dimensions": 0}, "dimensions")
    refused("user not a string", {"model": "m", "input": "a", "user": 5}, "user")
    refused("an unknown field", {"model": "m", "input": "a", "pooling": "last"}, "pooling")
    st, reply = post(p, "/v1/embeddings", None, raw="{not json")
    check("a body that is not JSON: 400", st == 400 and "JSON" in reply["error"]["message"], f"{st} {reply}")
    st, reply = post(p, "/v1/embeddings", None, raw="[1, 2]")
    check("a body that is not an object: 400", st == 400, f"{st} {reply}")
    conn = http.client.HTTPConnection("127.0.0.1", p, timeout=30)
    conn.request("GET", "/v1/embeddings")
    r = conn.getresponse()
    check("GET /v1/embeddings: 405, Allow: POST", r.status == 405 and r.getheader("Allow") == "POST")
    r.read()
    conn.close()
    srv.stop()

    # --no-embeddings: the route says it is off.
    off = Server(tmp, "off", "--no-embeddings", "--parallel", "1")
    st, reply = post(off.port, "/v1/embeddings", {"model": "m", "input": "a"})
    check("--no-embeddings: 404 naming the flag", st == 404 and "--no-embeddings" in reply["error"]["message"], f"{st} {reply}")
    off.stop()

    # 5. hetero embed gives the server's vectors.
    out = subprocess.run([hetero, "embed", "-q", "--providers", provider, "-m", model, "-c", str(CTX), *texts], capture_output=True, text=True)
    cli = json.loads(out.stdout) if out.returncode == 0 else {"data": []}
    check("hetero embed prints the server's vectors",
          out.returncode == 0 and cli["dimensions"] == WIDTH and cli["pooling"] == "mean"
          and all(close(d["embedding"], s) for d, s in zip(cli["data"], singles)) and len(cli["data"]) == 3, out.stderr[-500:])
    out = subprocess.run([hetero, "embed", "-q", "--providers", provider, "-m", model, "--pooling", "last", "--no-normalize", texts[0]],
                         capture_output=True, text=True)
    last = json.loads(out.stdout)["data"][0]["embedding"] if out.returncode == 0 else []
    check("hetero embed --pooling last --no-normalize: another vector, not of unit length",
          len(last) == WIDTH and abs(norm(last) - 1) > 1e-3 and cosine(last, singles[0]) < 0.9999, out.stderr[-500:])

sys.exit(serve_lib.exit_status())
