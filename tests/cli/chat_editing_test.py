#!/usr/bin/env python3
"""hetero chat's input: messages over several lines (a \"\"\" block, a trailing
backslash), /save and /load of a conversation (a loaded one continues with
the reply the original would have given; bad files are refused with their
name and entry), and, at a terminal (a pseudo-terminal here), line editing
and history kept between chats.
Usage: chat_editing_test.py HETERO_BINARY"""
import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import time

import serve_lib
from serve_lib import check

hetero = sys.argv[1]
N = "24"


def chat(stdin, *args, env=None):
    p = subprocess.run([hetero, "chat", "--providers", "cpu", "--temp", "0", "-n", N, "-q", *args], input=stdin.encode(),
                       capture_output=True, timeout=120, env=env)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def saved_messages(path):
    with open(path) as f:
        return json.load(f)["messages"]


with tempfile.TemporaryDirectory() as tmp:
    # Several lines make one message, in a block or with backslashes.
    f1, f2 = os.path.join(tmp, "block.json"), os.path.join(tmp, "backslash.json")
    rc, _, err = chat(f'"""\nline one\n\nline three\n"""\n/save {f1}\n')
    msgs = saved_messages(f1) if rc == 0 and os.path.exists(f1) else []
    check('a """ block is one message, blank lines kept', rc == 0 and msgs and msgs[0] == {"role": "user", "content": "line one\n\nline three"},
          f"rc={rc} {msgs} {err}")
    rc, _, err = chat(f"first\\\nsecond\n/save {f2}\n")
    msgs = saved_messages(f2) if rc == 0 and os.path.exists(f2) else []
    check("a line ending in a backslash goes on on the next line", rc == 0 and msgs and msgs[0]["content"] == "first\nsecond",
          f"rc={rc} {msgs} {err}")
    rc, out, err = chat('"""\nnever closed\n')
    check('input that ends inside a """ block sends nothing, exit 0', rc == 0 and out == "", f"rc={rc} out={out!r} {err}")

    # /save then /load: the loaded conversation continues as the original would.
    saved = os.path.join(tmp, "conv.json")
    rc, both, err = chat("Hello there\nTell me a story about a cat\n")
    rc1, first, err1 = chat(f"Hello there\n/save {saved}\n")
    rc2, second, err2 = chat(f"/load {saved}\nTell me a story about a cat\n")
    check("/save writes the turn (user and assistant) with its format", rc1 == 0 and [m["role"] for m in saved_messages(saved)] == ["user", "assistant"]
          and json.load(open(saved))["format"] == "hetero-chat/1", f"{err1}")
    check("after /load the next reply is the one the whole chat gave", rc == 0 and rc2 == 0 and second.strip() != "" and both == first + second,
          f"whole: {both!r}\n     first: {first!r}\n     second: {second!r}\n     {err2}")
    # A system message in the file opens the conversation again.
    with_system = os.path.join(tmp, "system.json")
    rc3, sys_reply, _ = chat("Hello there\n", "--system", "You are a pirate.")
    json.dump({"format": "hetero-chat/1", "messages": [{"role": "system", "content": "You are a pirate."}]}, open(with_system, "w"))
    rc4, loaded_reply, err4 = chat(f"/load {with_system}\nHello there\n")
    check("a loaded system message acts as --system does", rc3 == 0 and rc4 == 0 and loaded_reply == sys_reply, f"{sys_reply!r} vs {loaded_reply!r} {err4}")

    # Bad files: refused with the file and entry named, the chat goes on, exit 1.
    cases = {
        "missing.json": (None, "no such file"),
        "notjson.json": ("{\"format\": ", "invalid JSON"),
        "dup.json": ('{"format": "hetero-chat/1", "messages": [], "messages": []}', "duplicate key 'messages'"),
        "format.json": ('{"format": "other/2", "messages": []}', "format: must be"),
        "role.json": ('{"format": "hetero-chat/1", "messages": [{"role": "wizard", "content": "x"}]}', "messages[0].role"),
        "content.json": ('{"format": "hetero-chat/1", "messages": [{"role": "user", "content": 7}]}', "messages[0].content"),
        "late-system.json": ('{"format": "hetero-chat/1", "messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]}',
                             "messages[1].role: a system message may only open"),
    }
    for name, (text, expect) in cases.items():
        path = os.path.join(tmp, name)
        if text is not None:
            open(path, "w").write(text)
        rc, out, err = chat(f"/load {path}\nHello there\n")
        check(f"/load of {name}: refused naming it ({expect}), the chat goes on, exit 1",
              rc == 1 and path in err and expect in err and out == first, f"rc={rc} out={out!r} err={err!r}")
    rc, out, err = chat("/save\n/load\n/frobnicate\nHello there\n")
    check("/save and /load without a file, an unknown command: a message each, the chat goes on",
          rc == 1 and err.count("needs a file") == 2 and "unknown command /frobnicate" in err and out == first, f"rc={rc} {err!r}")

    # At a terminal: editing keys and history between chats.
    probe = subprocess.run([hetero, "chat", "--help"], capture_output=True, text=True)
    if "--history" not in probe.stdout:
        check("chat --help lists --history", False, probe.stdout[-400:])
    history = os.path.join(tmp, "history")

    def at_terminal(keys):
        """Runs a chat on a pseudo-terminal, typing each item of `keys` once the previous reply (or the banner) is in."""
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(hetero, [hetero, "chat", "--providers", "cpu", "--temp", "0", "-n", N, "--history", history])
        out = b""

        def read_for(seconds, until=None):
            nonlocal out
            end = time.time() + seconds
            while time.time() < end:
                r, _, _ = select.select([fd], [], [], 0.1)
                if r:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        return False
                    if not chunk:
                        return False
                    out += chunk
                    if until and until in out:
                        return True
            return True

        read_for(60, b"> ")
        for k in keys:
            mark = out.count(b"> ")
            os.write(fd, k)
            end = time.time() + 60
            while time.time() < end and out.count(b"> ") <= mark:
                if not read_for(0.5):
                    break
        read_for(2)
        status = None
        end = time.time() + 30  # a chat that does not end is a failure, not a hang
        while status is None and time.time() < end:
            try:
                done, st = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, st = pid, -1
            if done == pid:
                status = st
            else:
                time.sleep(0.05)  # read_for returns at once once the terminal is closed
        if status is None:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            status = -9
        os.close(fd)
        return out.decode(errors="replace"), status

    if not os.path.exists("/dev/ptmx"):
        print("skip terminal checks (no pseudo-terminals here)")
    else:
        rc, ref, _ = chat("Hello there\n")
        # "Helo", cursor left, "l", Ctrl-E (end of line), " there": "Hello there".
        screen, status = at_terminal([b"Helo\x1b[Dl\x05 there\r", b"\x04"])
        edited = "libedit line editing" in subprocess.run([hetero, "chat", "--help"], capture_output=True, text=True).stdout
        if not edited:
            print("skip editing checks (built without libedit)")
        else:
            check("at a terminal, a cursor-left correction is part of the message (the reply is the one to 'Hello there')",
                  ref.strip() != "" and ref.strip() in screen.replace("\r", ""), f"{ref!r} not in {screen[-600:]!r}")
            # libedit's file escapes spaces as \040.
            kept = open(history, errors="replace").read().replace("\\040", " ") if os.path.exists(history) else "no file"
            check("the history file holds the edited message", "Hello there\n" in kept, kept)
            screen, status = at_terminal([b"\x1b[A\r", b"\x04"])
            check("in the next chat, cursor-up recalls it (the same reply again)", ref.strip() in screen.replace("\r", ""), screen[-600:])
            # Typed the moment the prompt shows, Ctrl-C may land before the read begins: eight tries, each must quit.
            tries = [at_terminal([b"\x03"]) for _ in range(8)]
            hung = [(status, screen[-300:]) for screen, status in tries if not (status >= 0 and os.WIFEXITED(status))]
            check(f"Ctrl-C at the prompt quits ({8 - len(hung)} of 8 tries)", not hung, f"status, screen of the first: {hung[:1]!r}")

sys.exit(serve_lib.exit_status())
