package analyze

import "fmt"

// Classification values (docs/report-schema.md).
const (
	ClassGPUBound    = "gpu-bound"
	ClassCopyBound   = "copy-bound"
	ClassLaunchBound = "launch-bound"
	ClassSyncBound   = "sync-bound"
	ClassCPUBound    = "cpu-bound"
	ClassCPUOnly     = "cpu-only"
	ClassBalanced    = "balanced"
)

// Thresholds of the classification, as shares of wall time.
const (
	gpuBoundShare   = 0.60
	copyBoundShare  = 0.30
	syncBoundShare  = 0.30
	syncBoundCalls  = 10   // host syncs per iteration that make a loop of them
	cpuBoundShare   = 0.40 // preprocessing or framework share
	tinyKernelUs    = 20.0 // median kernel below which launch cost dominates
	launchIdleShare = 0.50
)

// syncCost is the time a loop of host syncs costs: the waits themselves,
// the tiny read-back copies, and the GPU idling after each sync until the
// CPU has launched the next work (the queue was drained).
func syncCost(c *ruleCtx) float64 {
	if c.a.total == 0 {
		return 0
	}
	ns := c.a.byCat[catIndex(CatSync)] + c.a.postSync
	if d2h := c.f.copies[1]; d2h.count > 0 && d2h.bytes/int64(d2h.count) < 64<<10 {
		ns += c.a.byCat[catIndex(CatD2H)]
	}
	return float64(ns) / float64(c.a.total)
}

func classify(c *ruleCtx) (string, string) {
	r := c.r
	if !c.x.hasGPU {
		return ClassCPUOnly, fmt.Sprintf("no GPU work in the trace: %.0f%% in framework ops on the CPU, %.0f%% preprocessing, %.0f%% other framework time",
			100*c.share(CatCPUCompute), 100*c.share(CatPreprocess), 100*c.share(CatFramework))
	}
	g, cp := c.share(CatGPUCompute), c.share(CatH2D, CatD2H, CatD2D)
	pre, fw := c.share(CatPreprocess), c.share(CatFramework)
	sc := syncCost(c)
	perIter := float64(c.f.syncCalls+c.f.itemCalls) / float64(max(c.f.n, 1))
	switch {
	case g >= gpuBoundShare:
		return ClassGPUBound, fmt.Sprintf("kernels run %.0f%% of the wall time", 100*g)
	case cp >= copyBoundShare && cp >= pre && cp >= fw:
		return ClassCopyBound, fmt.Sprintf("copies take %.0f%% of the wall time with no kernel running", 100*cp)
	case perIter >= syncBoundCalls && sc >= syncBoundShare:
		return ClassSyncBound, fmt.Sprintf("%d host syncs per iteration; waiting on them and the idle GPU after each costs %.0f%% of the wall time", c.r.Metrics.SyncCalls, 100*sc)
	case pre >= cpuBoundShare && pre >= fw:
		return ClassCPUBound, fmt.Sprintf("CPU preprocessing takes %.0f%% of the wall time while the GPU waits", 100*pre)
	case fw >= cpuBoundShare && r.Metrics.KernelMedianUs < tinyKernelUs && r.GPUIdlePct >= 100*launchIdleShare:
		return ClassLaunchBound, fmt.Sprintf("the GPU is idle %.0f%% of the time between %d kernels per iteration of median %.1f µs: the CPU cannot launch them fast enough", r.GPUIdlePct, r.Metrics.Kernels, r.Metrics.KernelMedianUs)
	case fw >= cpuBoundShare:
		return ClassCPUBound, fmt.Sprintf("framework and Python overhead takes %.0f%% of the wall time while the GPU waits", 100*fw)
	}
	return ClassBalanced, fmt.Sprintf("no single cause dominates: GPU compute %.0f%%, copies %.0f%%, framework %.0f%%, preprocessing %.0f%%", 100*g, 100*cp, 100*fw, 100*pre)
}
