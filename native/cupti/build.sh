#!/bin/sh
# Builds libinferscope_cupti.so against the CUPTI found under $CUDA
# (default /usr/local/cuda), or against CUPTI_INC (the dir of cupti.h),
# CUDA_INC (the dirs of cuda.h and crt/host_defines.h when elsewhere,
# space-separated) and CUPTI_LIB (the dir of libcupti.so*), as pip's
# nvidia-cuda-* wheels lay them out. The
# activity record structs are versioned (CUpti_ActivityKernelN ...); the
# newest version each header declares is picked here so one source builds
# against CUDA 11.8 .. 13.x.
set -e
CUDA=${CUDA:-/usr/local/cuda}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/libinferscope_cupti.so}
HDIRS=""
if [ -n "$CUPTI_INC" ]; then
  [ -f "$CUPTI_INC/cupti.h" ] && HDIRS=$CUPTI_INC
else
  for d in "$CUDA/include" "$CUDA/extras/CUPTI/include"; do
    [ -f "$d/cupti.h" ] && HDIRS="$HDIRS $d"
  done
  [ -f "$CUDA/include/cuda.h" ] && CUDA_INC=${CUDA_INC:-$CUDA/include}
fi
[ -n "$HDIRS" ] || { echo "cupti.h not found under ${CUPTI_INC:-$CUDA}" >&2; exit 1; }
INC=""
for d in $HDIRS $CUDA_INC; do
  case "$INC " in *" -I$d "*) ;; *) INC="$INC -I$d" ;; esac
done
LIBDIR=""
for d in ${CUPTI_LIB:-"$CUDA/lib64" "$CUDA/extras/CUPTI/lib64" "$CUDA/targets/x86_64-linux/lib"}; do
  ls "$d"/libcupti.so* >/dev/null 2>&1 && { LIBDIR=$d; break; }
done
[ -n "$LIBDIR" ] || { echo "libcupti.so not found under ${CUPTI_LIB:-$CUDA}" >&2; exit 1; }
# pip wheels ship only libcupti.so.NN, without the unversioned link -lcupti needs.
LINK=-lcupti
[ -e "$LIBDIR/libcupti.so" ] || LINK="-l:$(cd "$LIBDIR" && ls libcupti.so.* | head -1)"
HDRS=$(for d in $HDIRS; do ls "$d"/cupti*.h; done)
latest() { # newest "} NAMEn;" typedef in the headers
  grep -ohE "\}[[:space:]]*$1[0-9]*[[:space:]]*;" $HDRS | grep -oE "$1[0-9]*" | sort -V | tail -1
}
K=$(latest CUpti_ActivityKernel); M=$(latest CUpti_ActivityMemcpy); S=$(latest CUpti_ActivityMemset)
Y=$(latest CUpti_ActivitySynchronization); O=$(latest CUpti_ActivityOverhead)
DEFS="-DIS_KERNEL_T=$K -DIS_MEMCPY_T=$M -DIS_MEMSET_T=$S -DIS_SYNC_T=$Y -DIS_OVERHEAD_T=$O"
echo "structs: $K $M $S $Y $O; libcupti in $LIBDIR"
gcc -shared -fPIC -O2 -fvisibility=hidden -Wall -Wno-unused-function $INC $DEFS "$HERE/inferscope_cupti.c" -o "$OUT" \
  -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" $LINK -lpthread -lstdc++
echo "built $OUT"
