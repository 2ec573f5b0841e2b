#!/usr/bin/env bash
# Benchmarks of `inferscope analyze` (not tests): report time on the committed
# gpt2 H100 trace, and throughput + peak RSS on a ≥1 GB trace made by
# repeating it. Prints one line per measurement; medians of N runs.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-7}
BIG_MB=${BIG_MB:-1024}
TMP=${TMPDIR:-/tmp}/inferscope-bench
mkdir -p "$TMP"
CGO_ENABLED=0 go build -o dist/inferscope ./cmd/inferscope
zcat testdata/gpu/llm.json.gz > "$TMP/llm.json"

measure() { # file → "seconds maxrss_kb" per run
  for _ in $(seq "$N"); do
    /usr/bin/time -f "%e %M" ./dist/inferscope analyze "$1" --format json -o "$TMP/r.json" 2>&1 >/dev/null | tail -1
  done | sort -n | awk '{a[NR]=$1; m[NR]=$2} END {print a[int((NR+1)/2)], a[1], a[NR], m[int((NR+1)/2)]}'
}
report() { # label file
  local size; size=$(stat -c %s "$2")
  read -r med lo hi rss <<<"$(measure "$2")"
  awk -v l="$1" -v s="$size" -v med="$med" -v lo="$lo" -v hi="$hi" -v rss="$rss" 'BEGIN {
    printf "%s: %.1f MB, median %.2f s (min %.2f, max %.2f, n='"$N"'), %.0f MB/s, peak RSS %.0f MB (%.0f%% of file)\n",
      l, s/1048576, med, lo, hi, s/1048576/med, rss/1024, 100*rss*1024/s }'
}
report "gpt2 trace (gz)" testdata/gpu/llm.json.gz
report "gpt2 trace (json)" "$TMP/llm.json"
if [ ! -s "$TMP/big.json" ] || [ "$(stat -c %s "$TMP/big.json")" -lt $((BIG_MB * 1048576)) ]; then
  python3 scripts/make_big_trace.py testdata/gpu/llm.json.gz "$TMP/big.json" --min-mb "$BIG_MB"
fi
N=3 report "large trace" "$TMP/big.json"
