#!/usr/bin/env bash
# Plugin load and device discovery times, and time to first token.
# Usage: bench/plugin_loading.sh HETERO_BINARY [RUNS] [RUN_RUNS]
#   RUNS      runs of `hetero providers --json` (default 30)
#   RUN_RUNS  runs of `hetero run --temp 0 -n 16 -p "Once upon a time"` (default 10)
# Prints min and median per plugin of load (open + create) and of discovery
# (discover_ms; absent in builds that discover in create, counted as 0), and
# of the "first token after" time that `hetero run` reports.
set -euo pipefail
hetero="$1"
runs="${2:-30}"
run_runs="${3:-10}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$hetero" providers --json >/dev/null  # warm the page cache and on-disk caches
for i in $(seq "$runs"); do "$hetero" providers --json >"$tmp/p$i.json"; done

python3 - "$tmp" "$runs" <<'EOF'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
rows = {}
for i in range(1, runs + 1):
    total_load = total_disc = 0.0
    for p in json.load(open(f"{tmp}/p{i}.json"))["plugins"]:
        if not p.get("loaded"):
            continue
        load = p["open_ms"] + p["create_ms"]
        disc = p.get("discover_ms", 0.0)
        r = rows.setdefault(p["provider"], ([], []))
        r[0].append(load)
        r[1].append(disc)
        total_load += load
        total_disc += disc
    r = rows.setdefault("all loaded", ([], []))
    r[0].append(total_load)
    r[1].append(total_disc)
print(f"{runs} runs of `hetero providers --json` (ms)")
print(f"{'plugin':<12} {'load min':>9} {'load med':>9} {'disc min':>9} {'disc med':>9}")
for name, (load, disc) in rows.items():
    print(f"{name:<12} {min(load):9.1f} {statistics.median(load):9.1f} {min(disc):9.1f} {statistics.median(disc):9.1f}")
EOF

ttft=()
"$hetero" run --temp 0 -n 16 -p "Once upon a time" >/dev/null 2>&1  # warm kernel/pipeline caches
for i in $(seq "$run_runs"); do
  "$hetero" run --temp 0 -n 16 -p "Once upon a time" 2>"$tmp/err" >/dev/null
  ttft+=("$(sed -n 's/.*first token after \([0-9.]*\) ms.*/\1/p' "$tmp/err")")
done
python3 -c '
import statistics, sys
v = [float(x) for x in sys.argv[1:]]
print(f"{len(v)} runs of `hetero run --temp 0 -n 16 -p \"Once upon a time\"`: first token after min {min(v):.1f} ms, median {statistics.median(v):.1f} ms")
' "${ttft[@]}"
