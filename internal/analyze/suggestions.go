package analyze

// Suggestion texts shared by several rules; each names the API to use.
const (
	suggestCUDAGraphs      = "Capture the steady-state step in a CUDA graph — `torch.compile(model, mode=\"reduce-overhead\")` or `torch.cuda.CUDAGraph` — so one launch replays all kernels instead of paying ~5–10 µs of CPU per kernel."
	suggestCompileFuse     = "Fuse the small elementwise kernels with `torch.compile(model)` (Inductor/Triton), cutting the kernel count per step."
	suggestBatch           = "Increase the batch size (or batch concurrent requests): the per-launch CPU cost is fixed, so more work per kernel raises GPU utilisation almost for free."
	suggestPinned          = "Allocate host buffers in pinned memory (`tensor.pin_memory()`, `DataLoader(pin_memory=True)`) and copy with `.to(device, non_blocking=True)`: pageable copies are staged through a driver bounce buffer at a fraction of the link's bandwidth and block the CPU."
	suggestKeepOnDevice    = "Keep data resident on the GPU between iterations (load once, reuse) instead of copying it every step."
	suggestOverlapCopies   = "Overlap copies with compute: issue H2D for the next batch on a side `torch.cuda.Stream` with pinned memory while the current batch runs."
	suggestNoItem          = "Remove per-step host reads (`.item()`, `.cpu()`, `.tolist()`, `print(tensor)`, Python `if` on a GPU tensor): accumulate on the GPU and read back once per batch, so the CPU can queue work ahead of the GPU."
	suggestSyncOnce        = "If a value is needed on the host every step, copy it with `non_blocking=True` into pinned memory and synchronise on a `torch.cuda.Event` a step later, not immediately."
	suggestFastTokenizer   = "Use a fast (Rust) tokenizer — `AutoTokenizer.from_pretrained(..., use_fast=True)` or `tokenizers` — and tokenize whole batches in one call instead of per item."
	suggestOffCritical     = "Move preprocessing off the critical path: run it in a worker pool (`DataLoader(num_workers=…)`, a thread/process pool) so batch N+1 is prepared while batch N runs in the model."
	suggestTF32            = "Enable tensor cores for fp32 matmuls with `torch.set_float32_matmul_precision(\"high\")` (TF32), or run the model in bf16 (`model.to(torch.bfloat16)` / `torch.autocast(\"cuda\", dtype=torch.bfloat16)`)."
	suggestLowerPrecision  = "The GPU is the bottleneck: lower precision (bf16, FP8 on Hopper) or a smaller/quantized model is what shortens this step; profile the top kernels with Nsight Compute to see whether they are compute- or memory-bound."
	suggestCompileGPU      = "Try `torch.compile(model)` for kernel fusion and better GEMM/attention kernels (e.g. `F.scaled_dot_product_attention`)."
	suggestInferenceMode   = "Wrap inference in `torch.inference_mode()` (cheaper than `no_grad`: no version counters or view tracking)."
	suggestThreads         = "Check `torch.get_num_threads()`: set it to the number of physical cores (`torch.set_num_threads`, `OMP_NUM_THREADS`) and avoid oversubscription with other thread pools."
	suggestBatchCPU        = "Batch inputs: on the CPU too, per-call framework overhead is amortised over a larger batch."
	suggestCompileCPU      = "Try `torch.compile(model)` or `torch.jit.trace` + `torch.jit.freeze` to cut Python and dispatcher overhead per op."
	suggestNativeCollector = "Re-measure without torch.profiler's CPU-op tracing (`inferscope run` uses the low-overhead collector on CUDA machines): per-op tracing inflates framework overhead."
	suggestPythonLoop      = "Reduce Python work per step: hoist allocations and shape logic out of the loop, avoid per-step `torch.tensor(...)` creation, and prefer fused library calls."
)
