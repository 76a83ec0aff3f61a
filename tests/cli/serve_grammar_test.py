#!/usr/bin/env python3
"""hetero serve's `grammar` field (GBNF): replies of the shipped story model
on /v1/completions and /v1/chat/completions match the grammar (checked with
Python's re for regular grammars and a small parser for arithmetic), streamed
equals whole for a fixed seed, and bad grammars or grammars beside another
constraint get 400 naming 'grammar' with the line and column.
Usage: serve_grammar_test.py HETERO_BINARY"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import serve_lib
from serve_lib import check

hetero = sys.argv[1]


def post(port, path, body, stream=False):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    if stream:
        body = {**body, "stream": True}
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    raw = r.read().decode(errors="replace")
    c.close()
    if not stream or r.status != 200:
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, raw
    text, finish = "", None
    for line in raw.split("\n"):
        if line.startswith("data: ") and line[6:].strip() != "[DONE]":
            ev = json.loads(line[6:])
            for ch in ev.get("choices", []):
                text += (ch.get("delta", {}).get("content") if "delta" in ch else ch.get("text")) or ""
                finish = ch.get("finish_reason") or finish
    return r.status, {"text": text, "finish": finish}


def reply(path, st, body):
    if st != 200:
        return None, None
    if "text" in body and "choices" not in body:
        return body["text"], body["finish"]
    ch = body["choices"][0]
    return (ch["message"]["content"] if "message" in ch else ch["text"]), ch["finish_reason"]


def arithmetic(s):
    """expr ::= term (("+"|"-") term)*, term ::= factor (("*"|"/") factor)*, factor ::= [0-9]+ | "(" expr ")"."""
    i = 0

    def factor():
        nonlocal i
        if i < len(s) and s[i] == "(":
            i += 1
            if not expr() or i >= len(s) or s[i] != ")":
                return False
            i += 1
            return True
        start = i
        while i < len(s) and s[i].isdigit():
            i += 1
        return i > start

    def chain(item, ops):
        nonlocal i
        if not item():
            return False
        while i < len(s) and s[i] in ops:
            i += 1
            if not item():
                return False
        return True

    def term():
        return chain(factor, "*/")

    def expr():
        return chain(term, "+-")

    return expr() and i == len(s)


GRAMMARS = [
    ("words", 'root ::= ("yes" | "no" | "maybe") (", " ("yes" | "no" | "maybe")){0,3} "."\n',
     lambda t: re.fullmatch(r"(yes|no|maybe)(, (yes|no|maybe)){0,3}\.", t)),
    ("csv line", 'root ::= field ("," field){2} "\\n"\nfield ::= [a-z]{1,6} | [0-9]{1,4}\n',
     lambda t: re.fullmatch(r"([a-z]{1,6}|[0-9]{1,4})(,([a-z]{1,6}|[0-9]{1,4})){2}\n", t)),
    ("sentence", 'root ::= "Tim " [a-z ,]{0,40} "."\n', lambda t: re.fullmatch(r"Tim [a-z ,]{0,40}\.", t)),
    ("arithmetic", 'root ::= expr\nexpr ::= term (("+" | "-") term)*\nterm ::= factor (("*" | "/") factor)*\n'
                   'factor ::= [0-9]{1,3} | "(" expr ")"\n', arithmetic),
]

with tempfile.TemporaryDirectory() as tmp:
    log_path = os.path.join(tmp, "server.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([hetero, "serve", "--providers", "cpu", "--port", "0", "-q", "-c", "2048"], stderr=log)
    port = None
    for _ in range(600):
        m = re.search(r"on http://\S+:(\d+) ", open(log_path).read())
        if m:
            port = int(m.group(1))
            break
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    if port is None:
        print("the server did not start:\n" + open(log_path).read())
        sys.exit(1)
    try:
        for name, grammar, matches in GRAMMARS:
            bad, stopped, example = [], 0, None
            for seed in range(8):
                chat = seed % 2 == 0
                path = "/v1/chat/completions" if chat else "/v1/completions"
                body = {"model": "m", "max_tokens": 200, "temperature": 0 if seed == 0 else 1.2, "seed": seed, "grammar": grammar}
                body.update({"messages": [{"role": "user", "content": "Once upon a time"}]} if chat else {"prompt": "Once upon a time"})
                st, out = post(port, path, body, stream=seed % 4 >= 2)
                text, finish = reply(path, st, out)
                if text is None:
                    bad.append(f"seed {seed}: {st} {str(out)[:200]}")
                elif finish == "stop":
                    stopped += 1
                    example = example or text
                    if not matches(text):
                        bad.append(f"seed {seed} ({path}): {text!r} does not match")
                # A reply cut by max_tokens must still be a prefix the grammar allows: no check by re here.
            check(f"grammar '{name}': 8 replies (chat and completions, 4 streamed); {stopped} stopped and match",
                  not bad and stopped >= 4, "; ".join(bad) + f" (stopped {stopped})")
            if example:
                print(f"     e.g. {example!r}")

        # Streamed equals whole for a fixed seed.
        for path, extra in (("/v1/completions", {"prompt": "Once upon a time"}),
                            ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}]})):
            body = {"model": "m", "max_tokens": 120, "temperature": 1.0, "seed": 42, "grammar": GRAMMARS[2][1], **extra}
            st1, whole = post(port, path, body)
            st2, streamed = post(port, path, body, stream=True)
            a, b = reply(path, st1, whole)[0], reply(path, st2, streamed)[0]
            check(f"{path}: streamed equals whole for seed 42", st1 == st2 == 200 and a == b and a, f"{a!r} vs {b!r}")

        # Refusals: 400 naming 'grammar', with the line and column.
        for grammar, expect in (("root ::= item\n", "line 1, column 10: undefined rule 'item'"),
                                ("rule ::= \"a\"\n", "no 'root' rule"),
                                ("root ::= \"abc\n", "line 1, column 10: unterminated literal"),
                                ("root ::= x\nx ::= [z-a]\n", "line 2, column 8: bad range"),
                                ("root ::= e\ne ::= e \"+\" \"1\" | \"1\"\n", "line 2, column 1: rule 'e' is left-recursive"),
                                (7, "must be a string")):
            for path, extra in (("/v1/completions", {"prompt": "x"}), ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]})):
                st, body = post(port, path, {"model": "m", "grammar": grammar, **extra})
                err = body.get("error", {}) if isinstance(body, dict) else {}
                check(f"{path} grammar {grammar!r}: 400 ({expect})",
                      st == 400 and err.get("param") == "grammar" and expect in err.get("message", ""), f"{st} {body}")
        msgs = {"messages": [{"role": "user", "content": "x"}]}
        fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "string"}}}
        st, body = post(port, "/v1/chat/completions", {"model": "m", "grammar": 'root ::= "a"', "response_format": fmt, **msgs})
        check("grammar with response_format json_schema: 400", st == 400 and "one of them" in str(body), f"{st} {body}")
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
        st, body = post(port, "/v1/chat/completions", {"model": "m", "grammar": 'root ::= "a"', "tools": tools, "tool_choice": "required", **msgs})
        check("grammar with a required tool call: 400", st == 400 and "one of them" in str(body), f"{st} {body}")
        st, body = post(port, "/v1/chat/completions", {"model": "m", "grammar": 'root ::= "a"', "response_format": {"type": "text"},
                                                       "max_tokens": 8, **msgs})
        check("grammar with response_format text: held to the grammar", st == 200 and body["choices"][0]["message"]["content"] == "a",
              f"{st} {body}")
    finally:
        proc.terminate()
        proc.wait(timeout=20)

sys.exit(serve_lib.exit_status())
