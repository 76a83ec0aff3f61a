#!/usr/bin/env python3
"""Aggregate decode throughput and time to first token of an OpenAI-style
server under C concurrent streaming clients: `hetero serve --parallel C`,
and beside it llama.cpp's `llama-server -np C` on the same GGUF when
LLAMA_SERVER names one (bench/peer_llama_server.sh builds it from the peer).

For each client count C the server is started with C slots; C clients each
send one streamed /v1/completions request at once (a distinct prompt of
about PROMPT_WORDS words, max_tokens TOKENS, greedy), and the script
reports the generated tokens of all of them over the wall time from the
first request to the last reply (aggregate tokens/s), and each client's
time to its first token (median and worst).

usage: serve_parallel.py HETERO MODEL [--clients 1,4,16,64] [--tokens 128]
       [--prompt-words 3] [--ctx 512] [--threads 2] [--llama-threads N]
       [--servers hetero,llama.cpp] [--providers cpu] [--llama-args "-ngl 99"] [--json OUT]
environment: LLAMA_SERVER=path/to/llama-server (optional)"""
import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

def prompt_for(i, words):
    """A distinct prompt per client. gen-model's vocabulary holds a token "tokN" for most N: a prompt of
    such words is about one token a word in hetero's tokenizer and in llama.cpp's."""
    return " ".join(f"tok{(i * 7919 + j * 104729) % 30000 + 300}" for j in range(words))


def wait_for_port(proc, log_path, pattern, timeout=600):
    t0 = time.time()
    while time.time() - t0 < timeout:
        m = re.search(pattern, open(log_path, errors="replace").read())
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            raise RuntimeError("the server exited:\n" + open(log_path, errors="replace").read()[-2000:])
        time.sleep(0.2)
    raise RuntimeError("the server did not start in time")


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_hetero(a, clients, log_path):
    cmd = [a.hetero, "serve", "-m", a.model, "--port", "0", "-q", "-c", str(a.ctx), "--parallel", str(clients),
           "--max-queue", str(max(64, clients)), "--providers", a.providers, "--threads", str(a.threads),
           "--max-client-connections", str(max(32, clients + 8)), "--max-connections", str(max(128, clients + 8))]  # every client is on loopback
    proc = subprocess.Popen(cmd, stderr=open(log_path, "w"), stdout=subprocess.DEVNULL)
    return proc, wait_for_port(proc, log_path, r"on http://\S+:(\d+) ")


def start_llama(a, clients, log_path):
    port = free_port()
    # llama-server divides -c among its slots: give each slot the context hetero's slots get.
    cmd = [os.environ["LLAMA_SERVER"], "-m", a.model, "--port", str(port), "-c", str(a.ctx * clients), "-np", str(clients),
           "-t", str(a.llama_threads or a.threads), "--no-webui", "-b", "512", "-ub", "512", *a.llama_args.split()]
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stderr=log, stdout=log)
    t0 = time.time()
    while time.time() - t0 < 600:
        if proc.poll() is not None:
            raise RuntimeError("llama-server exited:\n" + open(log_path, errors="replace").read()[-2000:])
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return proc, port
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError("llama-server did not start in time")


def one_client(port, i, a, peer, out):
    body = {"model": "m", "prompt": prompt_for(i, a.prompt_words), "max_tokens": a.tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    if peer:
        body["ignore_eos"] = True  # llama.cpp stops at EOS otherwise; random weights may pick it
    t0 = time.time()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        out[i] = {"error": f"HTTP {r.status}: {r.read()[:200]!r}"}
        return
    first, chunks, usage, prompt_tokens = None, 0, None, None
    for line in r:
        line = line.decode(errors="replace").strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        ev = json.loads(line[6:])
        if ev.get("usage"):
            usage = ev["usage"].get("completion_tokens")
            prompt_tokens = ev["usage"].get("prompt_tokens")
        for c in ev.get("choices", []):
            if c.get("text"):
                chunks += 1
                if first is None:
                    first = time.time() - t0
    conn.close()
    out[i] = {"ttft": first, "tokens": usage if usage is not None else chunks, "prompt_tokens": prompt_tokens, "end": time.time()}


def measure(a, clients, peer):
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "server.log")
        proc, port = (start_llama if peer else start_hetero)(a, clients, log)
        try:
            # A warm-up request: the first request's one-off costs are not the steady state.
            warm = {}
            one_client(port, 10_000, argparse.Namespace(**{**vars(a), "tokens": 4}), peer, warm)
            out = [None] * clients
            threads = [threading.Thread(target=one_client, args=(port, i, a, peer, out)) for i in range(clients)]
            t0 = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            errors = [o["error"] for o in out if "error" in o]
            if errors:
                raise RuntimeError(f"{len(errors)} requests failed: {errors[0]}")
            wall = max(o["end"] for o in out) - t0
            tokens = sum(o["tokens"] for o in out)
            ttfts = [o["ttft"] for o in out if o["ttft"] is not None]
            prompts = [o["prompt_tokens"] for o in out if o.get("prompt_tokens")]
            return {"clients": clients, "tokens": tokens, "wall_s": wall, "tok_per_s": tokens / wall,
                    "prompt_tokens_mean": statistics.mean(prompts) if prompts else None,
                    "ttft_median_s": statistics.median(ttfts), "ttft_max_s": max(ttfts)}
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("hetero")
    p.add_argument("model")
    p.add_argument("--clients", default="1,4,16,64")
    p.add_argument("--tokens", type=int, default=128, help="max_tokens of each request")
    p.add_argument("--prompt-words", type=int, default=3, help="tokN words of each prompt (about 11 tokens each)")
    p.add_argument("--ctx", type=int, default=512, help="context of each slot")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--llama-args", default="", help="more llama-server arguments, e.g. '-ngl 99' for a GPU build")
    p.add_argument("--llama-threads", type=int, default=0, help="llama-server's -t (default: --threads)")
    p.add_argument("--servers", default="hetero,llama.cpp", help="which to run (llama.cpp needs LLAMA_SERVER)")
    p.add_argument("--providers", default="cpu")
    p.add_argument("--json", help="write the results here too")
    a = p.parse_args()
    wanted = a.servers.split(",")
    servers = ([("hetero", False)] if "hetero" in wanted else []) + \
        ([("llama.cpp", True)] if "llama.cpp" in wanted and os.environ.get("LLAMA_SERVER") else [])
    results = []
    print(f"{'server':10} {'clients':>7} {'prompt':>7} {'tokens':>7} {'wall s':>8} {'tok/s':>8} {'x1':>6} {'TTFT med s':>11} {'TTFT max s':>11}",
          flush=True)
    for name, peer in servers:
        base = None
        for c in [int(x) for x in a.clients.split(",")]:
            r = measure(a, c, peer)
            r["server"] = name
            base = base or r["tok_per_s"]
            r["speedup"] = r["tok_per_s"] / base
            results.append(r)
            print(f"{name:10} {c:7d} {r['prompt_tokens_mean'] or 0:7.0f} {r['tokens']:7d} {r['wall_s']:8.2f} {r['tok_per_s']:8.1f} {r['speedup']:6.2f} "
                  f"{r['ttft_median_s']:11.3f} {r['ttft_max_s']:11.3f}", flush=True)
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
