package analyze

import (
	"fmt"
	"strings"
)

func ruleGPUBound(c *ruleCtx) *verdict {
	if c.r.Classification != ClassGPUBound {
		return nil
	}
	ev := []string{
		fmt.Sprintf("GPU compute %.1f ms of %.1f ms per iteration (%.0f%%); GPU busy %.0f%%", c.perIterMs(c.a.byCat[catIndex(CatGPUCompute)]), c.r.E2EMs, 100*c.share(CatGPUCompute), c.r.GPUBusyPct),
	}
	if len(c.r.GPUClasses) > 0 {
		var parts []string
		for _, s := range c.r.GPUClasses[:min(3, len(c.r.GPUClasses))] {
			parts = append(parts, fmt.Sprintf("%s %.1f ms", s.Label, s.Ms))
		}
		ev = append(ev, "by kernel class: "+strings.Join(parts, ", "))
	}
	if len(c.r.TopKernels) > 0 {
		k := c.r.TopKernels[0]
		ev = append(ev, fmt.Sprintf("top kernel: %s — %d× per iteration, %.2f ms (%.0f%% of GPU time)", shortName(k.Name), k.Count, k.TotalMs, k.Pct))
	}
	return &verdict{
		finding:     Finding{ID: "gpu-bound", Title: "GPU-bound: the GPU is busy with kernels most of the time; host-side changes will not help", Evidence: ev, Impact: c.share(CatGPUCompute)},
		suggestions: []string{suggestLowerPrecision, suggestCompileGPU},
		primary:     true,
	}
}

func ruleFP32GEMM(c *ruleCtx) *verdict {
	m := c.r.Metrics
	// Worth a finding when it is ≥1% of the wall time and ≥10% of GEMM time.
	if m.FP32GEMMMs < 0.01*c.r.E2EMs || m.FP32GEMMMs < 0.1*m.GEMMMs || m.ComputeCapab == "" || m.ComputeCapab < "8.0" {
		return nil
	}
	var names []string
	for _, k := range c.r.TopKernels {
		if IsFP32GEMM(k.Name) && len(names) < 2 {
			names = append(names, shortName(k.Name))
		}
	}
	return &verdict{
		finding: Finding{ID: "fp32-gemm", Title: "Matrix products run in full fp32 on CUDA cores, not on tensor cores",
			Evidence: []string{
				fmt.Sprintf("%.2f ms per iteration in fp32 GEMM/GEMV kernels (%.0f%% of GEMM time) on a compute capability %s GPU", m.FP32GEMMMs, 100*m.FP32GEMMMs/max(m.GEMMMs, 1e-9), m.ComputeCapab),
				"e.g. " + strings.Join(names, "; "),
			},
			Impact: m.FP32GEMMMs / max(c.r.E2EMs, 1e-9) * 0.5},
		suggestions: []string{suggestTF32},
	}
}

// shortName trims a demangled kernel signature to something readable.
func shortName(n string) string {
	if i := strings.IndexByte(n, '('); i > 0 && !strings.HasPrefix(n, "void") {
		n = n[:i]
	}
	n = strings.TrimPrefix(n, "void ")
	if len(n) > 90 {
		n = n[:87] + "…"
	}
	return n
}

func ruleGPUIdle(c *ruleCtx) *verdict {
	if !c.x.hasGPU || c.r.GPUIdlePct < 30 || c.r.Classification == ClassGPUBound {
		return nil
	}
	ev := []string{fmt.Sprintf("GPU busy %.1f%% of %.2f ms per iteration (kernels %.0f%%, copies %.0f%%)", c.r.GPUBusyPct, c.r.E2EMs, 100*c.share(CatGPUCompute), 100*c.share(CatH2D, CatD2H, CatD2D))}
	if c.r.Metrics.GapMedianUs > 0 {
		ev = append(ev, fmt.Sprintf("median idle gap between GPU work: %.1f µs", c.r.Metrics.GapMedianUs))
	}
	return &verdict{finding: Finding{ID: "gpu-idle", Title: fmt.Sprintf("GPU is idle for %.0f%% of the timeline", c.r.GPUIdlePct), Evidence: ev, Impact: c.r.GPUIdlePct / 100 * 0.5}}
}
