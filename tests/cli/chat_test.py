#!/usr/bin/env python3
"""hetero chat driven through stdin, as a script would: deterministic replies
with greedy sampling, the KV cache kept between turns (the second reply equals
what a fresh `hetero run` of the whole conversation gives), /reset, /exit,
template errors and templates past their budgets (an error line, the chat
goes on, exit status 1), and Ctrl-C stopping a reply or a template's rendering
without ending the chat.
Usage: chat_test.py HETERO_BINARY"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import serve_lib
from serve_lib import check

hetero = sys.argv[1]


def finish(proc, stdin):
    """Writes stdin to a running chat and waits for it to end (a minute at
    most, then kills it): its (stdout, stderr) bytes."""
    proc.stdin.write(stdin)
    proc.stdin.flush()
    try:
        return proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def chat(stdin, *args):
    p = subprocess.run([hetero, "chat", "--providers", "cpu", "--temp", "0", *args], input=stdin.encode(),
                       capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def chatml(messages):
    return "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in messages) + "<|im_start|>assistant\n"


N = "40"
rc, two, two_err = chat("Hello there\nTell me a story about a cat\n/reset\nHello there\n", "-n", N, "--stats", "-q")
check("two turns and /reset: exit 0", rc == 0, two_err)
check("a model without a template gets the ChatML notice", "has no chat template" in two_err and "using ChatML" in two_err, two_err)
rc, one, err = chat("Hello there\n", "-n", N, "-q")
check("one turn: exit 0", rc == 0, err)
reply1 = one[:-1] if one.endswith("\n") else one
check("the reply is not empty", len(reply1.strip()) > 0, repr(one))
check("the first turn is deterministic", two.startswith(one), f"{two!r} vs {one!r}")
check("after /reset the same question gets the first reply again", two.endswith(one), f"{two!r} vs {one!r}")
reply2 = two[len(one):len(two) - len(one)]
reply2 = reply2[:-1] if reply2.endswith("\n") else reply2
err = two_err
stats = re.findall(r"\[prompt (\d+) tokens: (\d+) reused, (\d+) evaluated", err)
check("--stats printed per turn", len(stats) == 3, err)
if len(stats) == 3:
    p1, r1, _ = map(int, stats[0])
    p2, r2, e2 = map(int, stats[1])
    check(f"turn 2 reuses the cached turn 1 ({r2} of {p2} tokens reused, {e2} evaluated)", r2 > p1 and e2 < p2 - p1, err)
    check("after /reset nothing is reused", int(stats[2][1]) == 0, err)

# The whole conversation evaluated from scratch by `hetero run` continues with the same reply.
prompt = chatml([("user", "Hello there"), ("assistant", reply1), ("user", "Tell me a story about a cat")])
p = subprocess.run([hetero, "run", "--providers", "cpu", "--temp", "0", "-n", N, "-q", "-p", prompt], capture_output=True, timeout=60)
run_out = p.stdout.decode(errors="replace")
check("second reply = a fresh run of the whole conversation", p.returncode == 0 and run_out.endswith(reply2 + "\n") and reply2.strip() != "",
      f"chat: {reply2!r}\n     run:  {run_out[-len(reply2) - 20:]!r}")

rc, out, err = chat("Hello there\n/exit\nHello there\n", "-n", N, "-q")
check("/exit quits", rc == 0 and out == one, repr(out))

rc, with_system, err = chat("Hello there\n", "-n", N, "-q", "--system", "You are a pirate.")
check("--system opens the conversation (it changes the prompt and so the reply)", rc == 0 and with_system != one, repr(with_system))

rc, out, err = chat("Hello there\nand more\n", "-c", "64", "-n", "0", "-q")
check("a full context ends the reply with a message, the next turn is refused with one (exit 1: a turn failed)",
      rc == 1 and "context of 64 tokens is full" in err and "but the context holds 64" in err and "1 turn failed" in err, err)

with tempfile.TemporaryDirectory() as tmp:
    strict = os.path.join(tmp, "strict.jinja")
    with open(strict, "w") as f:
        f.write("{% if messages | length > 1 %}{{ raise_exception('only one message, please') }}{% endif %}"
                "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n")
    rc, out, err = chat("Hello there\nagain\n", "-n", "8", "-q", "--chat-template", strict)
    check("raise_exception is reported, the chat goes on, exit 1 (a turn failed)",
          rc == 1 and "only one message, please" in err and out.count("\n") == 1 and "1 turn failed" in err,
          f"rc={rc} out={out!r} err={err!r}")

    # A template past its budgets: an error line per turn, the chat goes on.
    # The loop ends on its step budget or its time budget, whichever a
    # machine reaches first (a loaded one reaches time first).
    hostile = os.path.join(tmp, "hostile.jinja")
    with open(hostile, "w") as f:
        f.write("{% if messages[-1].content == 'LOOP' %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
                "{% elif messages[-1].content == 'HUGE' %}{% set ns = namespace(s='xxxxxxxx') %}"
                "{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}{% endif %}"
                "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n")
    rc, out, err = chat("LOOP\nHUGE\nHello there\n", "-n", "8", "-q", "--chat-template", hostile)
    check("a template that loops or builds a huge string: two error lines, the third turn answered, exit 1",
          rc == 1 and err.count("error: the chat template failed") == 2 and ("time budget" in err or "step budget" in err) and "size budget" in err
          and out.count("\n") == 1 and "2 turns failed" in err, f"rc={rc} out={out!r} err={err!r}")
    # Ctrl-C while the template renders stops it at once (its budget is 2 s); the chat goes on.
    proc = subprocess.Popen([hetero, "chat", "--providers", "cpu", "--temp", "0", "-n", "8", "-q", "--chat-template", hostile],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3.0)  # the model loads
    proc.stdin.write(b"LOOP\n")
    proc.stdin.flush()
    time.sleep(0.3)
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    os.set_blocking(proc.stderr.fileno(), False)
    seen = b""
    while b"(stopped)" not in seen and b"error" not in seen and time.time() - t0 < 5:
        time.sleep(0.02)
        seen += proc.stderr.read() or b""
    stopped_after = time.time() - t0
    os.set_blocking(proc.stderr.fileno(), True)
    out, err = finish(proc, b"Hello there\n/exit\n")
    err = seen.decode(errors="replace") + err.decode(errors="replace")
    check(f"Ctrl-C while the template renders: stopped in {stopped_after:.2f} s (< 1 s), not failed; the chat goes on (exit 0)",
          proc.returncode == 0 and "(stopped)" in err and stopped_after < 1.0 and out.count(b"\n") == 1,
          f"rc={proc.returncode} out={out!r} err={err!r}")
    broken = os.path.join(tmp, "broken.jinja")
    with open(broken, "w") as f:
        f.write("{% for m in messages %}\n{{ m.content }\n{% endfor %}")
    rc, out, err = chat("Hello\n", "-q", "--chat-template", broken)
    check("a template syntax error names its line and fails", rc != 0 and "syntax error at line 2" in err, err)

    # Ctrl-C: a model slow enough to interrupt mid-reply.
    model = os.path.join(tmp, "s15.gguf")
    subprocess.run([hetero, "gen-model", model, "--shape", "stories15m", "--type", "q8_0"], check=True, capture_output=True)
    proc = subprocess.Popen([hetero, "chat", "--providers", "cpu", "-m", model, "--temp", "0", "-n", "0", "-q"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.set_blocking(proc.stdout.fileno(), False)
    proc.stdin.write(b"Tell me everything\n")
    proc.stdin.flush()
    got = b""
    deadline = time.time() + 60
    while len(got) < 20 and time.time() < deadline:
        time.sleep(0.05)
        got += proc.stdout.read() or b""
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)
    out, err = finish(proc, b"/exit\n")
    err = err.decode(errors="replace")
    check("Ctrl-C stops the reply, the chat goes on to /exit", proc.returncode == 0 and "(reply stopped)" in err and len(got) >= 20,
          f"rc={proc.returncode} err={err!r} got={len(got)} bytes")

    # Ctrl-C at the prompt quits.
    proc = subprocess.Popen([hetero, "chat", "--providers", "cpu", "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=20)
        check("Ctrl-C at the prompt quits", proc.returncode is not None)
    except subprocess.TimeoutExpired:
        proc.kill()
        check("Ctrl-C at the prompt quits", False, "still running 20 s after SIGINT")

sys.exit(serve_lib.exit_status())
