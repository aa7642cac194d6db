#!/usr/bin/env bash
# cn-run's own cost before the first request and per turn, side by side with another build
# (issue 38): whole runs of the release binary on the scripted model (it answers at once, so
# every figure is cn-run's own work), with the Bash sandbox as shipped and with
# `sandbox: off`, the builds and settings alternated run by run. Scenarios:
#   answer     one answer, no tool: the whole run (wall) and the first request;
#   tools      20 tool turns on a small repository (List, Read, Search, Bash, MultiEdit like
#              ../shared/bench's tools20), then an answer: own cost per tool turn;
#   write100k  10 Write turns on a 100,000-file repository (benches/lib/big_repo.sh);
#   bash100k   10 Bash turns there, each changing a tracked file and adding one;
#   mixed100k  5 times a Bash turn like those, then a Read turn (which need not wait for
#              the Bash call's checkpoint: it changes nothing).
# Reported per scenario, build and setting (medians over the runs, with the load average):
#   wall         the whole process;
#   first        process start -> the first `turn.started` (what the first request waits);
#   turn         `turn.started` -> the next `turn.started`, every tool turn;
#   own/turn     the same less the tool's own `duration_ms` (cn-run's own cost per turn);
#   every turn   the median, 90th percentile and maximum of every tool turn of every run,
#                and the share within 20 ms;
#   first turn   the first tool turn alone (the start snapshot, the sandbox set-up);
#   shipped less off  per build, the median over run numbers of the difference in wall time
#                and first request between the two settings (each pair ran back to back);
#   paired       with BEFORE: per setting, the median over run numbers of this build's wall
#                time over the build before's, and of the difference in own cost a turn
#                (each pair ran back to back, so the machine's load is shared).
# events.jsonl timestamps have 1 ms resolution: per-turn figures are means over many turns.
# Where the time goes: CN_RUN_LOG=cn_run=debug prints `checkpoint-timing what=... us=...`
# (start, paths, paths_tree, scan) and `sandbox-timing what=... us=...` (namespaces, cgroup,
# holder (the run's sandbox started and entered), holder_and_report (and the probe through
# it), and `waited`: how long the first command waited for the set-up).
#   cargo build --release && BEFORE=/path/to/older/cn-run benches/turns.sh
#   (BIN: the build to measure, default target/release/cn-run; BEFORE: the build before,
#    optional; RUNS=7 FILES=100000 SCENARIOS="answer tools write100k bash100k mixed100k")
# Needs python3 and ~1 GB of disk for the large repository.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(realpath "${BIN:-$here/../target/release/cn-run}")
BEFORE=${BEFORE:+$(realpath "$BEFORE")}
RUNS=${RUNS:-7}
FILES=${FILES:-100000}
SCENARIOS=${SCENARIOS:-answer tools write100k bash100k mixed100k}
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "kept in $dir" >&2 || trap 'rm -rf "$dir"' EXIT

. "$here/lib/big_repo.sh"
small_repo() {
  mkdir -p "$1/src/app" "$1/web" "$1/docs"
  for i in $(seq 30); do printf 'def f%s(value):\n    return value * %s\n' "$i" "$i" > "$1/src/app/m$i.py"; done
  printf 'const listenPort = 8080\n' > "$1/web/server.go"
  printf '# usage\nrun it\n' > "$1/docs/usage.md"
  (cd "$1" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm base)
}

python3 - "$dir" <<'PY'
import json, sys
root = sys.argv[1]
def script(name, turns):
    with open(f"{root}/{name}.script.json", "w") as f:
        json.dump({"turns": [{"tool_calls": [c]} for c in turns] + [{"text": "done"}]}, f)
call = lambda name, **args: {"name": name, "arguments": args}
script("answer", [])
tools = []
for i in range(1, 5):
    tools += [call("List", dirpath="src/app"), call("Read", filepath=f"src/app/m{i}.py"),
              call("Search", pattern=f"f{i}"), call("Bash", command=f"grep -n value src/app/m{i}.py"),
              call("MultiEdit", file_path=f"src/app/m{i}.py",
                   edits=[{"old_string": f"def f{i}(", "new_string": f"def g{i}("}])]
script("tools", tools)
script("write100k", [call("Write", filepath=f"d{i:04}/f{i}00.txt", content=f"edit {i}") for i in range(1, 11)])
bash = lambda i: call("Bash", command=f"echo more >> d0020/f{2000 + i}.txt && echo new > new{i}.txt")
script("bash100k", [bash(i) for i in range(1, 11)])
script("mixed100k", [c for i in range(1, 6) for c in (bash(i), call("Read", filepath=f"d0030/f{3000 + i}.txt"))])
for s in ["answer", "tools", "write100k", "bash100k", "mixed100k"]:
    for mode in ["shipped", "off"]:
        extra = 'tools: {bash: {sandbox: "off"}}\n' if mode == "off" else ""
        with open(f"{root}/{s}-{mode}.yaml", "w") as f:
            f.write(f"version: 1\nname: {s}-{mode}\nmodel: {{provider: script, name: m, script: {s}.script.json}}\n"
                    f"prompt: work\npermissions: {{mode: auto}}\nlimits: {{max_turns: 40, timeout: 10m}}\n{extra}")
PY
small_repo "$dir/small"
case " $SCENARIOS " in *100k*) make_big_repo "$dir/big" "$FILES" ;; esac

