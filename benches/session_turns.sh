#!/usr/bin/env bash
# cn-run's own cost per turn as the history grows (issue 19 item 4): a 300-turn scripted run
# whose history grows past 2 MB (each turn a Write of ~7.5 KB), on a model with a 1M-token
# context window so nothing is compacted. The script provider answers at once and Write is
# in-process, so the time between two `turn.started` events is cn-run's own work per turn:
# the request built, the response handled, the tool run, the session log appended.
# Reports the mean per turn over the first 30 and the last 30 turns, their ratio, and the
# size of the history and of session.jsonl at the end. RUNS=3 runs by default. CONTEXT sets
# the context window (default 1M tokens: the token counter's exact encoder is then built in
# the background from about turn 267, as a real run does at 60 % of its threshold).
#   cargo build --release && benches/session_turns.sh
#   BIN=path/to/other/cn-run benches/session_turns.sh       (e.g. an older build)
set -euo pipefail
BIN=$(realpath "${BIN:-$(dirname "$0")/../target/release/cn-run}")
TURNS=${TURNS:-300}
SIZE=${SIZE:-7500}
CONTEXT=${CONTEXT:-1000000}
# FORMAT=text: the model calls tools in text (`tool_call_format: text`), so each request
# also converts the history to that form.
FORMAT=${FORMAT:-native}
RUNS=${RUNS:-3}
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "kept in $dir" >&2 || trap 'rm -rf "$dir"' EXIT

python3 - "$dir" "$TURNS" "$SIZE" "$CONTEXT" "$FORMAT" <<'PY'
import sys
root, turns, size, context, fmt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
extra = ", tool_call_format: text" if fmt == "text" else ""
with open(f"{root}/s.yaml", "w") as f:
    f.write("turns:\n")
    for i in range(1, turns + 1):
        body = (f"turn {i} " + "the quick brown fox jumps over the lazy dog " * (size // 44 + 1))[:size]
        f.write(f"  - tool_calls: [{{name: Write, arguments: {{filepath: notes/f{i}.txt, content: \"{body}\"}}}}]\n")
    f.write("  - text: done\n")
with open(f"{root}/job.yaml", "w") as f:
    f.write(f"version: 1\nname: long\nmodel: {{provider: script, name: gpt-4.1, script: s.yaml, context_length: {context}, max_tokens: 8192{extra}}}\n"
            f"prompt: write notes\npermissions: {{mode: auto}}\nlimits: {{max_turns: {turns + 5}}}\n")
PY

for run in $(seq "$RUNS"); do
  rm -rf "$dir/ws" && mkdir -p "$dir/ws" && cp "$dir/job.yaml" "$dir/s.yaml" "$dir/ws/"
  start=$(date +%s.%N)
  (cd "$dir/ws" && "$BIN" job.yaml --out "$dir/ws/out" >/dev/null 2>"$dir/stderr") || { cat "$dir/stderr" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 - "$dir/ws/out" "$TURNS" "$start" "$end" "$run" <<'PY'
import json, os, sys, datetime
out, turns, start, end, run = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
def ts(e):
    return datetime.datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()
started = {}
phase = {}  # turn -> {event type: first time}
for line in open(f"{out}/events.jsonl"):
    e = json.loads(line)
    if e["type"] == "turn.started":
        started[e["turn"]] = ts(e)
    if "turn" in e:
        phase.setdefault(e["turn"], {}).setdefault(e["type"], ts(e))
assert len(started) >= turns, f"only {len(started)} turns"
w = 30
first = (started[w + 1] - started[1]) / w * 1000
last = (started[turns] - started[turns - w]) / w * 1000
session = os.path.getsize(f"{out}/session.jsonl") if os.path.exists(f"{out}/session.jsonl") else os.path.getsize(f"{out}/session.json")
result = json.load(open(f"{out}/result.json"))
print(f"run {run}: {turns} turns in {end - start:.2f} s wall; per turn: first {w} {first:.2f} ms, last {w} {last:.2f} ms, "
      f"ratio {last / first:.2f}; session file {session / 1e6:.2f} MB; status {result['status']}")
steps = [("request", "turn.started", "assistant.message"), ("to tool", "assistant.message", "tool.started"),
         ("tool", "tool.started", "tool.finished"), ("after tool", "tool.finished", "turn.started+1")]
def mean(turns_, a, b):
    xs = []
    for t in turns_:
        p = phase.get(t, {})
        end = started.get(t + 1) if b == "turn.started+1" else p.get(b)
        if a in p and end is not None:
            xs.append((end - p[a]) * 1000)
    return sum(xs) / max(len(xs), 1)
print("  phases (ms, first 30 -> last 30): " + ", ".join(
    f"{name} {mean(range(1, w + 1), a, b):.2f} -> {mean(range(turns - w, turns), a, b):.2f}" for name, a, b in steps))
# Everything but the tool itself (on a disk, mostly Write's fsync, whose latency is the
# disk's): the runner's own bookkeeping around each call.
around = [sum(mean(span, a, b) for name, a, b in steps if name != "tool")
          for span in (range(1, w + 1), range(turns - w, turns))]
print(f"  outside the tool: {around[0]:.2f} -> {around[1]:.2f} ms per turn")
PY
done
