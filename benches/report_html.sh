#!/usr/bin/env bash
# report.html on big runs (issue 36 item 3): a 2,000-turn scripted run (each turn a Read and
# a Bash call with a line of output) and a run whose one Bash call prints 15 MB. For each it
# prints the page's size, the time `cn-run report RUN --html FILE` takes to fold events.jsonl
# into the page, and the time headless Chromium takes to open it (a fresh profile, `--dump-dom`,
# so the page is parsed, styled and laid out; a blank page's time is printed beside it, the
# browser's own start). RUNS=5 each, medians, with the load average.
#   cargo build --release && benches/report_html.sh
#   BIN=target/debug/cn-run benches/report_html.sh        (another build)
set -euo pipefail
BIN=$(realpath "${BIN:-$(dirname "$0")/../target/release/cn-run}")
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
TURNS=${TURNS:-2000}
RUNS=${RUNS:-5}
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "kept in $dir" >&2 || trap 'rm -rf "$dir"' EXIT

mkdir -p "$dir/long" "$dir/big"
python3 - "$dir" "$TURNS" <<'PY'
import sys
root, turns = sys.argv[1], int(sys.argv[2])
with open(f"{root}/long/s.yaml", "w") as f:
    f.write("turns:\n")
    for i in range(1, turns + 1):
        f.write(f"  - text: step {i}\n    tool_calls: [{{name: Read, arguments: {{filepath: a.txt}}}}, "
                f"{{name: Bash, arguments: {{command: 'echo line {i}'}}}}]\n")
    f.write("  - text: done\n")
with open(f"{root}/long/job.yaml", "w") as f:
    f.write("version: 1\nname: long\nmodel: {provider: script, name: m, script: s.yaml, context_length: 100000000}\n"
            f"prompt: go\npermissions: {{mode: auto}}\nlimits: {{max_turns: {turns + 5}}}\ngit: {{checkpoints: false}}\n")
with open(f"{root}/long/a.txt", "w") as f:
    f.write("a\n")
with open(f"{root}/big/s.yaml", "w") as f:
    f.write("turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'seq 1 2100000'}}]\n  - text: counted\n")
with open(f"{root}/big/job.yaml", "w") as f:
    f.write("version: 1\nname: big\nmodel: {provider: script, name: m, script: s.yaml, context_length: 100000000}\n"
            "prompt: count\npermissions: {mode: auto}\ngit: {checkpoints: false}\n"
            "tools: {bash: {max_output_chars: 20000000, max_output_lines: 3000000}}\n")
PY
printf '<!DOCTYPE html><title>blank</title>\n' > "$dir/blank.html"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { python3 -c 'import time; print(int(time.monotonic()*1000))'; }
open_ms() {
  local start end profile
  profile=$(mktemp -d)
  start=$(ms)
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile/p" \
    --dump-dom "file://$1" >/dev/null 2>&1
  end=$(ms)
  rm -rf "$profile"
  echo $((end - start))
}

for shape in long big; do
  (cd "$dir/$shape" && "$BIN" job.yaml --out out --quiet >/dev/null) || true
  report=() browser=()
  for _ in $(seq "$RUNS"); do
    start=$(ms); "$BIN" report "$dir/$shape/out" --html "$dir/$shape/page.html" >/dev/null; end=$(ms)
    report+=($((end - start)))
    browser+=("$(open_ms "$dir/$shape/page.html")")
  done
  blank=$(for _ in $(seq "$RUNS"); do open_ms "$dir/blank.html"; done | median)
  printf '%s: events.jsonl %s bytes, report.html %s bytes; cn-run report --html %s ms; chromium %s ms (blank page %s ms); load %s\n' \
    "$shape" "$(stat -c %s "$dir/$shape/out/events.jsonl")" "$(stat -c %s "$dir/$shape/page.html")" \
    "$(printf '%s\n' "${report[@]}" | median)" "$(printf '%s\n' "${browser[@]}" | median)" "$blank" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
done
