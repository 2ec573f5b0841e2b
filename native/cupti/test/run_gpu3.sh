#!/bin/bash
# Third GPU pass: new defaults (no SYNCHRONIZATION activity, writer-driven flush);
# SIGKILL after CUDA init must now keep activity records; overhead split.
C=${C:-.cupti-carry}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/log3.txt) 2>&1
sh $C/native/cupti/build.sh /tmp/libinferscope_cupti.so || exit 1
LIB=/tmp/libinferscope_cupti.so
nvcc -O2 -o /tmp/vecadd $C/native/cupti/test/vecadd.cu || exit 1
R=/tmp/raw; rm -rf $R; mkdir -p $R/vecadd $R/torch $R/kill $R/ovh
INFERSCOPE_RAW_DIR=$R/vecadd CUDA_INJECTION64_PATH=$LIB /tmp/vecadd
INFERSCOPE_RAW_DIR=$R/torch CUDA_INJECTION64_PATH=$LIB python3 -c 'import torch
a=torch.randn(256,256,device="cuda"); h=torch.randn(1<<20); p=h.pin_memory()
s=0.0
for i in range(200):
    a=torch.tanh(a@a*0.01); s+=a[0,0].item()
x=h.to("cuda"); y=p.to("cuda",non_blocking=True); torch.cuda.synchronize(); z=x.cpu()
print("torch ok", s)'
INFERSCOPE_RAW_DIR=$R/kill CUDA_INJECTION64_PATH=$LIB python3 -u -c 'import torch,time
a=torch.randn(256,256,device="cuda"); print("cuda up", flush=True); n=0
while True:
    a=torch.tanh(a@a*0.01); a[0,0].item(); time.sleep(0.02); n+=1
    if n%50==0: print("iter",n,flush=True)' &
P=$!
for i in $(seq 60); do sleep 0.25; grep -q "iter 150" $OUT/log3.txt && break; done
kill -KILL $P; wait $P; echo "kill rc=$?"
ls -la $R/*/
cp $R/vecadd/cupti-*.bin $OUT/vecadd.bin; cp $R/torch/cupti-*.bin $OUT/torch.bin; cp $R/kill/cupti-*.bin $OUT/kill.bin
arm() { local tag=$1; shift; env "$@" python3 $C/native/cupti/test/overhead.py $W $ARGS | sed "s/^/$tag /"; }
for i in $(seq 5); do
  for W in tiny_kernels sync_in_loop; do
    ARGS="1 5"; [ $W = sync_in_loop ] && ARGS="1 3"
    arm BARE X=1
    arm DEFAULT INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB
    arm KERNELONLY INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB INFERSCOPE_CUPTI_CALLBACKS=0 INFERSCOPE_CUPTI_KINDS=kernel
    arm NOLAUNCHCB INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB INFERSCOPE_CUPTI_LAUNCH=0
    arm NOMEMCPY INFERSCOPE_RAW_DIR=$R/ovh CUDA_INJECTION64_PATH=$LIB INFERSCOPE_CUPTI_KINDS=kernel,memset,overhead
  done
done
python3 - <<'PY'
import re,statistics,collections,os
d=collections.defaultdict(list)
for l in open(os.environ.get("OUT","/tmp/out")+"/log3.txt"):
    m=re.match(r"(\w+) OVH (\S+) ([\d.]+)",l)
    if m: d[(m.group(2),m.group(1))].append(float(m.group(3)))
for k in sorted(d): v=d[k]; print("SUMMARY",k,"n=%d median=%.2f min=%.2f max=%.2f"%(len(v),statistics.median(v),min(v),max(v)))
PY
