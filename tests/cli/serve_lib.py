"""What the serve tests share: their ok/FAIL report, starting `hetero serve`
until it prints its address, and reading a reply's body."""

import http.client
import json
import re
import subprocess
import sys
import time

failed = False


def check(name, ok, detail=""):
    """Prints one result line; a failure makes exit_status() 1."""
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok or not detail else f"\n     {detail}"), flush=True)
    failed |= not ok


def exit_status():
    return 1 if failed else 0


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
