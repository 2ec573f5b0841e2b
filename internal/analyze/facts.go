package analyze

import (
	"sort"

	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

type copyAcc struct {
	count, pageable      int
	bytes, pageableBytes int64
	dmaNs, blockedNs     int64
}

type nameAcc struct {
	count int
	ns    int64
	class KernelClass
	fp32  bool
}

// facts accumulates, over the analysed iterations, what the rules and the
// report need beyond the breakdown.
type facts struct {
	x           *analyzer
	n           int
	kernelDurs  []float64 // µs
	kernels     map[string]*nameAcc
	launchDelay []float64 // µs
	gaps        []float64 // µs between GPU activity
	copies      [3]copyAcc
	syncCalls   int
	syncNs      int64
	launchCalls int
	launchNs    int64
	itemCalls   int
	ops         map[string]*nameAcc // CPU op self time
	preNames    map[string]int64    // what the CPU was doing during preprocessing
	fp32GemmNs  int64
	gemmNs      int64
	timelines   []IterTimeline
}

func newFacts(x *analyzer) *facts {
	return &facts{x: x, kernels: map[string]*nameAcc{}, ops: map[string]*nameAcc{}, preNames: map[string]int64{}}
}

func copyIdx(d trace.CopyDir) int {
	switch d {
	case trace.CopyH2D:
		return 0
	case trace.CopyD2H:
		return 1
	}
	return 2
}

// HostBlockedGap is the name used in evidence for bare host code between ops.
const HostBlockedGap = "host code with no framework op (stretches ≥ gap threshold)"

func (f *facts) observe(in timeline.Instance, cpu []cpuSeg, gpu []gpuSeg, work []int32) {
	tl := f.x.tl
	f.n++
	for _, i := range work {
		e := &tl.Events[i]
		if e.Ts < in.Start {
			continue // counted with the iteration it started in
		}
		switch e.Kind {
		case trace.KindKernel:
			f.kernelDurs = append(f.kernelDurs, float64(e.Dur)/1e3)
			acc := f.kernels[e.Name]
			if acc == nil {
				acc = &nameAcc{class: ClassifyKernel(e.Name), fp32: IsFP32GEMM(e.Name)}
				f.kernels[e.Name] = acc
			}
			acc.count++
			acc.ns += e.Dur
			if acc.class == KGEMM {
				f.gemmNs += e.Dur
				if acc.fp32 {
					f.fp32GemmNs += e.Dur
				}
			}
			if l := tl.Launch[i]; l >= 0 {
				f.launchDelay = append(f.launchDelay, float64(e.Ts-tl.Events[l].Ts)/1e3)
			}
		case trace.KindMemcpy:
			c := &f.copies[copyIdx(e.Copy)]
			c.count++
			c.bytes += e.Bytes
			c.dmaNs += e.Dur
			if e.Src == trace.MemPageable || e.Dst == trace.MemPageable {
				c.pageable++
				c.pageableBytes += e.Bytes
			}
		}
	}
	for k := 1; k < len(gpu); k++ {
		if g := gpu[k].start - gpu[k-1].end; g > 0 {
			f.gaps = append(f.gaps, float64(g)/1e3)
		}
	}
	f.observeCPU(in)
	for _, s := range cpu {
		if s.label != lblPre {
			continue
		}
		name := HostBlockedGap
		if p := s.ev; p >= 0 {
			// Op time inside a tokenizer span is named after the span.
			for tl.Events[p].Kind == trace.KindCPUOp && tl.Parent[p] >= 0 {
				p = tl.Parent[p]
			}
			name = tl.Events[p].Name
		}
		f.preNames[name] += s.end - s.start
	}
}

// observeCPU counts runtime calls and operator self time on the iteration's
// thread.
func (f *facts) observeCPU(in timeline.Instance) {
	tl := f.x.tl
	tr := tl.Tracks[in.Track]
	self := map[int32]int64{}
	lo := tr.Lo + sort.Search(tr.Hi-tr.Lo, func(k int) bool { return tl.Events[tr.Lo+k].Ts >= in.Start })
	for i := lo; i < tr.Hi && tl.Events[i].Ts < in.End; i++ {
		e := &tl.Events[i]
		if i == in.Event {
			continue
		}
		switch e.Kind {
		case trace.KindRuntime, trace.KindDriver:
			switch k := f.x.calls.of(e.Name); {
			case k == callSync:
				f.syncCalls++
				f.syncNs += e.Dur
			case k == callMemcpy:
				f.copies[copyIdx(f.x.callCopyDir[int32(i)])].blockedNs += e.Dur
			case k == callLaunch && (e.Kind == trace.KindRuntime || !f.x.launchedByRuntime(i)):
				f.launchCalls++
				f.launchNs += e.Dur
			}
		case trace.KindCPUOp:
			if e.Name == "aten::_local_scalar_dense" {
				f.itemCalls++
			}
			self[int32(i)] += min(e.End(), in.End) - e.Ts
		}
		if p := tl.Parent[i]; p >= 0 && tl.Events[p].Kind == trace.KindCPUOp {
			self[p] -= min(e.End(), tl.Events[p].End()) - e.Ts
		}
	}
	for i, ns := range self {
		e := &tl.Events[i]
		acc := f.ops[e.Name]
		if acc == nil {
			acc = &nameAcc{}
			f.ops[e.Name] = acc
		}
		acc.count++
		acc.ns += max(ns, 0)
	}
}

// launchedByRuntime reports whether a driver call sits inside a runtime
// call (cudaLaunchKernel → cuLaunchKernel), so one launch is not counted twice.
func (x *analyzer) launchedByRuntime(i int) bool {
	p := x.tl.Parent[i]
	return p >= 0 && x.tl.Events[p].Kind == trace.KindRuntime
}
