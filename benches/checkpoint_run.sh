#!/usr/bin/env bash
# Whole runs through the binary on a generated 100,000-file repository (issue 23), beside the
# checkpointer-only figures of benches/checkpoint_scale.rs:
#   edits:    a scripted run of 10 Write calls and 10 Bash calls (each changing files);
#   artifact: a run whose one Bash call writes a 200 MB untracked file of random data;
# each with checkpoints on (as shipped) and with `git: {checkpoints: false}`. Reports wall
# time, .git growth (du -sb), diff.patch size, result.json's git_added_bytes and skipped, and
# per tool call the gap from `tool.finished` to its `checkpoint.created` (events carry
# millisecond timestamps: an upper bound on the checkpoint's cost, queueing included) and from
# `tool.finished` to the next `turn.started` (what the next request waited); plus `git status`
# and `git add -A && git write-tree` on the same tree.
# The Bash sandbox stays as shipped (bubblewrap when present).
# Needs a release build, python3 and ~1.5 GB of disk:
#   cargo build --release && benches/checkpoint_run.sh        (FILES=100000 by default)
set -euo pipefail
BIN=$(realpath "${BIN:-$(dirname "$0")/../target/release/cn-run}")
FILES=${FILES:-100000}
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "kept in $dir" >&2 || trap 'rm -rf "$dir"' EXIT
repo=$dir/repo
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }
gitsize() { du -sb "$repo/.git" 2>/dev/null | cut -f1; }

python3 - "$repo" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 100:04}")
    if i % 100 == 0:
        os.makedirs(d)
    with open(os.path.join(d, f"f{i}.txt"), "w") as f:
        f.write(f"file {i}\nsome text line\n")
PY
t0=$(now)
( cd "$repo" && git init -q && git config gc.auto 0 && git add -A && git -c user.name=b -c user.email=b@b commit -qm base )
echo "repository: $FILES files; git add -A && git commit: $(secs "$t0" "$(now)") s"

# git's own commands on the same tree (the index is fresh after the commit).
t0=$(now); git -C "$repo" status --porcelain >/dev/null; t1=$(now)
echo "git status:                       $(secs "$t0" "$t1") s"
cp "$repo/.git/index" "$dir/index.copy"
t0=$(now); (cd "$repo" && GIT_INDEX_FILE="$dir/index.copy" git add -A && GIT_INDEX_FILE="$dir/index.copy" git write-tree >/dev/null); t1=$(now)
echo "git add -A && git write-tree:     $(secs "$t0" "$t1") s"

mkdir -p "$dir/jobs"
{
  echo "turns:"
  for i in $(seq 10); do
    echo "  - tool_calls: [{name: Write, arguments: {filepath: d$(printf %04d "$i")/f${i}00.txt, content: \"edit $i\"}}]"
  done
  for i in $(seq 10); do
    echo "  - tool_calls: [{name: Bash, arguments: {command: \"echo more >> d0020/f$((2000 + i)).txt && echo new > new$i.txt\"}}]"
  done
  echo "  - text: done"
} > "$dir/jobs/edits.script.yaml"
cat > "$dir/jobs/artifact.script.yaml" <<'SCRIPT'
turns:
  - tool_calls: [{name: Bash, arguments: {command: "mkdir -p target && head -c 200M /dev/urandom > target/big.bin"}}]
  - text: done
SCRIPT
for s in edits artifact; do
  for cp in on off; do
    git_line=""
    [ "$cp" = off ] && git_line="git: {checkpoints: false}"
    printf 'version: 1\nname: %s-%s\nmodel: {provider: script, name: m, script: %s.script.yaml}\nprompt: work\npermissions: {mode: auto}\nlimits: {max_turns: 30, timeout: 10m}\n%s\n' \
      "$s" "$cp" "$s" "$git_line" > "$dir/jobs/$s-$cp.yaml"
  done
done

report() { # out-dir
  python3 - "$1" <<'PY'
import json, os, sys
from datetime import datetime
out = sys.argv[1]
r = json.load(open(os.path.join(out, "result.json")))
patch = os.path.join(out, "diff.patch")
size = os.path.getsize(patch) if os.path.exists(patch) else 0
ev = [json.loads(l) for l in open(os.path.join(out, "events.jsonl"))]
ts = lambda e: datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()
finished = {e.get("call_id"): (e, ts(e)) for e in ev if e["type"] == "tool.finished"}
gaps = {}
for e in ev:
    if e["type"] == "checkpoint.created" and e.get("call_id") in finished:
        f, t = finished[e["call_id"]]
        name = f.get("tool") or f.get("name") or f.get("tool_name") or "?"
        gaps.setdefault(name, []).append((ts(e) - t) * 1000)
waits = []
for i, e in enumerate(ev):
    if e["type"] == "tool.finished":
        nxt = next((x for x in ev[i + 1:] if x["type"] == "turn.started"), None)
        if nxt:
            waits.append((ts(nxt) - ts(e)) * 1000)
med = lambda xs: sorted(xs)[len(xs) // 2]
print(f"  status {r.get('status')}, diff.patch {size} B, git_added_bytes {r.get('git_added_bytes')},"
      f" skipped {[(s.get('path'), s.get('bytes')) for s in (r.get('skipped') or [])]}")
start = next((x for x in ev if x["type"] == "checkpoint.created" and x.get("index") == 0), None)
last = [x for x in ev if x["type"] == "turn.started"][-1]
print(f"  run.started -> start snapshot: {((ts(start) - ts(ev[0])) * 1000) if start else 0:.0f} ms;"
      f" last turn.started -> run.completed: {(ts(ev[-1]) - ts(last)) * 1000:.0f} ms")
if waits:
    print(f"  tool.finished -> next turn.started: median {med(waits):.0f} ms, max {max(waits):.0f} ms")
for name, xs in gaps.items():
    print(f"  tool.finished -> checkpoint.created, {name}: median {med(xs):.0f} ms, max {max(xs):.0f} ms (n={len(xs)})")
PY
}

for s in edits artifact; do
  for cp in on off; do
    (cd "$repo" && git reset -q --hard && git clean -qfdx)
    before=$(gitsize)
    t0=$(now)
    (cd "$repo" && "$BIN" --quiet --format json --out "$dir/out-$s-$cp" "$dir/jobs/$s-$cp.yaml" >/dev/null) || true
    t1=$(now)
    after=$(gitsize)
    echo "$s, checkpoints $cp: wall $(secs "$t0" "$t1") s, .git +$((after - before)) B"
    report "$dir/out-$s-$cp"
  done
done