# One run: start time, then the process; its figures as a JSON line.
measure() { # label repo job out run
  python3 - "$@" <<'PY'
import json, os, subprocess, sys, time
from datetime import datetime
label, repo, job, out, run = sys.argv[1:6]
bin_ = label.split("|")[0]
load = float(open("/proc/loadavg").read().split()[0])
t0 = time.time()
p = subprocess.run([bin_, "--quiet", "--out", out, job], cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = (time.time() - t0) * 1000
try:
    ev = [json.loads(l) for l in open(os.path.join(out, "events.jsonl"))]
except OSError:
    sys.exit(print(f"{label}: exit {p.returncode}, no events: {p.stderr.decode()[-400:]}", file=sys.stderr))
ts = lambda e: datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp() * 1000
starts = [i for i, e in enumerate(ev) if e["type"] == "turn.started"]
turns, own = [], []
for a, b in zip(starts, starts[1:]):
    tool = sum(e.get("duration_ms", 0) for e in ev[a:b] if e["type"] == "tool.finished")
    gap = ts(ev[b]) - ts(ev[a])
    turns.append(gap)
    own.append(gap - tool)
print(json.dumps({"label": label, "run": int(run), "status": p.returncode, "wall": wall, "load": load,
                  "first": ts(ev[starts[0]]) - t0 * 1000, "turns": turns, "own": own}))
PY
}

for s in $SCENARIOS; do
  repo=$dir/small; case $s in *100k) repo=$dir/big ;; esac
  : > "$dir/$s.jsonl"
  for i in $(seq 0 "$RUNS"); do # run 0 warms up and is not counted
    for b in "$BIN" ${BEFORE:+"$BEFORE"}; do
      for mode in shipped off; do
        (cd "$repo" && git reset -q --hard && git clean -qfdx)
        line=$(measure "$b|$mode" "$repo" "$dir/$s-$mode.yaml" "$dir/out-$i" "$i") || continue
        rm -rf "$dir/out-$i"
        [ "$i" -gt 0 ] && echo "$line" >> "$dir/$s.jsonl"
      done
    done
  done
  python3 - "$dir/$s.jsonl" "$s" "$BIN" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs) if xs else float("nan")
mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
print(f"== {sys.argv[2]}")
for label in dict.fromkeys(r["label"] for r in runs):
    rs = [r for r in runs if r["label"] == label]
    b, mode = label.split("|")
    who = "this build" if b == sys.argv[3] else "before"
    loads = [r["load"] for r in rs]
    line = (f"  {who:10} {mode:7} n={len(rs)} load {min(loads):.1f}-{max(loads):.1f}: "
            f"wall {med([r['wall'] for r in rs]):.1f} ms, first {med([r['first'] for r in rs]):.1f} ms")
    if sys.argv[2] == "mixed100k":
        reads = [t for r in rs for t in r["turns"][1::2]]
        line += f", Read turns after a Bash turn: median {med(reads):.0f} ms"
    every = sorted(t for r in rs for t in r["turns"])
    if every:
        within = sum(t <= 20 for t in every) / len(every)
        p90 = every[min(len(every) - 1, -(-9 * len(every) // 10) - 1)]
        line += (f", every turn: median {med(every):.0f} ms, p90 {p90:.0f} ms, max {every[-1]:.0f} ms,"
                 f" {within:.0%} within 20 ms")
    if any(r["turns"] for r in rs):
        line += (f", turn {med([mean(r['turns']) for r in rs]):.2f} ms, own/turn "
                 f"{med([mean(r['own']) for r in rs]):.2f} ms, first turn {med([r['turns'][0] for r in rs]):.0f} ms, "
                 f"max turn {med([max(r['turns']) for r in rs]):.0f} ms")
    print(line)
# Each build as shipped against `off` (the same run number, run one after the other): the
# median over runs of the difference in wall time and in the time to the first request.
for b in dict.fromkeys(r["label"].split("|")[0] for r in runs):
    by = {}
    for r in runs:
        if r["label"].split("|")[0] == b:
            by.setdefault(r["run"], {})[r["label"].split("|")[1]] = r
    both = [p for p in by.values() if len(p) == 2]
    if both:
        who = "this build" if b == sys.argv[3] else "before"
        print(f"  {who:10} shipped less off, n={len(both)}: wall "
              f"{med([p['shipped']['wall'] - p['off']['wall'] for p in both]):+.1f} ms, first "
              f"{med([p['shipped']['first'] - p['off']['first'] for p in both]):+.1f} ms")
# Paired with the build before (the same run number and setting, run one after the other):
# the median of the runs' ratios of wall time, and of their differences in own cost a turn.
for mode in ["shipped", "off"]:
    pairs = {}
    for r in runs:
        b, m = r["label"].split("|")
        if m == mode:
            pairs.setdefault(r["run"], {})["this" if b == sys.argv[3] else "before"] = r
    pairs = [p for p in pairs.values() if len(p) == 2]
    if not pairs:
        continue
    line = (f"  paired  {mode:7} n={len(pairs)}: wall x{med([p['this']['wall'] / p['before']['wall'] for p in pairs]):.2f}")
    if all(p["this"]["own"] and p["before"]["own"] for p in pairs):
        diff = med([mean(p["this"]["own"]) - mean(p["before"]["own"]) for p in pairs])
        line += f", own/turn {diff:+.2f} ms (this build less the one before)"
    print(line)
PY
done
