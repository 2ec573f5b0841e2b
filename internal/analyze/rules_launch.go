package analyze

import "fmt"

func launchEvidence(c *ruleCtx) []string {
	m := c.r.Metrics
	ev := []string{
		fmt.Sprintf("%d kernels per iteration, median %.1f µs, %.0f%% shorter than 10 µs", m.Kernels, m.KernelMedianUs, m.SmallKernelPct),
		fmt.Sprintf("framework overhead %.1f ms (%.0f%%) while the GPU is idle; GPU busy only %.0f%%", c.perIterMs(c.a.byCat[catIndex(CatFramework)]), 100*c.share(CatFramework), c.r.GPUBusyPct),
	}
	switch {
	case m.LaunchCallsSampled && m.LaunchCallsSeen > 0:
		ev = append(ev, fmt.Sprintf("~%d launches per iteration, %.1f µs of CPU each (from %d sampled calls); %.0f kernels/s", m.LaunchCalls, m.LaunchCallMeanUs, m.LaunchCallsSeen, m.LaunchRatePerS))
	case m.LaunchCallsSampled:
		ev = append(ev, fmt.Sprintf("~%d launches per iteration; %.0f kernels/s", m.LaunchCalls, m.LaunchRatePerS))
	case m.LaunchCalls > 0:
		ev = append(ev, fmt.Sprintf("%d launch calls per iteration, %.1f µs of CPU each; %.0f kernels/s", m.LaunchCalls, m.LaunchCallMeanUs, m.LaunchRatePerS))
	}
	if len(c.r.TopCPUOps) > 0 {
		o := c.r.TopCPUOps[0]
		ev = append(ev, fmt.Sprintf("top CPU op by self time: %s, %d× per iteration, %.2f ms", o.Name, o.Count, o.SelfMs))
	}
	return ev
}

func ruleLaunchBound(c *ruleCtx) *verdict {
	if c.r.Classification != ClassLaunchBound {
		return nil
	}
	return &verdict{
		finding: Finding{ID: "launch-bound", Title: "Launch-bound: many tiny kernels; the CPU's launch and dispatch cost, not the GPU, sets the pace",
			Evidence: launchEvidence(c), Impact: c.share(CatFramework)},
		suggestions: []string{suggestCUDAGraphs, suggestCompileFuse, suggestBatch},
		primary:     true,
	}
}

func ruleFrameworkBound(c *ruleCtx) *verdict {
	if c.r.Classification != ClassCPUBound || c.share(CatFramework) < c.share(CatPreprocess) || !c.x.hasGPU {
		return nil
	}
	return &verdict{
		finding: Finding{ID: "framework-overhead", Title: "CPU-bound in the framework: Python and operator dispatch keep the GPU waiting",
			Evidence: launchEvidence(c), Impact: c.share(CatFramework)},
		suggestions: []string{suggestCompileCPU, suggestCUDAGraphs, suggestPythonLoop},
		primary:     true,
	}
}
