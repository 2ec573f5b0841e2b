#!/usr/bin/env bash
# GPU-machine runs for the native collector. Sections, any order:
#   validate  the eight workloads under the native and the torch collector (COLLS="cupti" for one)
#             (JSON + Markdown reports to compare), a plain CUDA program and
#             the clock handshake through CUDA_INJECTION64_PATH, a SIGKILLed run
#   inproc:W:N[:BLOCKS]  in-process paired on/off overhead on workload W
#             (scripts/bench_inproc.py): collector+spans, spans alone (TOGGLES)
#   checks    doctor, the default collector choice, a plain CUDA program, the
#             clock handshake, a SIGKILLed run; small raw recordings kept
#   ablate:W:N[:BLOCKS]  what each part of the collector costs on workload W
#             (N iterations per block; ONLY="floor default" limits the configs:
#             the default collector vs CUPTI kernel records alone)
#   bench:S   interleaved fresh-process rounds on scenario S (bench_overhead.py),
#             BUDGET seconds, ROUNDS, ARMS, EVERY, ITERS, WARM (seconds), PIN_MAIN
#             (a CPU of 4-7 for the timed thread alone), NOASLR=1, BSYNC=1 (GPU waits
#             sleep: instruction counts, where there is a PMU, hold CPU work only) (env)
#   suspect   the first `inferscope run`s after an in-process ablation, where a
#             negative launch→start median was seen twice: their raw recordings
#             and reports kept (suspect.tgz), then the clock handshake again
#   torcharms:W:N,...  in-process rotated rounds of bare, `--collector torch`
#             and plain torch.profiler (bench_inproc.py --arms torch), N
#             iterations per block of workload W
# Results go to $OUT as a few small files (reports.tgz, raw.tgz, inproc.jsonl,
# ablate.jsonl, torcharms.jsonl, bench_S.json).   bash scripts/device/run_cupti.sh validate inproc:cnn:10
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)
export PYTHONUNBUFFERED=1
IS=$PWD/dist/inferscope
OUT=${OUT:-$W/out}
mkdir -p "$OUT" "$W/rep" "$W/raw"
quiet() { grep -v -E '^(USDT|ERROR|WARNING|STAGE):|_warn_once|UserWarning' | tail -3 | cut -c1-400; }

run() { local coll=$1 name=$2; shift 2
  local t0=$SECONDS
  $IS run --collector "$coll" --keep-raw --output-dir "$W/o-$coll-$name" --report "$W/rep/$coll-$name.json" -- "$@" 2>&1 | quiet
  local tr=$(ls "$W/o-$coll-$name"/trace_*.json 2>/dev/null | head -1)
  [ -n "$tr" ] && $IS analyze "$tr" -o "$W/rep/$coll-$name.md" 2>&1 | tail -1
  if [ "$coll" = cupti ]; then mkdir -p "$W/raw/$name"; cp "$W/o-$coll-$name"/.raw/*/* "$W/raw/$name/" 2>/dev/null; fi
  rm -rf "$W/o-$coll-$name"
  echo "== $coll $name: $((SECONDS - t0)) s"
}

# The clock handshake (native/cupti/test/clockcheck.cu) through
# CUDA_INJECTION64_PATH: its recording and handshakes kept under $W/raw.
clockcheck() {
  nvcc -O2 -o "$W/clockcheck" native/cupti/test/clockcheck.cu && {
    $IS run --collector cupti --keep-raw --output-dir "$W/o-clock" --report "$W/rep/clockcheck.md" -- "$W/clockcheck" 50 >"$W/raw/clockcheck.jsonl" 2>"$W/rep/clockcheck.err"
    mkdir -p "$W/raw/clockcheck"; cp "$W/o-clock"/.raw/*/* "$W/raw/clockcheck/"; tail -1 "$W/raw/clockcheck.jsonl"; }
}

