package analyze

import (
	"fmt"
	"strings"
)

func ruleWarmup(c *ruleCtx) *verdict {
	if len(c.r.Scope.Excluded) == 0 {
		return nil
	}
	first := c.r.Iterations[c.r.Scope.Excluded[0]-1]
	return &verdict{finding: Finding{ID: "warmup", Title: "The first iteration is a warm-up outlier and is excluded from the breakdown",
		Evidence: []string{fmt.Sprintf("iteration 1 took %.2f ms vs a median of %.2f ms for the rest (lazy CUDA/cuBLAS initialisation, allocator growth, autotuning)", first.Ms, c.r.Latency.Median)},
		Impact:   0}}
}

// ruleProfilerCost warns that torch.profiler's per-op CPU tracing inflates
// exactly the host-side categories this analysis blames.
func ruleProfilerCost(c *ruleCtx) *verdict {
	meta := c.x.tl.Meta
	byProfiler := meta.Source == "kineto" || meta.Collector == "torch"
	if !byProfiler || !c.x.hasGPU || c.share(CatFramework) < 0.25 {
		return nil
	}
	ops := 0
	for _, o := range c.r.TopCPUOps {
		ops += o.Count
	}
	if ops == 0 || strings.Contains(meta.Collector, "cupti") {
		return nil
	}
	return &verdict{finding: Finding{ID: "profiler-overhead", Title: "Measurement note: this trace was recorded by torch.profiler with CPU-op tracing, which inflates host-side time",
		Evidence: []string{fmt.Sprintf("framework overhead is %.0f%% here; torch.profiler with CPU+CUDA activities added 37–250%% latency to the seed scenarios on an H100 (e.g. gpt2 243 → 853 ms), almost all of it per-op CPU cost", 100*c.share(CatFramework)),
			"the diagnosis still holds in kind — GPU idle between kernels — but the absolute overhead is overstated"},
		Impact: 0}, suggestions: []string{suggestNativeCollector}}
}

// ruleClockSuspect: a kernel cannot start before the call that launched it.
// When the median launch→start delay is negative, GPU and CPU times in the
// trace disagree by more than any clock-sync bound claims, and every
// GPU-vs-CPU comparison here (idle attribution, gaps) is suspect.
func ruleClockSuspect(c *ruleCtx) *verdict {
	d := c.r.Metrics.LaunchDelayUs
	if d >= 0 {
		return nil
	}
	return &verdict{finding: Finding{ID: "clock-suspect", Title: "Measurement note: kernels appear to start before their launch calls; GPU and CPU times in this trace do not line up",
		Evidence: []string{fmt.Sprintf("median launch → kernel start %.1f µs (it must be positive)", d),
			fmt.Sprintf("clock sync claimed: %s, ±%d ns", c.x.tl.Meta.ClockSync, c.x.tl.Meta.ClockErrorNs),
			"record the run again; if it repeats, report it with the raw directory (inferscope run --keep-raw)"},
		Impact: 0}}
}
