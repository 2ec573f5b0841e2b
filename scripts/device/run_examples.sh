#!/usr/bin/env bash
# On the GPU machine: run the 3 seed scenarios and 5 planted workloads under
# `inferscope run` (binary carried in dist/), write Markdown + HTML reports
# and traces, tar them into $OUT/examples.tar.
set -u
cd "$(dirname "$0")/../.."
E=$(mktemp -d)/examples
mkdir -p "$E"
export PYTHONUNBUFFERED=1
run() { # name args...
  local name=$1; shift
  echo "== $name"
  ./dist/inferscope run --output-dir "$E/out" --report "$E/$name.md" -- python3 "$@" 2>&1 | grep -v -E '^(USDT|ERROR|WARNING|STAGE):' | tail -4
  local tr; tr=$(ls -t "$E"/out/trace_*.json | head -1)
  ./dist/inferscope analyze "$tr" -o "$E/$name.html" 2>&1 | tail -2
  gzip -9 -c "$tr" > "$E/trace_$name.json.gz" && rm -f "$tr"
}
for s in llm cnn embedding; do run "$s" workloads/scenarios.py "$s" --iters 5; done
for p in pageable_h2d sync_in_loop tiny_kernels cpu_preprocess gpu_bound; do run "planted_$p" workloads/planted.py "$p" --iters 3; done
rm -rf "$E/out"
ls -la "$E"
tar cf "$OUT/examples.tar" -C "$(dirname "$E")" examples
