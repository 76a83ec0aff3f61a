#!/usr/bin/env python3
"""hetero serve's structured output, over plain HTTP: response_format
json_object and json_schema hold every reply, streamed or not, at
temperature 0 and at 1.2 with many seeds, to JSON that parses and fits the
schema, even from a model that has never seen JSON (the shipped story
model); malformed formats and schemas with keywords that are not enforced
get 400 naming response_format and the keyword's path.
Usage: serve_structured_test.py HETERO_BINARY"""
import json
import os
import sys
import tempfile

import serve_lib
from serve_lib import check

hetero = sys.argv[1]


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer"},
        "mood": {"enum": ["happy", "sad", "sleepy"]},
        "friends": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
        "pet": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/pet"}]},
    },
    "required": ["name", "age", "mood", "friends", "pet"],
    "additionalProperties": False,
    "$defs": {"pet": {"type": "object", "properties": {"kind": {"enum": ["cat", "dog"]}, "legs": {"type": "integer"}},
                      "required": ["kind"], "additionalProperties": False}},
}


def fits(v):
    """The schema above, checked by hand."""
    if not isinstance(v, dict) or set(v) != {"name", "age", "mood", "friends", "pet"}:
        return False
    if not isinstance(v["name"], str) or len(v["name"]) > 12:
        return False
    if not isinstance(v["age"], int) or isinstance(v["age"], bool):
        return False
    if v["mood"] not in ("happy", "sad", "sleepy"):
        return False
    if not isinstance(v["friends"], list) or len(v["friends"]) > 3 or not all(isinstance(f, str) and len(f) <= 8 for f in v["friends"]):
        return False
    pet = v["pet"]
    if pet is None:
        return True
    return isinstance(pet, dict) and pet.get("kind") in ("cat", "dog") and set(pet) <= {"kind", "legs"} and \
        (not "legs" in pet or (isinstance(pet["legs"], int) and not isinstance(pet["legs"], bool)))


def post(port, body, stream=False):
    status, raw = serve_lib.post_chat(port, body, stream)
    if not stream or status != 200:
        return status, serve_lib.parse_body(raw)
    text, finish = "", None
    for line in raw.split("\n"):
        if line.startswith("data: ") and line[6:].strip() != "[DONE]":
            ev = json.loads(line[6:])
            for ch in ev.get("choices", []):
                text += ch.get("delta", {}).get("content") or ""
                finish = ch.get("finish_reason") or finish
    return status, {"choices": [{"message": {"content": text}, "finish_reason": finish}]}


def chat(content, fmt, **extra):
    return {"model": "m", "messages": [{"role": "user", "content": content}], "max_tokens": 1000, "response_format": fmt, **extra}


with tempfile.TemporaryDirectory() as tmp:
    log_path = os.path.join(tmp, "server.log")
    proc, _, port = serve_lib.start_server([hetero, "serve", "--providers", "cpu", "--port", "0", "-q", "-c", "2048"], log_path)
    try:
        # Any JSON object: its strings have no bound, so a reply may run to max_tokens; one that stops must parse.
        bad, stopped = [], 0
        for seed in range(6):
            st, body = post(port, chat("Tell me about a cat", {"type": "json_object"}, temperature=1.2, seed=seed), stream=seed % 2 == 1)
            text = body["choices"][0]["message"]["content"] if st == 200 else ""
            finish = body["choices"][0]["finish_reason"] if st == 200 else None
            try:
                ok = st == 200 and (finish == "length" and text.lstrip().startswith("{") or isinstance(json.loads(text), dict))
                stopped += finish == "stop"
            except ValueError:
                ok = False
            if not ok:
                bad.append(f"seed {seed}: {st} {finish} {text[:200]!r}")
        # (A story model seldom closes a free string; the schema below bounds every string, so those replies must end.)
        check(f"json_object: six replies (three streamed); the {stopped} that stopped are JSON objects, the rest open one",
              not bad, "; ".join(bad))

        # A schema with enums, an array, a bounded string and a $ref inside anyOf.
        fmt = {"type": "json_schema", "json_schema": {"name": "person", "strict": True, "schema": SCHEMA}}
        bad, kept = [], []
        for seed in range(12):
            temp = 0 if seed == 0 else 1.2
            st, body = post(port, chat("Describe a person", fmt, temperature=temp, seed=seed), stream=seed % 3 == 2)
            text = body["choices"][0]["message"]["content"] if st == 200 else str(body)
            try:
                v = json.loads(text)
                ok = st == 200 and fits(v)
            except ValueError:
                ok = False
            (kept if ok else bad).append(f"seed {seed}: {text[:160]!r}")
        check(f"json_schema: 12 replies (4 streamed; temperature 0 and 1.2) parse and fit the schema", not bad, "; ".join(bad))
        print("     e.g. " + kept[0] if kept else "")

        # Refusals name the parameter and the path.
        for fmt, expect in (({"type": "xml"}, "not one of text"),
                            ({"type": "json_schema"}, "needs \"json_schema\""),
                            ({"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "string", "pattern": "^a"}}}, "pattern"),
                            ({"type": "json_schema", "json_schema": {"name": "x", "schema": {"properties": {"a": {"minimum": 1}}}}},
                             "properties.a.minimum"),
                            ({"type": "json_schema", "json_schema": {"schema": {}}}, "name")):
            st, body = post(port, chat("Hi", fmt))
            err = body.get("error", {}) if isinstance(body, dict) else {}
            check(f"response_format {json.dumps(fmt)[:70]}: 400 naming response_format ({expect})",
                  st == 400 and err.get("param") == "response_format" and expect in err.get("message", ""), f"{st} {body}")
        st, body = post(port, chat("Hi", {"type": "text"}, max_tokens=8))
        check("response_format text: an ordinary reply", st == 200 and body["choices"][0]["message"]["content"] != "", str(body)[:200])
    finally:
        proc.terminate()
        proc.wait(timeout=20)

sys.exit(serve_lib.exit_status())
