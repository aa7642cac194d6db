#!/usr/bin/env bash
# Runs fuzz targets one after another, each for SECONDS (default 60: about six minutes for
# all six). New inputs go to fuzz/work/<target> (ignored by git); the seeds in
# fuzz/corpus/<target> are read, never written. A crash stops the script and leaves the
# input in fuzz/artifacts/<target>/.
#
#   fuzz/run.sh                # build, then every target for 60 s
#   fuzz/run.sh 600 job_file   # one target, 10 minutes
#
# It builds once, then runs the built binaries, so edits made to the crate while it runs
# (on a shared checkout) do not trigger a rebuild before every target.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
cargo +nightly fuzz build
bin="fuzz/target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"
for target in "${targets[@]}"; do
    mkdir -p "fuzz/work/$target" "fuzz/artifacts/$target"
    "$bin/$target" "fuzz/work/$target" "fuzz/corpus/$target" \
        -artifact_prefix="fuzz/artifacts/$target/" -max_total_time="$secs" \
        -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
done
