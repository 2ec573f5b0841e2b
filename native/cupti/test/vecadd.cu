// Tiny CUDA program for the CUPTI collector test: pageable and pinned H2D
// copies, a few kernels, a memset, cudaDeviceSynchronize, D2H.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  size_t bytes = n * sizeof(float);
  float *ha = (float *)malloc(bytes), *hb, *hc = (float *)malloc(bytes);
  cudaMallocHost(&hb, bytes);
  for (int i = 0; i < n; i++) { ha[i] = 1.0f; hb[i] = 2.0f; }
  float *da, *db, *dc;
  cudaMalloc(&da, bytes); cudaMalloc(&db, bytes); cudaMalloc(&dc, bytes);
  cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice);            // pageable H2D
  cudaMemcpyAsync(db, hb, bytes, cudaMemcpyHostToDevice, 0);    // pinned H2D
  cudaMemset(dc, 0, bytes);
  for (int k = 0; k < 5; k++) vecadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  cudaDeviceSynchronize();
  cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost);            // pageable D2H
  printf("vecadd: c[0]=%f c[n-1]=%f\n", hc[0], hc[n - 1]);
  cudaFree(da); cudaFree(db); cudaFree(dc); cudaFreeHost(hb); free(ha); free(hc);
  return 0;
}
