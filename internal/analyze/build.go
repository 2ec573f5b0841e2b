package analyze

import (
	"fmt"
	"sort"

	"github.com/inferscope/inferscope/internal/timeline"
)

// TopN bounds the kernel and operator tables.
const TopN = 10

func (x *analyzer) result(s timeline.Scope, iters []Iteration, a *attribution, f *facts) *Result {
	n := max(f.n, 1)
	per := func(ns int64) float64 { return ms(ns) / float64(n) }
	r := &Result{Schema: SchemaVersion, Iterations: iters}
	r.Scope = ScopeInfo{Name: s.Name, Iterations: len(s.Instances), Analyzed: f.n, Implicit: s.Implicit}
	tr := x.tl.Tracks[s.Instances[0].Track]
	r.Scope.Thread = fmt.Sprintf("pid %d tid %d", tr.Key.Pid, tr.Key.Tid)
	if tr.Name != "" {
		r.Scope.Thread += " (" + tr.Name + ")"
	}
	var lat []float64
	for _, it := range iters {
		if it.Excluded {
			r.Scope.Excluded = append(r.Scope.Excluded, it.Index)
		} else {
			lat = append(lat, it.Ms)
		}
	}
	r.Latency = stats(lat)
	r.E2EMs = per(a.total)
	for i, c := range Categories {
		if a.byCat[i] == 0 && c != CatGPUCompute && !(c == CatCPUCompute && !x.hasGPU) {
			continue
		}
		if c == CatGPUCompute && !x.hasGPU {
			continue
		}
		r.Breakdown = append(r.Breakdown, Slice{Category: string(c), Label: c.Label(), Ms: per(a.byCat[i]), Pct: pct(a.byCat[i], a.total)})
	}
	r.GPUBusyPct = pct(a.gpuBusy, a.total)
	r.GPUIdlePct = 100 - r.GPUBusyPct
	if !x.hasGPU {
		r.GPUBusyPct, r.GPUIdlePct = 0, 0
	}
	for c := gpuClass(0); c < gpuClass(numKernelClasses); c++ {
		if a.byClass[c] > 0 {
			r.GPUClasses = append(r.GPUClasses, Slice{Category: KernelClass(c).String(), Label: KernelClass(c).String(), Ms: per(a.byClass[c]), Pct: pct(a.byClass[c], a.total)})
		}
	}
	sort.SliceStable(r.GPUClasses, func(i, j int) bool { return r.GPUClasses[i].Ms > r.GPUClasses[j].Ms })
	r.Metrics = f.metrics(a)
	r.TopKernels = f.topKernels(a)
	r.TopCPUOps = f.topOps(a)
	r.Metadata = Metadata{Trace: x.tl.Meta, ToolVersion: x.opt.ToolVersion, Events: len(x.tl.Events)}
	if e := r.Metadata.Trace.ClockErrorNs; e > 0 && r.E2EMs > 0 {
		r.Metadata.Trace.ClockErrorPct = 100 * float64(e) / (r.E2EMs * 1e6)
	}
	r.Metadata.Assumptions = append(r.Metadata.Assumptions,
		fmt.Sprintf("GPU-idle host code inside the scope with no framework op for ≥ %v at a stretch counts as CPU preprocessing; shorter stretches count as framework overhead", x.opt.GapThreshold))
	for _, other := range x.tl.Scopes() {
		if other.Name != s.Name && len(r.Scope.Others) < 10 {
			r.Scope.Others = append(r.Scope.Others, other.Name)
		}
	}
	r.Timelines = f.timelines
	x.diagnose(r, a, f)
	return r
}

func stats(v []float64) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	st := Stats{N: len(v), Median: median(v), P90: quantile(v, 0.9), Min: v[0], Max: v[0]}
	var sum float64
	for _, x := range v {
		sum += x
		st.Min, st.Max = min(st.Min, x), max(st.Max, x)
	}
	st.Mean = sum / float64(len(v))
	return st
}

