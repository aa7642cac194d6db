#!/usr/bin/env bash
# Whole runs of the release binary on a generated 100,000-file repository (issue 23), beside
# the checkpointer-only figures of benches/checkpoint_scale.rs. Scenarios (scripted model,
# so every figure is cn-run's own cost):
#   writes:   10 Write calls, one per turn, then an answer;
#   bash:     10 Bash calls, each appending to a tracked file and adding a new one;
#   artifact: one Bash call writing a 200 MB untracked file of random data;
# each with checkpoints on (as shipped) and with `git: {checkpoints: false}`, RUNS times
# (default 5), alternating on/off. Reported per scenario as medians, each with the load
# average (1 min) taken at its runs:
#   wall            the whole process;
#   next request    `tool.finished` -> the next `turn.started` (what the model waits);
#   end             the last `turn.started` -> `run.completed` (the final answer is instant);
#   per call        the worker's own time per checkpoint (debug log `checkpoint-timing`);
#   start           the start snapshot (same log);
# plus .git growth, diff.patch size, git_added_bytes and skipped, and `git status` and
# `git add -A && git write-tree` on the same tree (median of RUNS).
# The Bash sandbox stays as shipped (bubblewrap when present).
# Needs python3 and ~1.5 GB of disk. Builds the release binary unless BIN is given:
#   benches/checkpoint_run.sh        (FILES=100000 RUNS=5 SCENARIOS="writes bash artifact")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${BIN:-}" ]; then
  (cd "$here/.." && cargo build --release --bin cn-run >&2)
  BIN=$here/../target/release/cn-run
fi
BIN=$(realpath "$BIN")
FILES=${FILES:-100000}
RUNS=${RUNS:-5}
SCENARIOS=${SCENARIOS:-writes bash artifact}
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "kept in $dir" >&2 || trap 'rm -rf "$dir"' EXIT
repo=$dir/repo
now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }
gitsize() { du -sb "$repo/.git" 2>/dev/null | cut -f1; }

. "$(dirname "$0")/lib/big_repo.sh"
make_big_repo "$repo" "$FILES"
echo "repository: $FILES files; binary $BIN; $RUNS runs each"

# git's own commands on the same tree (the index is fresh after the commit).
timed() { local t0 t1; t0=$(now); "$@" >/dev/null; t1=$(now); echo "$t0 $t1"; }
median_ms() { python3 -c "import sys,statistics; xs=[float(b)-float(a) for a,b in (l.split() for l in sys.stdin)]; print(f'{statistics.median(xs)*1000:.0f} ms')"; }
for i in $(seq "$RUNS"); do timed git -C "$repo" status --porcelain; done > "$dir/status.t"
echo "git status:                   $(median_ms < "$dir/status.t") (load $(load))"
addtree() { cp "$repo/.git/index" "$dir/index.copy"; (cd "$repo" && GIT_INDEX_FILE="$dir/index.copy" git add -A && GIT_INDEX_FILE="$dir/index.copy" git write-tree); }
for i in $(seq "$RUNS"); do timed addtree; done > "$dir/add.t"
echo "git add -A && git write-tree: $(median_ms < "$dir/add.t") (load $(load))"

mkdir -p "$dir/jobs"
{
  echo "turns:"
  for i in $(seq 10); do
    echo "  - tool_calls: [{name: Write, arguments: {filepath: d$(printf %04d "$i")/f${i}00.txt, content: \"edit $i\"}}]"
  done
  echo "  - text: done"
} > "$dir/jobs/writes.script.yaml"
{
  echo "turns:"
  for i in $(seq 10); do
    echo "  - tool_calls: [{name: Bash, arguments: {command: \"echo more >> d0020/f$((2000 + i)).txt && echo new > new$i.txt\"}}]"
  done
  echo "  - text: done"
} > "$dir/jobs/bash.script.yaml"
cat > "$dir/jobs/artifact.script.yaml" <<'SCRIPT'
turns:
  - tool_calls: [{name: Bash, arguments: {command: "mkdir -p target && head -c 200M /dev/urandom > target/big.bin"}}]
  - text: done
SCRIPT
for s in $SCENARIOS; do
  for cp in on off; do
    git_line=""
    [ "$cp" = off ] && git_line="git: {checkpoints: false}"
    printf 'version: 1\nname: %s-%s\nmodel: {provider: script, name: m, script: %s.script.yaml}\nprompt: work\npermissions: {mode: auto}\nlimits: {max_turns: 30, timeout: 10m}\n%s\n' \
      "$s" "$cp" "$s" "$git_line" > "$dir/jobs/$s-$cp.yaml"
  done
