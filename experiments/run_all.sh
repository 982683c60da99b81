#!/usr/bin/env bash
# Every paper result: run each named sweep, collect it into results/, redraw paper_figures/.
# Usage: experiments/run_all.sh [extra overrides, e.g. debug=tiny or hydra/launcher=joblib]
# Re-running skips sweep points whose run directory is already complete.
set -euo pipefail
cd "$(dirname "$0")/.."
APP=(python -m asrpt_bench.cli)
EXPERIMENTS=(compare_default fig4_prediction_error fig6_num_jobs fig7_single_gpu_share
             placement_heavy_edge_vs_ilp sensitivity
             theory_ratio_vs_bound theory_trace_ratio adversarial_search
             ablation_novelty_bias ablation_placement ablation_backfill
             regime_map regime_map_novelty injection_study)
for name in "${EXPERIMENTS[@]}"; do
  echo "== ${name}"
  "${APP[@]}" -m "experiment=${name}" progress=false "$@"
  python -m asrpt_bench.collect "multirun/${name}" --out "results/${name}.csv"
done
python -m asrpt_bench.report.figures --results results --out paper_figures
