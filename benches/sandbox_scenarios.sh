#!/usr/bin/env bash
# The `tools20` and `bigread` scenarios of ../shared/bench (issue 16: whole runs with and
# without containment): cn-run on the harness's scripted OpenAI-compatible server, A with the
# Bash sandbox as shipped, B with `tools: {bash: {sandbox: off}}`, runs alternating A B A B,
# medians after a warm-up, report in $OUT/results.md. The harness runs both in a network
# namespace with only loopback, so it needs root (as the harness does). Builds the release
# binaries unless BIN is given. With BEFORE=path/to/an/older/cn-run, A is this build and B
# that one, both with the sandbox as shipped (issue 38: side by side with the build before):
#   benches/sandbox_scenarios.sh            (RUNS=9 OUT=/tmp/cn-run-sandbox-bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$(realpath "${BENCH:-$here/../../shared/bench}")
if [ -z "${BIN:-}" ]; then
  (cd "$here/.." && cargo build --release --bin cn-run --bin cn-run-call >&2)
  BIN=$here/../target/release/cn-run
fi
export BIN=$(realpath "$BIN")
export JOBS=$(mktemp -d)
trap 'rm -rf "$JOBS"' EXIT
port=${PORT:-8765}
for mode in shipped off; do
  extra=""
  [ "$mode" = off ] && extra='tools: {bash: {sandbox: "off"}}'
  cat > "$JOBS/$mode.yaml" <<YAML
version: 1
model: {provider: openai, name: gpt-4o, api_base: "http://127.0.0.1:$port/v1", api_key_env: BENCH_KEY}
prompt: "{{ params.prompt }}"
params: {prompt: {default: ""}}
permissions: {mode: auto}
$extra
YAML
done
[ -f "$bench/bigdata/big.log" ] || (cd "$bench" && python3 make_fixture.py >&2)
export BENCH_KEY=dummy
run() { printf '"%s" "$JOBS/%s.yaml" --param "prompt=$BENCH_PROMPT"' "${2:-\$BIN}" "$1"; }
cd "$bench"
export OUT=${OUT:-/tmp/cn-run-sandbox-bench} RUNS=${RUNS:-9} SCENARIOS=${SCENARIOS:-tools20 bigread}
if [ -n "${BEFORE:-}" ]; then
  LABEL_A=this LABEL_B=before ./run_pair.sh "$(run shipped)" "$(run shipped "$(realpath "$BEFORE")")"
else
  LABEL_A=sandbox LABEL_B=off ./run_pair.sh "$(run shipped)" "$(run off)"
fi
echo "report: ${OUT:-/tmp/cn-run-sandbox-bench}/results.md" >&2
