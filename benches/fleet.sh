#!/usr/bin/env bash
# 20 scripted jobs with --parallel 4 on one repository, each in its own worktree: the peak
# memory (max RSS) of the cn-run process and the wall time. Needs a release build and
# GNU time: cargo build --release && benches/fleet.sh
set -euo pipefail
BIN=${BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/cn-run}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/repo" "$dir/jobs"
for i in $(seq 1000); do mkdir -p "$dir/repo/src/m$((i / 50))"; echo "fn f$i() {}" > "$dir/repo/src/m$((i / 50))/f$i.rs"; done
( cd "$dir/repo" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm base )
for n in $(seq 20); do
  cat > "$dir/jobs/s$n.yaml" <<SCRIPT
turns:
  - tool_calls: [{name: Read, arguments: {filepath: src/m1/f$n.rs}}]
  - tool_calls: [{name: Write, arguments: {filepath: out$n.txt, content: "job $n"}}]
  - tool_calls: [{name: Bash, arguments: {command: "ls src | wc -l"}}]
  - text: job $n done
SCRIPT
  printf 'version: 1\nname: job%s\nmodel: {provider: script, name: m, script: s%s.yaml}\nprompt: work\npermissions: {mode: auto}\n' "$n" "$n" > "$dir/jobs/job$n.yaml"
done
cd "$dir/repo"
/usr/bin/time -f "20 jobs, --parallel 4: wall %e s, peak RSS %M KB" "$BIN" --quiet --parallel 4 --format json "$dir"/jobs/job*.yaml > "$dir/summary.json"
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('exit', s['exit_code'], 'jobs', s['jobs'], 'statuses', sorted(set(r['status'] for r in s['results'])))" "$dir/summary.json"
