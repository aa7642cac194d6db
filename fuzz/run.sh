#!/usr/bin/env bash
# Runs fuzz targets one after another, each for SECONDS (default 60: about six minutes for
# all six). New inputs go to fuzz/work/<target> (ignored by git); the seeds in
# fuzz/corpus/<target> are read, never written. A crash stops the script and leaves the
# input in fuzz/artifacts/<target>/.
#
#   fuzz/run.sh                # build, then every target for 60 s
#   fuzz/run.sh 600 job_file   # one target, 10 minutes (only that target is built)
#   FUZZ_SANITIZER=none fuzz/run.sh 600 one_reading   # no AddressSanitizer: a cold build
#                              # takes about half as long and runs faster; finds logic bugs,
#                              # panics and hangs, not memory errors (safe Rust has few)
#
# It builds once, then runs the built binaries, so edits made to the crate while it runs
# (on a shared checkout) do not trigger a rebuild before every target.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
build=("${targets[@]}")
if [ "${#targets[@]}" -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
sanitizer="${FUZZ_SANITIZER:-address}"
if [ "${#build[@]}" -eq 1 ]; then
    cargo +nightly fuzz build -s "$sanitizer" "${build[0]}"
else
    cargo +nightly fuzz build -s "$sanitizer"
fi
bin="fuzz/target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"
for target in "${targets[@]}"; do
    mkdir -p "fuzz/work/$target" "fuzz/artifacts/$target"
    "$bin/$target" "fuzz/work/$target" "fuzz/corpus/$target" \
        -artifact_prefix="fuzz/artifacts/$target/" -max_total_time="$secs" \
        -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
done
