#!/bin/bash
# One-shot GPU check for the CUPTI collector (run from the repo root that holds
# .cupti-carry/ or from the worktree root with C=.). Writes to $OUT.
C=${C:-.cupti-carry}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
set -x
nvidia-smi -L; ls /usr/local/cuda/lib64/libcupti* /usr/local/cuda/extras/CUPTI/lib64/ 2>&1 | head
sh $C/native/cupti/build.sh /tmp/libinferscope_cupti.so || exit 1
LIB=/tmp/libinferscope_cupti.so
nvcc -O2 -o /tmp/vecadd $C/native/cupti/test/vecadd.cu || exit 1
R=/tmp/raw; mkdir -p $R/vecadd $R/torch $R/ctypes $R/kill $R/ovh
/tmp/vecadd
INFERSCOPE_RAW_DIR=$R/vecadd CUDA_INJECTION64_PATH=$LIB /tmp/vecadd
TORCHW='import torch,time
a=torch.randn(256,256,device="cuda"); h=torch.randn(1<<20); p=h.pin_memory()
s=0.0
for i in range(200):
    a=torch.tanh(a@a*0.01); s+=a[0,0].item()
x=h.to("cuda"); y=p.to("cuda",non_blocking=True); torch.cuda.synchronize(); z=x.cpu()
print("torch ok", s)'
INFERSCOPE_RAW_DIR=$R/torch CUDA_INJECTION64_PATH=$LIB python3 -c "$TORCHW"
INFERSCOPE_RAW_DIR=$R/ctypes python3 -c "
import ctypes; lib=ctypes.CDLL('$LIB'); print('start', lib.inferscope_cupti_start(b'$R/ctypes'))
$TORCHW
print('stop', lib.inferscope_cupti_stop())"
KILLW='import torch,time
a=torch.randn(256,256,device="cuda"); t=time.time()
while True:
    a=torch.tanh(a@a*0.01); a[0,0].item(); time.sleep(0.001)'
INFERSCOPE_RAW_DIR=$R/kill CUDA_INJECTION64_PATH=$LIB timeout -s KILL 4 python3 -c "$KILLW"; echo "kill rc=$?"
ls -la $R/*/
cp $R/vecadd/cupti-*.bin $OUT/vecadd.bin; cp $R/torch/cupti-*.bin $OUT/torch.bin
cp $R/ctypes/cupti-*.bin $OUT/ctypes.bin; cp $R/kill/cupti-*.bin $OUT/kill.bin
# overhead: interleaved rounds; planted.py's own time (includes CUDA init) and a warm median
for i in $(seq 8); do
  echo "ROUND $i"
  python3 workloads/planted.py tiny_kernels --iters 3 | sed 's/^/BARE /'
  INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB python3 workloads/planted.py tiny_kernels --iters 3 | sed 's/^/CUPTI /'
  python3 $C/native/cupti/test/overhead.py tiny_kernels 1 5 | sed 's/^/BARE /'
  INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB python3 $C/native/cupti/test/overhead.py tiny_kernels 1 5 | sed 's/^/CUPTI /'
  INFERSCOPE_CUPTI_LAUNCH=0 INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB python3 $C/native/cupti/test/overhead.py tiny_kernels 1 5 | sed 's/^/NOLAUNCH /'
done
for i in $(seq 4); do
  python3 $C/native/cupti/test/overhead.py sync_in_loop 1 3 | sed 's/^/BARE /'
  INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB python3 $C/native/cupti/test/overhead.py sync_in_loop 1 3 | sed 's/^/CUPTI /'
done
ls -la $R/ovh | tail -3; du -sh $R/ovh
set +x
python3 - <<'PY'
import re,statistics,collections
d=collections.defaultdict(list)
for l in open("/tmp/out/log.txt" if False else __import__("os").environ.get("OUT","/tmp/out")+"/log.txt"):
    m=re.match(r"(BARE|CUPTI|NOLAUNCH) (?:OVH (\S+) ([\d.]+)|(\S+) on cuda: ([\d.]+) ms)",l)
    if m:
        if m.group(2): d[(m.group(2)+"-warm",m.group(1))].append(float(m.group(3)))
        else: d[(m.group(4)+"-cold",m.group(1))].append(float(m.group(5)))
for k in sorted(d): v=d[k]; print("SUMMARY",k,"n=%d median=%.2f min=%.2f max=%.2f"%(len(v),statistics.median(v),min(v),max(v)))
PY