# A plain CUDA program and the clock handshake through CUDA_INJECTION64_PATH,
# then a SIGKILL of the workload (not of inferscope) mid-run: the report must
# still come out. Raw recordings kept under $W/raw.
natives() {
  nvcc -O2 -o "$W/vecadd" native/cupti/test/vecadd.cu && run cupti vecadd "$W/vecadd"
  clockcheck
  ( $IS run --collector cupti --keep-raw --output-dir "$W/o-kill" --report "$W/rep/kill.md" -- python3 workloads/scenarios.py cnn --iters 3000 >"$W/rep/kill.log" 2>&1; echo "run exit $?" >>"$W/rep/kill.log" ) &
  sleep 16; pkill -KILL -f "^[^ ]*python3 workloads/scenarios.py cnn --iters 3000"; wait
  tail -2 "$W/rep/kill.log" | cut -c1-300
  mkdir -p "$W/raw/kill"; cp "$W/o-kill"/.raw/*/* "$W/raw/kill/" 2>/dev/null
}

# The collector library `run` uses here, built if needed (doctor knows which
# toolkit; a glob of the cache could pick a stale build of older sources).
cupti_lib() { $IS doctor --build --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["library"])'; }

validate() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  for coll in ${COLLS:-cupti torch}; do
    run $coll llm python3 workloads/scenarios.py llm --iters 3
    run $coll cnn python3 workloads/scenarios.py cnn --iters 20
    run $coll embedding python3 workloads/scenarios.py embedding --iters 20
    for p in tiny_kernels sync_in_loop pageable_h2d cpu_preprocess gpu_bound; do
      run $coll "planted_$p" python3 workloads/planted.py $p --iters 3
    done
  done
  natives
  tar czf "$OUT/reports.tgz" -C "$W" rep
  tar czf "$OUT/raw.tgz" -C "$W" --exclude=raw/llm --exclude=raw/kill raw # 16 MB per file comes back
  ls -la "$OUT"
}

# In-process paired on/off (scripts/bench_inproc.py), pinned: what --toggle
# names for each of TOGGLES (default "both spans": the collector with the
# automatic spans, i.e. what `inferscope run` adds in a Python process, and
# the spans alone; `churn` is the patch-toggling control).
inproc() {
  local lib=$(cupti_lib) w=$1 n=$2 blocks=${3:-100}
  for t in ${TOGGLES:-both spans}; do onoff inproc.jsonl "$t" "" "$lib" "$w" "$n" "$blocks" --toggle "$t"; done
}

# One in-process on/off run of scripts/bench_inproc.py, pinned, under the
# environment ENVS: its JSON line, tagged TAG, appended to $OUT/FILE, and a
# one-line summary.   onoff FILE TAG ENVS LIB W N BLOCKS [bench_inproc args...]
onoff() {
  local file=$1 tag=$2 envs=$3 lib=$4 w=$5 n=$6 blocks=$7; shift 7
  env $envs timeout 200 python3 scripts/bench_inproc.py "$w" --lib "$lib" --iters "$n" --blocks "$blocks" --settle 0.02 --pin 4-7 "$@" 2>"$W/onoff.err" |
    sed "s/^{/{\"tag\": \"$tag\", /" | grep '^{' >>"$OUT/$file" || { tail -3 "$W/onoff.err"; return; }
  tail -1 "$OUT/$file" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); r=d["recording"]; print(d["tag"], d["workload"], d["toggle"], d["rounds"], "rounds, on", d["on_median_ms"], "off", d["off_median_ms"], "added %.2f %%" % d["added_pct"], "iqr", d["paired_ratio_iqr"], "ci", d["paired_ratio_ci95"], *(["unstarted", d["unstarted_median_ms"]] if "unstarted_median_ms" in d else []), "api", r["records"].get("api", 0), "win", r["records"].get("launch_window", 0), "drops", r["dropped"])'
}

checks() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  $IS doctor --build 2>&1 | tail -14
  echo "== default collector"; $IS run --output-dir "$W/o-def" --report "$W/rep/default-cnn.md" -- python3 workloads/scenarios.py cnn --iters 5 2>&1 | grep -E "collector|ms per iteration" | cut -c1-200
  natives
  run cupti planted_sync_in_loop python3 workloads/planted.py sync_in_loop --iters 3
  run cupti embedding python3 workloads/scenarios.py embedding --iters 5
  du -sh "$W"/raw/*
  tar czf "$OUT/checks_rep.tgz" -C "$W" rep
  tar czf "$OUT/checks_raw.tgz" -C "$W" raw
}

# What each part of the collector costs, in-process paired on/off, pinned:
# the CUPTI kernel-record floor, + memcpy/memset records, + sync/memcpy
# callbacks, + sampled launch callbacks (the default), + every launch, and
# the previous default (every launch + OVERHEAD records).
ablate() {
  local lib=$(cupti_lib) w=$1 n=$2 blocks=${3:-40}
  local -a cfgs=("floor:INFERSCOPE_CUPTI_CALLBACKS=0 INFERSCOPE_CUPTI_KINDS=kernel"
    "records:INFERSCOPE_CUPTI_CALLBACKS=0" "sync-cb:INFERSCOPE_CUPTI_LAUNCH=0" "default:"
    "launch-all:INFERSCOPE_CUPTI_LAUNCH=all" "old-default:INFERSCOPE_CUPTI_LAUNCH=all INFERSCOPE_CUPTI_KINDS=kernel,memcpy,memset,overhead")
  for c in "${cfgs[@]}"; do
    [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" ${c%%:*} "* ]] && continue
    onoff ablate.jsonl "${c%%:*}" "${c#*:}" "$lib" "$w" "$n" "$blocks" --toggle cupti --pre-blocks 4
  done
}

torcharms() { # no native library in these processes: Kineto and it are both CUPTI clients
  for w in "$@"; do
    timeout 300 python3 scripts/bench_inproc.py "${w%%:*}" --arms torch --iters "${w##*:}" --blocks "${TBLOCKS:-45}" --pin 4-7 2>"$W/torcharms.err" | grep '^{' >>"$OUT/torcharms.jsonl" &&
      tail -1 "$OUT/torcharms.jsonl" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["workload"], d["rounds"], "rounds, bare", d["bare_median_ms"], *("%s %s %+.2f%% ci %s" % (k, v["median_ms"], v["added_pct"], v["paired_ratio_ci95"]) for k, v in d["arms"].items()), "spans", d["recording"]["spans"])' ||
      tail -3 "$W/torcharms.err"
  done
}

bench() { python3 scripts/bench_overhead.py "$1" --rounds "${ROUNDS:-30}" --budget-s "${BUDGET:-500}" --arms "${ARMS:-bare,native,torch,profiler}" \
  --every "${EVERY:-torch:3,profiler:3}" --pin 4-7 ${PIN_MAIN:+--pin-main $PIN_MAIN} ${ITERS:+--iters $ITERS} ${WARM:+--warm-s $WARM} \
  ${NOASLR:+--no-aslr} ${BSYNC:+--blocking-sync} --out "$OUT/bench_$1.json" 2>&1 | tail -4 | cut -c1-600; }

launch_delay() { python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metrics"]; print("launch->start median us", m.get("launch_to_start_median_us"), "launch calls", m.get("launch_calls"))' "$1"; }

suspect() {
  ONLY=default ablate cnn 10 8
  for i in 1 2; do run cupti "susp_cnn_$i" python3 workloads/scenarios.py cnn --iters 20; launch_delay "$W/rep/cupti-susp_cnn_$i.json"; done
  run cupti susp_tiny python3 workloads/planted.py tiny_kernels --iters 3; launch_delay "$W/rep/cupti-susp_tiny.json"
  clockcheck
  tar czf "$OUT/suspect.tgz" -C "$W" rep raw
}

for s in "$@"; do
  case $s in
    validate) validate ;;
    inproc:*) IFS=: read -r _ w n b <<<"$s"; inproc "$w" "$n" "$b" ;;
    checks) checks ;;
    suspect) suspect ;;
    ablate:*) IFS=: read -r _ w n b <<<"$s"; ablate "$w" "$n" "$b" ;;
    torcharms:*) IFS=, read -ra ws <<<"${s#torcharms:}"; torcharms "${ws[@]}" ;;
    bench:*) bench "${s#bench:}" ;;
  esac
done
