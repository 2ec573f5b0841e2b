#!/usr/bin/env bash
# On the GPU machine: workloads under `inferscope run --collector cupti`
# (library built on first use), a non-Python CUDA program through
# CUDA_INJECTION64_PATH, and a short interleaved overhead check.
set -u
cd "$(dirname "$0")/../.."
E=$(mktemp -d)/cupti
mkdir -p "$E"
export PYTHONUNBUFFERED=1
run() { local name=$1; shift
  echo "== $name"
  ./dist/inferscope run --collector cupti --output-dir "$E/out" --report "$E/$name.md" -- "$@" 2>&1 | grep -v -E '^(USDT|ERROR|WARNING|STAGE):|_warn_once' | tail -3
}
run llm python3 workloads/scenarios.py llm --iters 5
run cnn python3 workloads/scenarios.py cnn --iters 10
run embedding python3 workloads/scenarios.py embedding --iters 10
for p in tiny_kernels sync_in_loop pageable_h2d; do run "planted_$p" python3 workloads/planted.py $p --iters 3; done
nvcc -O2 -o "$E/vecadd" native/cupti/test/vecadd.cu && run vecadd "$E/vecadd"
rm -rf "$E/out"
for s in cnn embedding; do
  timeout 100 python3 scripts/bench_overhead.py $s --rounds 6 --iters 20 --arms bare,cupti --out "$E/overhead_$s.json" 2>&1 | tail -1
done
timeout 120 python3 scripts/bench_overhead.py llm --rounds 3 --iters 5 --arms bare,cupti --out "$E/overhead_llm.json" 2>&1 | tail -1
for f in "$E"/*.partial; do [ -f "$f" ] && cp "$f" "$E/"; done
ls -la "$E"
tar cf "$OUT/cupti.tar" -C "$(dirname "$E")" cupti
