// Clock-sync check for the CUPTI collector: CPU moments that must bracket a
// GPU kernel's recorded start and end.
//
// Each trial launches `handshake`, which sets a flag in mapped host memory as
// soon as it runs and then spins until the host releases it. The host reads
// CLOCK_MONOTONIC right after it sees the flag (`seen`: the kernel had already
// started) and right before it writes the release (`release`: the kernel has
// not ended yet). With a correct CUPTI→monotonic mapping every recorded
// kernel has start <= seen and end >= release; the slack on each side is the
// PCIe round trip. Prints one JSON line per trial for the Go test.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void handshake(volatile int *flag, volatile int *release, int seq) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    *flag = seq;
    __threadfence_system();
    while (*release != seq) {
    }
  }
}

static unsigned long long mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv) {
  int trials = argc > 1 ? atoi(argv[1]) : 50;
  volatile int *hflag, *hrel;
  int *dflag, *drel;
  cudaSetDeviceFlags(cudaDeviceMapHost);
  if (cudaHostAlloc((void **)&hflag, sizeof(int), cudaHostAllocMapped) != cudaSuccess ||
      cudaHostAlloc((void **)&hrel, sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
    fprintf(stderr, "clockcheck: cudaHostAlloc failed\n");
    return 1;
  }
  *hflag = 0;
  *hrel = 0;
  cudaHostGetDevicePointer((void **)&dflag, (void *)hflag, 0);
  cudaHostGetDevicePointer((void **)&drel, (void *)hrel, 0);
  for (int i = 1; i <= trials; i++) {
    handshake<<<1, 1>>>(dflag, drel, i);
    while (*hflag != i) {
    }
    unsigned long long seen = mono();
    unsigned long long until = seen + 20000; // let the kernel run ~20 µs
    while (mono() < until) {
    }
    unsigned long long rel = mono();
    __sync_synchronize();
    *hrel = i;
    cudaDeviceSynchronize();
    printf("{\"seq\":%d,\"seen_ns\":%llu,\"release_ns\":%llu}\n", i, seen, rel);
  }
  return 0;
}
