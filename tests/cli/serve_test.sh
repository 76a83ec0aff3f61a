#!/usr/bin/env bash
# hetero serve driven by curl: the OpenAI endpoints streamed and not, their
# log-probabilities, two concurrent clients, a client leaving mid-stream,
# OpenAI-style errors with
# their statuses (and the server serving on after each), a bounded load of
# 200 requests (8 at a time) with RSS measured after the first and last 50.
# Usage: serve_test.sh HETERO_BINARY
set -uo pipefail
hetero="$1"
here="$(cd "$(dirname "$0")" && pwd)"
fail=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [[ "$2" == 0 ]]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi
}
tmp=$(mktemp -d)
server_pid=""
trap '[[ -n "$server_pid" ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
source "$here/serve_lib.sh"

# A model slow enough (stories15M's shape, random weights: some hundred
# tokens/s on two cores) that a generation to the full context can be left mid-way.
"$hetero" gen-model "$tmp/model.gguf" --shape stories15m --type q8_0 2>/dev/null || { echo "gen-model failed"; exit 1; }
start_server "$tmp/server.log" -m "$tmp/model.gguf" || exit 1
model=random  # general.name of gen-model's files

post() {  # post PATH BODY OUTFILE -> prints the HTTP status
  curl -s -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' --max-time 60 "$base$1" --data-binary "$2"
}
json() {  # json FILE PYTHON-EXPRESSION-ON-d -> exit status of the assertion
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>/dev/null
}
healthy() { [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$base/health") == 200 ]]; }
sse_text() {  # concatenated content of an SSE stream file (chat deltas or completion texts)
  python3 - "$1" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("data: ") or line == "data: [DONE]":
        continue
    c = json.loads(line[6:])["choices"][0]
    out.append(c.get("text") or c.get("delta", {}).get("content") or "")
sys.stdout.write("".join(out))
PY
}

s=$(curl -s -o "$tmp/h" -w '%{http_code}' "$base/health"); [[ $s == 200 ]] && json "$tmp/h" "d['status']=='ok'"; check "GET /health" $?
s=$(curl -s -o "$tmp/m" -w '%{http_code}' "$base/v1/models"); [[ $s == 200 ]] && json "$tmp/m" "d['object']=='list' and d['data'][0]['id']=='$model'"
check "GET /v1/models names the model (general.name)" $?
s=$(curl -s -o "$tmp/m1" -w '%{http_code}' "$base/v1/models/$model"); [[ $s == 200 ]] && json "$tmp/m1" "d['id']=='$model'"
check "GET /v1/models/NAME" $?

chat_body() { echo "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"$1\"}],\"max_tokens\":$2,\"temperature\":0$3}"; }
s=$(post /v1/chat/completions "$(chat_body Hello 12 '')" "$tmp/c1")
[[ $s == 200 ]] && json "$tmp/c1" "d['object']=='chat.completion' and d['model']=='$model' and d['id'].startswith('chatcmpl-') and d['choices'][0]['message']['role']=='assistant' and len(d['choices'][0]['message']['content'])>0 and d['choices'][0]['finish_reason'] in ('stop','length') and d['usage']['total_tokens']==d['usage']['prompt_tokens']+d['usage']['completion_tokens'] and isinstance(d['created'], int)"
check "chat completion (non-streamed)" $?
reply=$(python3 -c "import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))['choices'][0]['message']['content'])" "$tmp/c1")
printf 'Hello\n' | "$hetero" chat --providers cpu -m "$tmp/model.gguf" --temp 0 -n 12 -q >"$tmp/cli_reply" 2>/dev/null
[[ "$(cat "$tmp/cli_reply")" == "$reply" ]]; check "greedy chat completion = hetero chat's reply" $?
s=$(post /v1/chat/completions "$(chat_body Hello 12 ',"stream":true')" "$tmp/c1s")
[[ $s == 200 && "$(sse_text "$tmp/c1s")" == "$reply" && "$(grep -c '^data: ' "$tmp/c1s")" -ge 3 && "$(grep '^data: ' "$tmp/c1s" | tail -1)" == "data: [DONE]" ]] &&
  grep -q '"object":"chat.completion.chunk"' "$tmp/c1s" && grep -q '"role":"assistant"' "$tmp/c1s" && grep -q '"finish_reason":"length"' "$tmp/c1s"
check "chat completion streamed: chunks, finish_reason, [DONE]; same text" $?

comp_body() { echo "{\"model\":\"$model\",\"prompt\":\"$1\",\"max_tokens\":$2,\"temperature\":0$3}"; }
s=$(post /v1/completions "$(comp_body 'Once upon a time' 10 '')" "$tmp/p1")
[[ $s == 200 ]] && json "$tmp/p1" "d['object']=='text_completion' and d['id'].startswith('cmpl-') and len(d['choices'][0]['text'])>0 and d['choices'][0]['finish_reason']=='length' and d['usage']['completion_tokens']==10"
check "completion (non-streamed)" $?
text=$(python3 -c "import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))['choices'][0]['text'])" "$tmp/p1")
s=$(post /v1/completions "$(comp_body 'Once upon a time' 10 ',"stream":true,"stream_options":{"include_usage":true}')" "$tmp/p1s")
[[ $s == 200 && "$(sse_text "$tmp/p1s")" == "$text" && "$(grep '^data: ' "$tmp/p1s" | tail -1)" == "data: [DONE]" ]] && grep -q '"completion_tokens":10' "$tmp/p1s"
check "completion streamed: same text, usage on request, [DONE]" $?
stop=${text:3:4}
s=$(post /v1/completions "$(comp_body 'Once upon a time' 10 ",\"stop\":[\"$stop\"]")" "$tmp/p2")
[[ $s == 200 ]] && json "$tmp/p2" "d['choices'][0]['finish_reason']=='stop' and '$stop' not in d['choices'][0]['text'] and d['choices'][0]['text']=='''${text:0:3}'''"
check "a stop string ends the text before it" $?

# Log-probabilities (OpenAI's logprobs): every reply token with its
# alternatives, greedy picks on top, the tokens spelling the reply's text.
s=$(post /v1/chat/completions "$(chat_body Hello 12 ',"logprobs":true,"top_logprobs":2')" "$tmp/lp1")
[[ $s == 200 ]] && python3 - "$tmp/lp1" "$reply" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["choices"][0]
entries = c["logprobs"]["content"]
assert len(entries) == d["usage"]["completion_tokens"] == 12, len(entries)
for e in entries:
    top = e["top_logprobs"]
    assert len(top) == 2 and top[0]["token"] == e["token"] and top[0]["logprob"] == e["logprob"] >= top[1]["logprob"]
    assert e["logprob"] <= 0 and bytes(e["bytes"]).decode("utf-8", "replace") == e["token"]
assert "".join(e["token"] for e in entries) == c["message"]["content"] == sys.argv[2]
PY
check "chat logprobs: 12 tokens, two alternatives each, greedy on top, spelling the reply" $?
s=$(post /v1/completions "$(comp_body 'Once upon a time' 10 ',"logprobs":3')" "$tmp/lp2")
[[ $s == 200 ]] && python3 - "$tmp/lp2" "$text" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["choices"][0]
lp = c["logprobs"]
assert len(lp["tokens"]) == 10 and "".join(lp["tokens"]) == c["text"] == sys.argv[2]
for top, logprob in zip(lp["top_logprobs"], lp["token_logprobs"]):
    assert len(top) == 3 and max(top.values()) == logprob
assert lp["text_offset"] == [sum(len(t.encode()) for t in lp["tokens"][:i]) for i in range(10)]
PY
check "completion logprobs: tokens, token_logprobs, top_logprobs, text_offset" $?
s=$(post /v1/completions "$(comp_body 'Once upon a time' 10 ",\"logprobs\":1,\"stop\":[\"$stop\"]")" "$tmp/lp3")
[[ $s == 200 ]] && json "$tmp/lp3" "(lambda c: c['finish_reason'] == 'stop' and c['text'].startswith(''.join(c['logprobs']['tokens'])) and len(c['logprobs']['tokens']) < 10)(d['choices'][0])"
check "completion logprobs end where a stop string cuts the text" $?
# Streamed: each chunk carries the tokens whose text it completes; together
# the same tokens and log-probabilities as the whole reply.
s=$(post /v1/chat/completions "$(chat_body Hello 12 ',"logprobs":true,"top_logprobs":2,"stream":true')" "$tmp/lp4")
[[ $s == 200 ]] && python3 - "$tmp/lp4" "$tmp/lp1" <<'PY'
import json, sys
chunks = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: {")]
whole = json.load(open(sys.argv[2]))["choices"][0]["logprobs"]["content"]
streamed = [e for c in chunks if c["choices"][0]["logprobs"] for e in c["choices"][0]["logprobs"]["content"]]
assert [(e["token"], e["logprob"]) for e in streamed] == [(e["token"], e["logprob"]) for e in whole], (len(streamed), len(whole))
for c in chunks:  # a chunk's tokens spell its text
    ch = c["choices"][0]
    if ch["logprobs"]:
        assert "".join(e["token"] for e in ch["logprobs"]["content"]) == ch["delta"].get("content", "")
PY
check "chat logprobs streamed: chunk by chunk, the whole reply's tokens and log-probabilities" $?
s=$(post /v1/completions "$(comp_body 'Once upon a time' 10 ',"logprobs":1,"stream":true')" "$tmp/lp7")
[[ $s == 200 ]] && python3 - "$tmp/lp7" "$text" <<'PY'
import json, sys
chunks = [json.loads(l[6:])["choices"][0] for l in open(sys.argv[1]) if l.startswith("data: {")]
tokens = [t for c in chunks if c["logprobs"] for t in c["logprobs"]["tokens"]]
offsets = [o for c in chunks if c["logprobs"] for o in c["logprobs"]["text_offset"]]
assert len(tokens) == 10 and "".join(tokens) == sys.argv[2]
assert offsets == [sum(len(t.encode()) for t in tokens[:i]) for i in range(10)]
PY
check "completion logprobs streamed: tokens and text offsets across chunks" $?
s=$(post /v1/chat/completions "$(chat_body Hello 4 ',"top_logprobs":2')" "$tmp/lp5")
[[ $s == 400 ]] && json "$tmp/lp5" "d['error']['param'] == 'top_logprobs'"
check "top_logprobs without logprobs: 400" $?
s=$(post /v1/chat/completions "$(chat_body Hello 4 '')" "$tmp/lp6")
[[ $s == 200 ]] && json "$tmp/lp6" "d['choices'][0]['logprobs'] is None"
check "no logprobs asked: null" $?

# Two clients at once, each gets its own answer (the same as alone).
post /v1/completions "$(comp_body 'Once upon a time' 10 ',"stream":true')" "$tmp/a" >"$tmp/a.s" &
client_a=$!
post /v1/chat/completions "$(chat_body Hello 12 '')" "$tmp/b" >"$tmp/b.s" &
client_b=$!
wait "$client_a" "$client_b"
[[ $(cat "$tmp/a.s") == 200 && $(cat "$tmp/b.s") == 200 && "$(sse_text "$tmp/a")" == "$text" ]] &&
  json "$tmp/b" "d['choices'][0]['message']['content']==json.load(open('$tmp/c1'))['choices'][0]['message']['content']"
check "two concurrent clients get their own (unchanged) answers" $?

# A client leaving mid-stream: its generation (to the full context) stops,
# and the next request is answered at once. The client leaves after its
# first 1,500 bytes (head closes the pipe), not after a time: on a fast
# machine the whole generation can end within any fixed wait.
curl -sN --max-time 30 -H 'Content-Type: application/json' "$base/v1/chat/completions" \
  --data-binary "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"Go on forever\"}],\"stream\":true}" 2>/dev/null |
  head -c 1500 >"$tmp/left"
t0=$(date +%s.%N)
s=$(post /v1/completions "$(comp_body 'Once upon a time' 10 '')" "$tmp/after")
t1=$(date +%s.%N)
after_s=$(python3 -c "print(f'{$t1-$t0:.2f}')")
echo "     request after the client left answered in $after_s s"
sleep 0.5
[[ $s == 200 && $(grep -c '^data: ' "$tmp/left") -ge 2 ]] && grep -q "cancelled" "$tmp/server.log" && python3 -c "import sys; sys.exit(0 if $after_s < 5 else 1)"
check "a client leaving mid-stream stops its generation; the next request is served" $? || { grep -c '^data: ' "$tmp/left"; tail -5 "$tmp/server.log"; }

# Errors: OpenAI's shape and status; the server serves on after each.
err_check() {  # err_check NAME EXPECTED-STATUS CODE-OR-None PATH BODY
  local s
  s=$(post "$4" "$5" "$tmp/e")
  [[ $s == "$2" ]] && json "$tmp/e" "set(d['error'])=={'message','type','param','code'} and d['error']['code']==$3 and len(d['error']['message'])>0" && healthy
  check "$1 -> $2, error object, still serving" $?
}
err_check "malformed JSON" 400 None /v1/chat/completions '{"model": "x", "messages": [}'
err_check "JSON that is not an object" 400 None /v1/completions '[1,2]'
err_check "missing messages" 400 None /v1/chat/completions "{\"model\":\"$model\"}"
err_check "missing model" 400 None /v1/chat/completions '{"messages":[{"role":"user","content":"hi"}]}'
err_check "missing prompt" 400 None /v1/completions "{\"model\":\"$model\"}"
err_check "wrong field type" 400 None /v1/chat/completions "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":\"many\"}"
# One model is served: a request naming any model gets it (the README's "NAME" too), and the reply names it.
s=$(post /v1/chat/completions '{"model":"NAME","messages":[{"role":"user","content":"Hello"}],"max_tokens":12,"temperature":0}' "$tmp/e")
[[ $s == 200 ]] && json "$tmp/e" "d['model']=='$model' and d['choices'][0]['message']['content']==json.load(open('$tmp/c1'))['choices'][0]['message']['content']"
check "a request naming another model is answered by the one served" $?
s=$(curl -s -o "$tmp/e" -w '%{http_code}' "$base/v1/models/no-such-model"); [[ $s == 404 ]] && json "$tmp/e" "d['error']['code']=='model_not_found'"
check "GET /v1/models/UNKNOWN -> 404 model_not_found" $?
long=$(python3 -c "print('word ' * 3000)")
err_check "prompt longer than the context" 400 "'context_length_exceeded'" /v1/completions "{\"model\":\"$model\",\"prompt\":\"$long\"}"
err_check "chat longer than the context" 400 "'context_length_exceeded'" /v1/chat/completions "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"$long\"}],\"stream\":true}"
s=$(curl -s -o "$tmp/e" -w '%{http_code}' "$base/v1/chat/completions"); [[ $s == 405 ]] && json "$tmp/e" "'error' in d" && healthy
check "GET on a POST endpoint -> 405" $?
s=$(curl -s -o "$tmp/e" -w '%{http_code}' --data '' "$base/v1/models"); [[ $s == 405 ]] && json "$tmp/e" "'error' in d" && healthy
check "POST /v1/models -> 405" $?
s=$(curl -s -o "$tmp/e" -w '%{http_code}' "$base/v1/nothing"); [[ $s == 404 ]] && json "$tmp/e" "'error' in d" && healthy
check "unknown path -> 404" $?
# The file stem names the model too.
s=$(post /v1/completions "{\"model\":\"model\",\"prompt\":\"hi\",\"max_tokens\":2}" "$tmp/e"); [[ $s == 200 ]]; check "the file's stem is accepted as the model name" $?

# Bounded load: 200 requests, 8 at a time, over 4 prompts; every answer must
# equal that prompt's greedy answer alone. RSS after the first and last 50.
for i in 0 1 2 3; do
  post /v1/chat/completions "$(chat_body "Question number $i" 6 '')" "$tmp/expect$i" >/dev/null
  python3 -c "import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))['choices'][0]['message']['content'])" "$tmp/expect$i" >"$tmp/expect$i.txt"
done
one_request() {  # one_request N: prints "ok" or what was wrong
  local i=$1 k=$(( $1 % 4 )) s t
  read -r s t < <(curl -s -o "$tmp/load$i" -w '%{http_code} %{time_total}\n' -H 'Content-Type: application/json' --max-time 120 \
      "$base/v1/chat/completions" --data-binary "$(chat_body "Question number $k" 6 '')")
  if [[ $s == 200 ]] && python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['choices'][0]['message']['content']==open(sys.argv[2]).read() else 1)" "$tmp/load$i" "$tmp/expect$k.txt"; then
    echo "ok $t"
  else
    echo "request $i: status $s"
  fi
}
export -f one_request chat_body
export tmp base model
t0=$(date +%s.%N)
seq 0 49 | xargs -P 8 -I{} bash -c 'one_request {}' >"$tmp/batch0"
rss_first=$(rss_kb)
for b in 1 2 3; do seq $((b * 50)) $((b * 50 + 49)) | xargs -P 8 -I{} bash -c 'one_request {}' >"$tmp/batch$b"; done
rss_last=$(rss_kb)
t1=$(date +%s.%N)
good=$(cat "$tmp"/batch? | grep -c '^ok ')
latency=$(cat "$tmp"/batch? | sed -n 's/^ok //p' | python3 -c "
import sys; t = sorted(float(x) for x in sys.stdin)
print(f'latency p50 {t[len(t)//2]*1e3:.0f} ms, p95 {t[int(len(t)*0.95)]*1e3:.0f} ms, max {t[-1]*1e3:.0f} ms' if t else 'no latencies')")
echo "     load: $good of 200 answered correctly in $(python3 -c "print(f'{$t1-$t0:.1f}')") s ($latency, 8 clients, 6 tokens each)"
echo "     server RSS after the first 50 requests: $rss_first kB, after the last 50: $rss_last kB"
[[ $good == 200 ]]; check "200 requests, 8 concurrent, all answered correctly" $?
(( rss_last <= rss_first + rss_first / 20 + 4096 )); check "RSS does not grow under load (last 50 <= first 50 + 5 % + 4 MiB)" $?

healthy; check "still serving after everything" $?
stop_server; rc=$?
[[ $rc == 0 ]] && grep -q "stopped by SIGTERM" "$tmp/server.log"; check "SIGTERM stops the server cleanly (exit 0)" $?
server_pid=""
# SIGINT while a client streams: the stream ends, the server exits.
start_server "$tmp/server2.log" -m "$tmp/model.gguf" || exit 1
curl -sN --max-time 30 -H 'Content-Type: application/json' "$base/v1/chat/completions" \
  --data-binary "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"Go on\"}],\"stream\":true}" >"$tmp/stream2" 2>/dev/null &
curl_pid=$!
sleep 1
kill -INT "$server_pid"; t0=$(date +%s)
wait "$server_pid"; rc=$?; t1=$(date +%s)
wait "$curl_pid"
server_pid=""
[[ $rc == 0 && $((t1 - t0)) -le 10 ]] && grep -q "stopped by SIGINT" "$tmp/server2.log"; check "SIGINT during a stream: clean exit within 10 s ($((t1 - t0)) s)" $?

exit $fail
