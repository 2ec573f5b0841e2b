package analyze

import "strings"

// KernelClass groups kernels by what they do, from their (mangled or
// demangled) names. Order is priority when several run at once.
type KernelClass uint8

const (
	KGEMM KernelClass = iota
	KAttention
	KConv
	KNorm
	KReduce
	KElementwise
	KMemset
	KCollective
	KOther
	numKernelClasses
)

var kernelClassNames = [...]string{"gemm", "attention", "conv", "norm", "reduce", "elementwise", "memset", "collective", "other"}

func (k KernelClass) String() string { return kernelClassNames[k] }

// ClassifyKernel assigns a kernel name to a class.
func ClassifyKernel(name string) KernelClass {
	n := strings.ToLower(name)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(n, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("nccl", "all_reduce", "allreduce", "allgather", "reduce_scatter", "rccl"):
		return KCollective
	case has("flash", "fmha", "attention", "attn", "sdpa", "scaled_dot"):
		return KAttention
	case has("norm", "bn_fw", "bn_bw"):
		return KNorm
	case has("conv", "implicit_gemm", "fprop", "dgrad", "wgrad", "winograd"):
		return KConv
	case has("gemm", "gemv", "matmul", "cublas", "cutlass", "nvjet", "xmma", "wmma", "mfma", "cijk_"):
		return KGEMM
	case has("reduce", "softmax", "argmax", "topk", "sort", "scan", "cumsum"):
		return KReduce
	case has("elementwise", "vectorized", "unrolled", "pointwise", "copy_kernel", "fill", "triton_poi", "index", "cat", "gather", "scatter"):
		return KElementwise
	}
	return KOther
}

// IsFP32GEMM reports whether a GEMM kernel runs in full fp32 on CUDA cores
// (no TF32/bf16 tensor cores): on Ampere and later that leaves most of the
// GPU's matrix throughput unused.
func IsFP32GEMM(name string) bool {
	if ClassifyKernel(name) != KGEMM {
		return false
	}
	n := strings.ToLower(name)
	for _, tc := range []string{"tf32", "tensorop", "s1688", "s16816", "bf16", "f16", "fp8", "e4m3", "e5m2", "hgemm", "int8", "i8"} {
		if strings.Contains(n, tc) {
			return false
		}
	}
	for _, f := range []string{"sgemm", "simt", "ffma", "f32f32_f32f32", "<float", "float, float, float", "<int, int, float"} {
		if strings.Contains(n, f) {
			return true
		}
	}
	return false
}
