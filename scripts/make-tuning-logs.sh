#!/usr/bin/env bash
# Makes shipped tuning logs (tuning_logs/README.md): runs each job with tessel-tune (resuming from
# its logs in build/tuning/<job>/ when a run was stopped), then distills every job's logs into
# OUT/<job>.jsonl, the records of each task's best schedule.
#
#   scripts/make-tuning-logs.sh tuning_logs/llvm-znver5-2cores tuning_logs/jobs/ops_cpu.json ...
#
# Run it on an idle machine of the class the logs are for (the records name its target), at
# normal priority. TESSEL_BUILD_DIR: the build folder with tessel-tune (default build/release);
# TESSEL_TUNING_WORK: where the jobs' full logs go (default build/tuning).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 OUT_FOLDER JOB.json..." >&2
  exit 64
fi
out="$1"
shift
dir="${TESSEL_BUILD_DIR:-build/release}"
work="${TESSEL_TUNING_WORK:-build/tuning}"
tune="$dir/tools/tessel-tune/tessel-tune"
[ -x "$tune" ] || cmake --build "$dir" --target tessel-tune tessel-measure
export TESSEL_MEASURE_WORKER="${TESSEL_MEASURE_WORKER:-$PWD/$dir/tools/tessel-measure/tessel-measure}"
mkdir -p "$out" "$work"
for job in "$@"; do
  name="$(basename "$job" .json)"
  "$tune" run "$job" --log-dir "$work/$name"
  "$tune" distill "$work/$name" -o "$out/$name.jsonl"
done