func (f *facts) metrics(a *attribution) Metrics {
	n := float64(max(f.n, 1))
	m := Metrics{
		Kernels:        int(float64(len(f.kernelDurs))/n + 0.5),
		KernelMedianUs: median(f.kernelDurs),
		KernelP90Us:    quantile(f.kernelDurs, 0.9),
		LaunchCalls:    int(float64(f.launchCalls)/n + 0.5),
		LaunchDelayUs:  median(f.launchDelay),
		GapMedianUs:    median(f.gaps),
		SyncCalls:      int(float64(f.syncCalls)/n + 0.5),
		SyncMs:         ms(f.syncNs) / n,
		ItemCalls:      int(float64(f.itemCalls)/n + 0.5),
		PostSyncIdleMs: ms(a.postSync) / n,
		FP32GEMMMs:     ms(f.fp32GemmNs) / n,
		GEMMMs:         ms(f.gemmNs) / n,
	}
	small := 0
	for _, d := range f.kernelDurs {
		if d < 10 {
			small++
		}
	}
	if len(f.kernelDurs) > 0 {
		m.SmallKernelPct = 100 * float64(small) / float64(len(f.kernelDurs))
	}
	if f.launchCalls > 0 {
		m.LaunchCallMeanUs = float64(f.launchNs) / 1e3 / float64(f.launchCalls)
	}
	if f.x.tl.Meta.LaunchSampledPct > 0 {
		// Launch calls were recorded in windows only: count one launch per
		// kernel; the per-call cost above is the sampled calls' mean.
		m.LaunchCallsSampled, m.LaunchCallsSeen = true, f.launchCalls
		m.LaunchCalls = m.Kernels
	}
	if a.total > 0 {
		m.LaunchRatePerS = float64(len(f.kernelDurs)) / (float64(a.total) / 1e9)
	}
	for i, dir := range []string{"H2D", "D2H", "D2D"} {
		c := f.copies[i]
		if c.count == 0 && c.blockedNs == 0 {
			continue
		}
		cp := Copy{Dir: dir, Count: int(float64(c.count)/n + 0.5), Bytes: int64(float64(c.bytes) / n), DMAms: ms(c.dmaNs) / n,
			PageableCount: int(float64(c.pageable)/n + 0.5), PageableBytes: int64(float64(c.pageableBytes) / n), BlockedMs: ms(c.blockedNs) / n}
		if c.dmaNs > 0 {
			cp.GBps = float64(c.bytes) / float64(c.dmaNs)
		}
		m.Copies = append(m.Copies, cp)
	}
	for name, ns := range f.preNames {
		m.Preprocessing = append(m.Preprocessing, OpStat{Name: name, SelfMs: ms(ns) / n, Pct: pct(ns, a.total)})
	}
	sort.Slice(m.Preprocessing, func(i, j int) bool {
		if m.Preprocessing[i].SelfMs != m.Preprocessing[j].SelfMs {
			return m.Preprocessing[i].SelfMs > m.Preprocessing[j].SelfMs
		}
		return m.Preprocessing[i].Name < m.Preprocessing[j].Name
	})
	m.Preprocessing = m.Preprocessing[:min(len(m.Preprocessing), 5)]
	if devs := f.x.tl.Meta.Devices; len(devs) > 0 && devs[0].ComputeMajor > 0 {
		m.ComputeCapab = fmt.Sprintf("%d.%d", devs[0].ComputeMajor, devs[0].ComputeMinor)
	}
	return m
}

func (f *facts) topKernels(a *attribution) []KernelStat {
	n := float64(max(f.n, 1))
	var gpuNs int64
	for _, k := range f.kernels {
		gpuNs += k.ns
	}
	out := make([]KernelStat, 0, len(f.kernels))
	for name, k := range f.kernels {
		out = append(out, KernelStat{Name: name, Class: k.class.String(), Count: int(float64(k.count)/n + 0.5), TotalMs: ms(k.ns) / n,
			MeanUs: float64(k.ns) / 1e3 / float64(k.count), Pct: pct(k.ns, gpuNs)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TotalMs != out[j].TotalMs {
			return out[i].TotalMs > out[j].TotalMs
		}
		return out[i].Name < out[j].Name
	})
	return out[:min(len(out), TopN)]
}

func (f *facts) topOps(a *attribution) []OpStat {
	n := float64(max(f.n, 1))
	out := make([]OpStat, 0, len(f.ops))
	for name, o := range f.ops {
		out = append(out, OpStat{Name: name, Count: int(float64(o.count)/n + 0.5), SelfMs: ms(o.ns) / n, Pct: pct(o.ns, a.total)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].SelfMs != out[j].SelfMs {
			return out[i].SelfMs > out[j].SelfMs
		}
		return out[i].Name < out[j].Name
	})
	return out[:min(len(out), TopN)]
}
