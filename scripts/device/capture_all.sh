#!/usr/bin/env bash
# On the GPU machine: capture Kineto traces of the 3 seed scenarios and the 5
# planted workloads, plus bare timings and machine facts, into $OUT.
set -u
W=workloads
T=$(mktemp -d)
cd "$(dirname "$0")/../.."
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv
  python3 -c 'import torch,transformers,sentence_transformers as s;print("torch",torch.__version__,"cuda",torch.version.cuda,"transformers",transformers.__version__,"st",s.__version__)'
  nproc; lscpu | grep -E 'Model name|NUMA'
} > "$T/machine.txt" 2>&1
for s in llm cnn embedding; do
  echo "== bare $s" >> "$T/bare.txt"
  python3 $W/scenarios.py $s --no-scope --iters 10 >> "$T/bare.txt" 2>&1
  python3 scripts/device/capture_kineto.py "$T/${s}.json" $W/scenarios.py $s --iters 3 > "$T/${s}.log" 2>&1
  echo "== profiled $s" >> "$T/bare.txt"; tail -1 "$T/${s}.log" >> "$T/bare.txt"
done
for p in pageable_h2d sync_in_loop tiny_kernels cpu_preprocess gpu_bound; do
  python3 scripts/device/capture_kineto.py "$T/planted_${p}.json" $W/planted.py $p --iters 3 > "$T/planted_${p}.log" 2>&1
  echo "== profiled $p" >> "$T/bare.txt"; tail -1 "$T/planted_${p}.log" >> "$T/bare.txt"
done
ls -la "$T" > "$T/ls.txt"
cd "$T" && tar czf "$OUT/logs.tgz" *.txt *.log && tar cf "$OUT/traces.tar" *.json.gz
ls -la "$OUT" "$T"; cat "$T/bare.txt"; cat "$T/machine.txt"