done

# One run's figures as a JSON line: wall, load, next-request waits, end wait, checkpoint
# times from the debug log, .git growth, patch size, git_added_bytes, skipped.
measure() { # out-dir wall-seconds load git-growth
  python3 - "$@" <<'PY'
import json, os, re, sys
from datetime import datetime
out, wall, load, grew = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
r = json.load(open(os.path.join(out, "result.json")))
patch = os.path.join(out, "diff.patch")
ev = [json.loads(l) for l in open(os.path.join(out, "events.jsonl"))]
ts = lambda e: datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()
waits = []
for i, e in enumerate(ev):
    if e["type"] == "tool.finished":
        nxt = next((x for x in ev[i + 1:] if x["type"] == "turn.started"), None)
        if nxt:
            waits.append((ts(nxt) - ts(e)) * 1000)
last = [x for x in ev if x["type"] == "turn.started"][-1]
timing = {}
for line in open(out + ".stderr", errors="replace"):
    m = re.search(r"checkpoint-timing what=(\w+) us=(\d+)", line)
    if m:
        timing.setdefault(m.group(1), []).append(int(m.group(2)) / 1000)
print(json.dumps({
    "status": r.get("status"), "wall": wall * 1000, "load": load, "git_growth": grew,
    "patch": os.path.getsize(patch) if os.path.exists(patch) else 0,
    "added": r.get("git_added_bytes"),
    "skipped": [(s.get("path"), s.get("bytes")) for s in (r.get("skipped") or [])],
    "waits": waits, "end": (ts(ev[-1]) - ts(last)) * 1000, "timing": timing,
}))
PY
}

summary() { # jsonl file, label
  python3 - "$1" "$2" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
if not runs:
    sys.exit(print(f"{sys.argv[2]}: no run wrote result.json (see above)"))
med = lambda xs: statistics.median(xs) if xs else float("nan")
flat = lambda key: [x for r in runs for x in r["timing"].get(key, [])]
loads = [r["load"] for r in runs]
r0 = runs[-1]
print(f"{sys.argv[2]}: status {sorted({r['status'] for r in runs})}, load {min(loads):.1f}-{max(loads):.1f}")
each = ", ".join(f"{r['wall']:.0f}" for r in runs)
print(f"  wall median {med([r['wall'] for r in runs]):.0f} ms (each: {each})")
print(f"  next request waited: median {med([x for r in runs for x in r['waits']]):.1f} ms,"
      f" max {max([x for r in runs for x in r['waits']] or [0]):.1f} ms")
print(f"  end (last turn.started -> run.completed): median {med([r['end'] for r in runs]):.0f} ms")
for key in sorted({k for r in runs for k in r["timing"]}):
    xs = flat(key)
    if xs:
        print(f"  checkpoint-timing {key}: median {med(xs):.1f} ms, max {max(xs):.1f} ms (n={len(xs)})")
print(f"  .git +{r0['git_growth']} B, diff.patch {r0['patch']} B, git_added_bytes {r0['added']}, skipped {r0['skipped']}")
PY
}

for s in $SCENARIOS; do
  : > "$dir/$s-on.jsonl"; : > "$dir/$s-off.jsonl"
  for i in $(seq "$RUNS"); do
    for cp in on off; do
      # Each run starts from the commit with no earlier run's objects (they would be
      # reused, and .git would not grow by what this run adds).
      (cd "$repo" && git reset -q --hard && git clean -qfdx && git for-each-ref --format='delete %(refname)' refs/cn-run | git update-ref --stdin && git prune --expire=now)
      before=$(gitsize); l=$(load); out="$dir/out-$s-$cp-$i"
      t0=$(now)
      rc=0
      (cd "$repo" && CN_RUN_LOG=cn_run=debug "$BIN" --quiet --format json --out "$out" "$dir/jobs/$s-$cp.yaml" >/dev/null 2>"$out.stderr") || rc=$?
      t1=$(now)
      after=$(gitsize)
      if [ ! -f "$out/result.json" ]; then # say why, rather than stop at the summary
        echo "$s-$cp run $i: exit $rc and no result.json; its stderr ends:" >&2
        tail -n 20 "$out.stderr" >&2
        continue
      fi
      measure "$out" "$(python3 -c "print($t1 - $t0)")" "$l" "$((after - before))" >> "$dir/$s-$cp.jsonl"
    done
  done
  summary "$dir/$s-on.jsonl" "$s, checkpoints on"
  summary "$dir/$s-off.jsonl" "$s, checkpoints off"
done
