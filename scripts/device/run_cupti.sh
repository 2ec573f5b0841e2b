#!/usr/bin/env bash
# On the GPU machine: the eight workloads under the native collector and
# under the torch collector (reports to compare), a plain CUDA program and
# the clock handshake through CUDA_INJECTION64_PATH, a SIGKILLed run, and a
# short overhead probe. Everything lands in $OUT/cupti.tar.
#   bash scripts/device/run_cupti.sh [quick]
set -u
cd "$(dirname "$0")/../.."
E=$(mktemp -d)/cupti
mkdir -p "$E/raw"
export PYTHONUNBUFFERED=1
IS=./dist/inferscope
quiet() { grep -v -E '^(USDT|ERROR|WARNING|STAGE):|_warn_once' | tail -4; }
run() { local coll=$1 name=$2; shift 2
  echo "== $coll $name"
  local t0=$SECONDS
  $IS run --collector "$coll" --keep-raw --output-dir "$E/out-$coll-$name" --report "$E/$coll-$name.json" -- "$@" 2>&1 | quiet
  local tr=$(ls "$E/out-$coll-$name"/trace_*.json 2>/dev/null | head -1)
  [ -n "$tr" ] && $IS analyze "$tr" -o "$E/$coll-$name.md" 2>&1 | tail -1
  echo "   wall $((SECONDS - t0)) s"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for coll in cupti torch; do
  run $coll llm python3 workloads/scenarios.py llm --iters 5
  run $coll cnn python3 workloads/scenarios.py cnn --iters 20
  run $coll embedding python3 workloads/scenarios.py embedding --iters 20
  for p in tiny_kernels sync_in_loop pageable_h2d cpu_preprocess gpu_bound; do
    run $coll "planted_$p" python3 workloads/planted.py $p --iters 3
  done
done
nvcc -O2 -o "$E/vecadd" native/cupti/test/vecadd.cu && run cupti vecadd "$E/vecadd"
nvcc -O2 -o "$E/clockcheck" native/cupti/test/clockcheck.cu &&
  $IS run --collector cupti --keep-raw --output-dir "$E/out-clock" --report "$E/clockcheck.md" -- "$E/clockcheck" 50 >"$E/clockcheck.jsonl" 2>"$E/clockcheck.err"
tail -2 "$E/clockcheck.jsonl"; tail -3 "$E/clockcheck.err"
# SIGKILL of the workload mid-run: the report must still come out
( $IS run --collector cupti --keep-raw --output-dir "$E/out-kill" --report "$E/kill.md" -- python3 workloads/scenarios.py llm --iters 40 >"$E/kill.log" 2>&1; echo "run exit $?" >>"$E/kill.log" ) &
sleep 25; pkill -KILL -f "scenarios.py llm --iters 40"; wait
tail -3 "$E/kill.log"
# keep the raw native recordings (small ones go to testdata)
for d in "$E"/out-cupti-* "$E"/out-clock "$E"/out-kill; do
  n=$(basename "$d"); mkdir -p "$E/raw/$n"; cp "$d"/.raw/*/* "$E/raw/$n/" 2>/dev/null
done
rm -rf "$E"/out-*
if [ "${1:-}" != quick ]; then
  timeout 200 python3 scripts/bench_overhead.py cnn --rounds 3 --pin 4-7 --out "$E/probe_cnn.json" 2>&1 | tail -5
fi
du -sh "$E"; ls "$E"
tar cf "$OUT/cupti.tar" -C "$(dirname "$E")" cupti
