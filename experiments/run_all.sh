#!/usr/bin/env bash
# Every paper result: run each named experiment's sweep, collect it, draw every figure.
#
# Usage: experiments/run_all.sh [--quick] [--out DIR] [--publish] [extra overrides, e.g. hydra/launcher=joblib]
#   --out DIR   sweeps go to DIR/multirun/<name>, tables to DIR/results/<name>.csv, figures to DIR/figures
#               (default: a fresh outputs/run_all/<timestamp>). Rerunning with the same DIR skips the
#               sweep points that already completed.
#   --quick     every experiment at small scale (python -m asrpt_bench.quick: debug=tiny, seed 0, two
#               values of the first swept key), a few minutes; checks the pipeline, never publishable.
#   --publish   after a full run without failures, copy the tables over the committed results/, redraw
#               paper_figures/ and regenerate REPRODUCTION.md and the generated blocks of README.md and
#               docs/*.md from them. Without it, results/,
#               paper_figures/ and REPRODUCTION.md are never written.
#   PYTHON      environment variable: the interpreter that runs everything (default: the python3 of PATH,
#               else python); use the one that has asrpt_bench installed, e.g. PYTHON=.venv/bin/python.
# Exit status: 0 when every experiment ran, collected and drew; 1 when any did not (the others still run);
# 2 for bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
fail() { echo "run_all.sh: error: $1" >&2; exit 2; }

quick=0
publish=0
out=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --publish) publish=1 ;;
    --out) [ $# -ge 2 ] || fail "--out needs a directory"; out="$2"; shift ;;
    --out=*) out="${1#--out=}" ;;
    -h|--help) usage; exit 0 ;;
    -*) fail "unknown option $1 (see --help)" ;;
    *) extra+=("$1") ;;
  esac
  shift
done
[ "$quick" = 1 ] && [ "$publish" = 1 ] && fail "--publish needs the full runs; --quick numbers are never published"
PYTHON="${PYTHON:-$(command -v python3 || command -v python)}"
"$PYTHON" -c "import asrpt_bench" 2>/dev/null || fail "$PYTHON cannot import asrpt_bench; install it (pip install -e .) or set PYTHON=/path/to/the/venv/python"
out="${out:-outputs/run_all/$(date +%Y-%m-%d_%H-%M-%S)}"
mkdir -p "$out/results"
if [ "$publish" = 0 ] && [ "$(realpath "$out/results")" = "$(realpath results)" ]; then
  fail "--out $out would write over the committed results/; pass --publish to do that on purpose"
fi

APP=("$PYTHON" -m asrpt_bench.cli)
mapfile -t EXPERIMENTS < <("$PYTHON" -m asrpt_bench.quick --list)
failed=()
for name in "${EXPERIMENTS[@]}"; do
  echo "== ${name}"
  if [ "$quick" = 1 ]; then
    mapfile -t args < <("$PYTHON" -m asrpt_bench.quick "$name")
  else
    args=("experiment=${name}")
  fi
  if ! "${APP[@]}" -m "${args[@]}" progress=false "hydra.sweep.dir=${out}/multirun/${name}" ${extra[@]+"${extra[@]}"}; then
    failed+=("${name} (sweep)")
  fi
  if ! "$PYTHON" -m asrpt_bench.collect "${out}/multirun/${name}" --out "${out}/results/${name}.csv"; then
    failed+=("${name} (collect)")
  fi
done
partial=()
[ "$quick" = 1 ] && partial=(--partial-sweep)  # quick sweeps cover two values of one key
if ! "$PYTHON" -m asrpt_bench.report.figures --results "${out}/results" --out "${out}/figures" --all ${partial[@]+"${partial[@]}"}; then
  failed+=("figures")
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_all.sh: error: not done: ${failed[*]}; outputs in ${out}" >&2
  exit 1
fi
if [ "$publish" = 1 ]; then
  cp "${out}"/results/*.csv results/
  for table in "${out}"/results/*.csv; do  # a table above 4 MB is committed gzipped (report/table_check.table_path)
    table="results/$(basename "$table")"  # in one form only: the report refuses NAME.csv beside NAME.csv.gz
    if [ "$(wc -c < "$table")" -gt 4000000 ]; then gzip -n -9 -f "$table"; else rm -f "${table}.gz"; fi
  done
  "$PYTHON" -m asrpt_bench.report.figures --results results --out paper_figures --all
  "$PYTHON" -m asrpt_bench.report.reproduction --results results --out REPRODUCTION.md --docs .
fi
echo "run_all.sh: every experiment ran; tables in ${out}/results, figures in ${out}/figures"
