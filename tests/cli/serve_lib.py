"""What the CLI tests share: their ok/FAIL report and running a command;
for the serve tests also starting `hetero serve` until it prints its
address, and reading a reply's body."""

import http.client
import json
import os
import re
import subprocess
import sys
import time

failures = []


def fail(msg):
    """Prints a FAIL line; it makes exit_status() 1."""
    failures.append(msg)
    print("FAIL " + msg, flush=True)


def ok(msg):
    print("ok   " + msg, flush=True)


def check(name, passed, detail=""):
    """ok or FAIL for name; a failure shows detail on a line of its own."""
    if passed:
        ok(name)
    else:
        fail(name + (f"\n     {detail}" if detail else ""))


def exit_status():
    return 1 if failures else 0


def run(cmd, timeout):
    """cmd's completed process, its output as text (undecodable bytes replaced)."""
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)


def read_log(path):
    with open(path) as f:
        return f.read()


def start_server(argv, log, tries=600, env=None, what="the server"):
    """Starts argv (a `hetero serve ... --port 0` line) with its stderr into
    log (a path or an open file) and waits, `tries` tenths of a second at
    most, for its "on http://host:port " line. Returns (process, url, port);
    exits the test with the log if the server stops or never says it."""
    if isinstance(log, str):
        with open(log, "w") as f:
            proc = subprocess.Popen(argv, stderr=f, env=env)
        log_path = log
    else:
        proc = subprocess.Popen(argv, stderr=log, env=env)
        log_path = log.name
    for _ in range(tries):
        m = re.search(r"on (http://\S+:(\d+)) ", read_log(log_path))
        if m:
            return proc, m.group(1), int(m.group(2))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    print(f"{what} did not start:\n" + read_log(log_path))
    sys.exit(1)


def peer_dir_arg(tool, hint=""):
    """argv[2], the llama.cpp peer's folder, when it holds the program
    cpu/TOOL; else "" with a note (and `hint`) that the comparisons with
    llama.cpp are skipped."""
    peer_dir = sys.argv[2] if len(sys.argv) > 2 else ""
    if peer_dir and not os.access(os.path.join(peer_dir, "cpu", tool), os.X_OK):
        print(f"note: no llama.cpp peer in {peer_dir}{hint}: the comparisons with llama.cpp are skipped")
        return ""
    return peer_dir


class Server:
    """`hetero serve` of model on provider, on any free port, quiet, with a
    context of ctx and more flags; its log in tmp/NAME.log."""

    def __init__(self, hetero, provider, model, tmp, name, *flags, ctx):
        self.log = os.path.join(tmp, name + ".log")
        self.proc, _, self.port = start_server(
            [hetero, "serve", "--providers", provider, "--port", "0", "-q", "-m", model, "-c", str(ctx), *flags], self.log, tries=1200,
            what=f"the server ({' '.join(flags)})")

    def stop(self):
        stop_server(self.proc)


def parse_metrics(text):
    """{"name{labels}": value} of a /metrics scrape (Prometheus' text format)."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def stop_server(proc):
    """SIGINT, then a kill if the server has not stopped within 30 s."""
    proc.send_signal(2)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def parse_body(raw):
    """A reply's body (bytes or text) as JSON where it parses, else as text."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace") if isinstance(raw, bytes) else raw


def post_chat(port, body, stream=False):
    """POSTs body to /v1/chat/completions, streamed when asked: (status, the
    body's text)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    if stream:
        body = {**body, "stream": True}
    c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    raw = r.read().decode(errors="replace")
    c.close()
    return r.status, raw
