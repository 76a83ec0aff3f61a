#!/usr/bin/env python3
"""hetero serve's tool calling over plain HTTP, with the story model served
through tool-calling templates (Qwen 2.5's Hermes format, Llama 3.1's JSON):
tool_choice "required" and a named function hold every reply, streamed or
not, to a well-formed call of a listed tool whose arguments fit its schema
(checked by hand), one call with parallel_tool_calls false; the same seed
gives the same calls streamed and whole; "auto" streams ordinary text
whole; a round trip (assistant tool_calls and the tool's result) renders
through the template and is answered; every malformed field is a 400 naming
it; tools for a template without them are a 400.
Usage: serve_tools_test.py HETERO_BINARY"""
import json
import os
import re
import sys
import tempfile

import serve_lib
from serve_lib import check

hetero = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
templates = os.path.join(here, "..", "chat", "templates")


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "maxLength": 12},
                                  "unit": {"enum": ["c", "f"]},
                                  "days": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}},
                   "required": ["city", "unit"], "additionalProperties": False}}}
TIME = {"type": "function", "function": {
    "name": "get-time", "description": "The time in a zone.",
    "parameters": {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET", "PST"]}, "exact": {"type": "boolean"}},
                   "required": ["zone"], "additionalProperties": False}}}
TOOLS = [WEATHER, TIME]


def valid_arguments(name, args):
    """The tools' parameter schemas, checked by hand."""
    if not isinstance(args, dict):
        return False
    if name == "get_weather":
        if not set(args) >= {"city", "unit"} or not set(args) <= {"city", "unit", "days"}:
            return False
        if not isinstance(args["city"], str) or len(args["city"]) > 12 or args["unit"] not in ("c", "f"):
            return False
        days = args.get("days", [])
        return isinstance(days, list) and len(days) <= 3 and all(isinstance(d, int) and not isinstance(d, bool) for d in days)
    if name == "get-time":
        return set(args) >= {"zone"} and set(args) <= {"zone", "exact"} and args["zone"] in ("UTC", "CET", "PST") and \
            isinstance(args.get("exact", True), bool)
    return False


