#!/usr/bin/env bash
# Whole runs on a generated 100,000-file repository whose working tree looks copied to git
# (every file touched, so no file's stat data matches the index: a `cp -r` of a checkout, a
# restored cache, a Docker COPY). This is the tree the index refresh of
# src/checkpoint/refresh.rs is for; it keeps its place only while it shows here (issue 19
# item 5). Scenarios (scripted model, so every figure is cn-run's own cost):
#   answer: the model answers at once (the system prompt's git status, no snapshot);
#   writes: one Write call, then the answer (the status, the start snapshot, one checkpoint).
# Prints one JSON line per run: wall time and the time to the first request (`turn.started`
# of turn 1, from the process start), with the load average. With BIN_B, runs alternate
# between BIN and BIN_B (a paired A/B, e.g. against a build without the refresh).
#   cargo build --release && benches/copied_tree.sh      (FILES=100000 RUNS=5 SCENARIOS="answer writes")
set -euo pipefail
BIN=$(realpath "${BIN:-$(dirname "$0")/../target/release/cn-run}")
BIN_B=${BIN_B:+$(realpath "$BIN_B")}
FILES=${FILES:-100000}
RUNS=${RUNS:-5}
SCENARIOS=${SCENARIOS:-answer writes}
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "kept in $dir" >&2 || trap 'rm -rf "$dir"' EXIT
repo=$dir/repo

. "$(dirname "$0")/lib/big_repo.sh"
make_big_repo "$repo" "$FILES"
mkdir -p "$dir/jobs"
printf 'turns:\n  - text: done\n' > "$dir/jobs/answer.script.yaml"
printf 'turns:\n  - tool_calls: [{name: Write, arguments: {filepath: d0001/f100.txt, content: "edit"}}]\n  - text: done\n' \
  > "$dir/jobs/writes.script.yaml"
for s in answer writes; do
  printf 'version: 1\nname: %s\nmodel: {provider: script, name: m, script: %s.script.yaml}\nprompt: work\npermissions: {mode: auto}\nlimits: {max_turns: 30, timeout: 10m}\n' \
    "$s" "$s" > "$dir/jobs/$s.yaml"
done

for s in $SCENARIOS; do
  for i in $(seq "$RUNS"); do
    for bin in "$BIN" ${BIN_B:+"$BIN_B"}; do
      # Back to the commit with no earlier run's references, then every file touched.
      (cd "$repo" && git reset -q --hard && git clean -qfdx &&
        git for-each-ref --format='delete %(refname)' refs/cn-run | git update-ref --stdin &&
        find . -path ./.git -prune -o -type f -exec touch {} +)
      rm -rf "$dir/out"
      load=$(cut -d' ' -f1 /proc/loadavg)
      t0=$(date +%s.%N)
      (cd "$repo" && "$bin" --quiet --out "$dir/out" "$dir/jobs/$s.yaml" >/dev/null 2>"$dir/stderr") ||
        { tail -n 20 "$dir/stderr" >&2; exit 1; }
      t1=$(date +%s.%N)
      python3 - "$dir/out" "$t0" "$t1" "$s" "$bin" "$load" <<'PY'
import datetime, json, sys
out, t0, t1, scenario, binary, load = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), *sys.argv[4:]
ts = lambda e: datetime.datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()
events = [json.loads(line) for line in open(f"{out}/events.jsonl")]
first = next(e for e in events if e["type"] == "turn.started")
print(json.dumps({"scenario": scenario, "bin": binary, "wall_ms": round((t1 - t0) * 1000),
                  "first_request_ms": round((ts(first) - t0) * 1000), "load": float(load),
                  "status": json.load(open(f"{out}/result.json"))["status"]}))
PY
    done
  done
done