def call_problems(message, names, one=False):
    """What is wrong with a message's tool_calls ("" when nothing)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return f"no tool_calls: {message}"
    if one and len(calls) != 1:
        return f"{len(calls)} calls where one was asked for"
    for c in calls:
        if not re.fullmatch(r"call_[A-Za-z0-9]{24}", c.get("id", "")) or c.get("type") != "function":
            return f"bad id or type: {c}"
        name, text = c["function"]["name"], c["function"]["arguments"]
        if name not in names:
            return f"{name} is not one of {names}"
        try:
            args = json.loads(text)
        except (TypeError, ValueError):
            return f"arguments are not a JSON string: {text!r}"
        if not valid_arguments(name, args):
            return f"{name} arguments break its schema: {text}"
    if len({c["id"] for c in calls}) != len(calls):
        return "ids repeat"
    return ""


def post(port, body, stream=False):
    status, raw = serve_lib.post_chat(port, body, stream)
    if not stream or status != 200:
        return status, serve_lib.parse_body(raw)
    # Put the stream back together as OpenAI clients do: content appended, tool calls by index.
    content, calls, finish, order_ok = None, {}, None, True
    for line in raw.split("\n"):
        if not line.startswith("data: ") or line[6:].strip() == "[DONE]":
            continue
        for ch in json.loads(line[6:]).get("choices", []):
            delta = ch.get("delta", {})
            if delta.get("content"):
                content = (content or "") + delta["content"]
            for tc in delta.get("tool_calls", []):
                i = tc["index"]
                if i not in calls:  # the first delta of a call carries its id, type and name
                    order_ok &= "id" in tc and tc.get("type") == "function" and "name" in tc.get("function", {})
                    calls[i] = {"id": tc.get("id"), "type": tc.get("type"), "function": {"name": tc["function"].get("name"), "arguments": ""}}
                calls[i]["function"]["arguments"] += tc.get("function", {}).get("arguments", "")
            finish = ch.get("finish_reason") or finish
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    if not order_ok:
        message["stream_order"] = "a call's first delta lacked its id, type or name"
    return status, {"choices": [{"message": message, "finish_reason": finish}]}


def chat(content="What is the weather in Bern?", **extra):
    return {"model": "m", "messages": [{"role": "user", "content": content}], "max_tokens": 300, **extra}


class Server:
    def __init__(self, tmp, name, *args):
        self.log_path = os.path.join(tmp, name + ".log")
        self.proc, _, self.port = serve_lib.start_server(
            [hetero, "serve", "--providers", "cpu", "--port", "0", "-q", "-c", "2048", *args], self.log_path, what=f"the server {name}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)


def error_of(body):
    return body.get("error", {}) if isinstance(body, dict) else {}


with tempfile.TemporaryDirectory() as tmp:
    qwen = Server(tmp, "qwen", "--chat-template", os.path.join(templates, "qwen2_5_tools.jinja"))
    llama = Server(tmp, "llama", "--chat-template", os.path.join(templates, "llama3_1_tools.jinja"))
    plain = Server(tmp, "plain")  # the story model's own way: ChatML, no tools
    try:
        names = ["get_weather", "get-time"]
        # ---- required: every reply is a call of a listed tool with valid arguments ----
        bad, seen, most = [], set(), 0
        for seed in range(8):
            parallel = seed % 4 != 3
            st, body = post(qwen.port, chat(tools=TOOLS, tool_choice="required", temperature=1.0, seed=seed, parallel_tool_calls=parallel),
                            stream=seed % 2 == 1)
            choice = body["choices"][0] if st == 200 else {}
            msg = choice.get("message", {})
            # The story model may go on calling until max_tokens: then finish_reason says length, and the calls before are whole.
            problem = f"{st} {body}" if st != 200 else call_problems(msg, names, one=not parallel) or \
                ("" if choice.get("finish_reason") in ("tool_calls", "length" if parallel else None) else f"finish_reason {choice.get('finish_reason')}") or \
                ("" if msg.get("content") is None else f"content {msg.get('content')!r}") or msg.get("stream_order", "")
            if problem:
                bad.append(f"seed {seed}: {problem}")
            else:
                seen |= {c["function"]["name"] for c in msg["tool_calls"]}
                most = max(most, len(msg["tool_calls"]))
        check("required (Hermes format): 8 replies (4 streamed, 2 with parallel_tool_calls false) are calls of listed tools, "
              "arguments fitting their schemas, content null, finish_reason tool_calls (or length, parallel)", not bad, "; ".join(bad))
        check(f"parallel calls happen where allowed (at most {most} in one reply)", most > 1)
        print(f"     tools called: {sorted(seen)}")

        # The same seed, streamed and whole: the same calls (the stream holds nothing back wrongly).
        req = chat(tools=TOOLS, tool_choice="required", temperature=1.0, seed=42, parallel_tool_calls=False)
        _, whole = post(qwen.port, req)
        _, streamed = post(qwen.port, req, stream=True)
        strip = lambda b: [(c["function"]["name"], c["function"]["arguments"]) for c in b["choices"][0]["message"].get("tool_calls", [])]
        check("required: the same seed streamed and whole gives the same call", strip(whole) and strip(whole) == strip(streamed),
              f"{strip(whole)} vs {strip(streamed)}")
        print(f"     e.g. {strip(whole)}")

        # ---- a named function ----
        bad = []
        for seed in range(4):
            st, body = post(qwen.port, chat(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get-time"}},
                                            temperature=1.0, seed=seed), stream=seed % 2 == 1)
            problem = f"{st} {body}" if st != 200 else call_problems(body["choices"][0]["message"], ["get-time"])
            if problem:
                bad.append(f"seed {seed}: {problem}")
        check("tool_choice naming get-time: 4 replies (2 streamed) call only it, with valid arguments", not bad, "; ".join(bad))

        # ---- the Llama 3.1 format ----
        bad = []
        for seed in range(4):
            st, body = post(llama.port, chat(tools=TOOLS, tool_choice="required", temperature=1.0, seed=seed), stream=seed % 2 == 1)
            choice = body["choices"][0] if st == 200 else {}
            problem = f"{st} {body}" if st != 200 else call_problems(choice["message"], names, one=True) or \
                ("" if choice.get("finish_reason") == "tool_calls" else f"finish_reason {choice.get('finish_reason')}")
            if problem:
                bad.append(f"seed {seed}: {problem}")
        check("required (Llama 3.1 format): 4 replies (2 streamed) are one valid call each", not bad, "; ".join(bad))

        # ---- auto and none: the story model answers in words, which stay content ----
        for port, family in ((qwen.port, "Hermes"), (llama.port, "Llama 3.1")):
            req = chat("Once upon a time", tools=TOOLS, tool_choice="auto", temperature=0, max_tokens=40)
            st, whole = post(port, req)
            st2, streamed = post(port, req, stream=True)
            w, s = whole["choices"][0], streamed["choices"][0]
            check(f"auto ({family}): words are content, streamed and whole the same, no tool_calls",
                  st == st2 == 200 and w["message"]["content"] and w["message"]["content"] == s["message"]["content"] and
                  "tool_calls" not in w["message"] and "tool_calls" not in s["message"] and w["finish_reason"] in ("stop", "length"),
                  f"{whole} // {streamed}")
        st, body = post(qwen.port, chat(tools=TOOLS, tool_choice="none", max_tokens=20, temperature=0))
        check("tool_choice none: plain content", st == 200 and "tool_calls" not in body["choices"][0]["message"] and
              body["choices"][0]["finish_reason"] in ("stop", "length"), str(body)[:300])

        # ---- a round trip: the call and its result go back through the template ----
        st, first = post(qwen.port, chat(tools=TOOLS, tool_choice="required", parallel_tool_calls=False, seed=7))
        call = first["choices"][0]["message"]["tool_calls"][0]
        history = [{"role": "user", "content": "What is the weather in Bern?"},
                   {"role": "assistant", "content": None, "tool_calls": [call]},
                   {"role": "tool", "tool_call_id": call["id"], "content": '{"temperature": 21, "sky": "clear"}'}]
        st, answer = post(qwen.port, {"model": "m", "messages": history, "tools": TOOLS, "max_tokens": 16, "temperature": 0})
        st_short, short = post(qwen.port, {"model": "m", "messages": history[:1], "tools": TOOLS, "max_tokens": 16, "temperature": 0})
        grown = st == st_short == 200 and answer["usage"]["prompt_tokens"] > short["usage"]["prompt_tokens"] + 20
        check("round trip: assistant tool_calls + the tool's result render and are answered",
              st == 200 and answer["choices"][0]["message"].get("content") and grown, f"{st} {str(answer)[:300]} / {str(short)[:200]}")
        st, body = post(llama.port, {"model": "m", "tools": TOOLS, "max_tokens": 4, "messages": [
            history[0], {"role": "assistant", "content": None, "tool_calls": [call, {**call, "id": "call_other"}]},
            {"role": "tool", "tool_call_id": call["id"], "content": "21"}]})
        check("two calls in one turn reach the Llama 3.1 template, which refuses them: 400 chat_template_error",
              st == 400 and error_of(body).get("code") == "chat_template_error" and "single tool-call" in error_of(body).get("message", ""),
              f"{st} {body}")

        # ---- malformed fields: 400 naming each ----
        msgs_with = lambda *extra: [{"role": "user", "content": "hi"}, *extra]
        good_call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Bern", "unit": "c"}'}}
        cases = [
            (chat(tools={"type": "function"}), "tools"),
            (chat(tools=["get_weather"]), "tools[0]"),
            (chat(tools=[{"type": "retrieval", "function": WEATHER["function"]}]), "tools[0].type"),
            (chat(tools=[{"type": "function"}]), "tools[0].function"),
            (chat(tools=[{"type": "function", "function": {"name": "get weather"}}]), "tools[0].function.name"),
            (chat(tools=[{"type": "function", "function": {"name": "x" * 65}}]), "tools[0].function.name"),
            (chat(tools=[{"type": "function", "function": {"description": "no name"}}]), "tools[0].function.name"),
            (chat(tools=[WEATHER, WEATHER]), "tools[1].function.name"),
            (chat(tools=[{"type": "function", "function": {"name": "f", "parameters": "{}"}}]), "tools[0].function.parameters"),
            (chat(tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "string"}}}]), "tools[0].function.parameters"),
            (chat(tools=[{"type": "function", "function": {"name": "f", "description": 3}}]), "tools[0].function.description"),
            (chat(tools=TOOLS, tool_choice="sometimes"), "tool_choice"),
            (chat(tools=TOOLS, tool_choice={"type": "function"}), "tool_choice"),
            (chat(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_time"}}), "tool_choice.function.name"),
            (chat(tool_choice="required"), "tool_choice"),
            (chat(tools=TOOLS, parallel_tool_calls="yes"), "parallel_tool_calls"),
            (chat(tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}}],
                  tool_choice="required"), "tools"),
            (chat(tools=TOOLS, tool_choice="required", response_format={"type": "json_object"}), "tool_choice"),
            ({**chat(), "messages": [{"role": "user", "content": "hi", "tool_calls": [good_call]}]}, "messages[0].tool_calls"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": []})}, "messages[1].tool_calls"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [{**good_call, "id": None}]})}, "messages[1].tool_calls[0].id"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [{**good_call, "type": "code"}]})}, "messages[1].tool_calls[0].type"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]})},
             "messages[1].tool_calls[0].function.name"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}]})},
             "messages[1].tool_calls[0].function.arguments"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]})},
             "messages[1].tool_calls[0].function.arguments"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [good_call, good_call]})}, "messages[1].tool_calls[1].id"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [good_call]}), "tools": TOOLS} |
             {"messages": msgs_with({"role": "assistant", "tool_calls": [good_call]}, {"role": "tool", "content": "21"})}, "messages[2].tool_call_id"),
            ({**chat(), "messages": msgs_with({"role": "assistant", "tool_calls": [good_call]}, {"role": "tool", "tool_call_id": "call_9", "content": "21"})},
             "messages[2].tool_call_id"),
            ({**chat(), "messages": msgs_with({"role": "user", "content": "x", "tool_call_id": "call_1"})}, "messages[1].tool_call_id"),
            (chat(functions=[{"name": "f"}]), "functions"),
        ]
        for payload, param in cases:
            st, body = post(qwen.port, payload)
            err = error_of(body)
            shown = {k: v for k, v in payload.items() if k not in ("model", "max_tokens")}
            check(f"400 naming {param}: {json.dumps(shown)[:90]}", st == 400 and err.get("param") == param and err.get("message"),
                  f"{st} {body}")
        st, body = post(qwen.port, cases[16][0])
        check("a schema keyword a required call cannot enforce is named with its tool", "tools[0]" in error_of(body).get("message", "") and
              "minimum" in error_of(body).get("message", ""), str(body))

        # ---- a template without tools ----
        for payload, param, what in ((chat(tools=TOOLS), "tools", "tools"),
                                     (chat(tools=TOOLS, tool_choice="none"), "tools", "tools with tool_choice none"),
                                     ({**chat(), "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [good_call]},
                                                              {"role": "tool", "tool_call_id": "call_1", "content": "21"}]}, "messages", "tool turns")):
            st, body = post(plain.port, payload)
            err = error_of(body)
            check(f"{what} for a template that takes none (ChatML): 400 saying so", st == 400 and err.get("param") == param and
                  err.get("code") == "tools_not_supported" and "takes no tools" in err.get("message", ""), f"{st} {body}")
        st, body = post(plain.port, chat(max_tokens=4, tools=[]))
        check("an empty tools list is no tools: answered", st == 200, f"{st} {body}")
    finally:
        for s in (qwen, llama, plain):
            s.stop()

sys.exit(serve_lib.exit_status())
