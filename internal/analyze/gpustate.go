package analyze

import (
	"sort"

	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

// gpuWork is the GPU-side activity of a timeline, ordered by start.
type gpuWork struct {
	idx    []int32 // indices of kernels, copies and memsets, by start time
	maxDur int64
}

func newGPUWork(tl *timeline.Timeline) *gpuWork {
	w := &gpuWork{}
	for i := range tl.Events {
		switch tl.Events[i].Kind {
		case trace.KindKernel, trace.KindMemcpy, trace.KindMemset:
			w.idx = append(w.idx, int32(i))
			w.maxDur = max(w.maxDur, tl.Events[i].Dur)
		}
	}
	sort.Slice(w.idx, func(a, b int) bool { return tl.Events[w.idx[a]].Ts < tl.Events[w.idx[b]].Ts })
	return w
}

// overlapping returns the GPU work overlapping [start, end), keeping only
// work launched from thread track when onlyTrack >= 0.
func (w *gpuWork) overlapping(tl *timeline.Timeline, start, end int64, onlyTrack int, out []int32) []int32 {
	lo := sort.Search(len(w.idx), func(k int) bool { return tl.Events[w.idx[k]].Ts >= start-w.maxDur })
	for _, i := range w.idx[lo:] {
		e := &tl.Events[i]
		if e.Ts >= end {
			break
		}
		if e.End() <= start {
			continue
		}
		if onlyTrack >= 0 {
			l := tl.Launch[i]
			if l < 0 || int(tl.TrackOf[l]) != onlyTrack {
				continue
			}
		}
		out = append(out, i)
	}
	return out
}

// gpuClass is what occupies the GPU in a segment: a kernel class, or a copy.
type gpuClass uint8

const (
	gcCopyH2D gpuClass = gpuClass(numKernelClasses) + iota
	gcCopyD2H
	gcCopyD2D
	numGPUClasses
)

func copyClass(d trace.CopyDir) gpuClass {
	switch d {
	case trace.CopyH2D:
		return gcCopyH2D
	case trace.CopyD2H:
		return gcCopyD2H
	}
	return gcCopyD2D
}

func eventClass(e *trace.Event) gpuClass {
	switch e.Kind {
	case trace.KindMemcpy:
		return copyClass(e.Copy)
	case trace.KindMemset:
		return gpuClass(KMemset)
	}
	return gpuClass(ClassifyKernel(e.Name))
}

func (c gpuClass) String() string {
	switch c {
	case gcCopyH2D:
		return "h2d"
	case gcCopyD2H:
		return "d2h"
	case gcCopyD2D:
		return "d2d"
	}
	return KernelClass(c).String()
}

type gpuSeg struct {
	start, end int64
	class      gpuClass
}

type edge struct {
	t     int64
	delta int8
	class gpuClass
}

// gpuSegments sweeps GPU work clipped to [start, end) into non-overlapping
// segments of the highest-priority active class (kernels before copies,
// then by class order).
func gpuSegments(tl *timeline.Timeline, work []int32, start, end int64, classes []gpuClass) []gpuSeg {
	edges := make([]edge, 0, 2*len(work))
	for k, i := range work {
		e := &tl.Events[i]
		s, f := max(e.Ts, start), min(e.End(), end)
		if f <= s {
			continue
		}
		edges = append(edges, edge{s, 1, classes[k]}, edge{f, -1, classes[k]})
	}
	sort.Slice(edges, func(a, b int) bool { return edges[a].t < edges[b].t })
	var active [numGPUClasses]int
	var segs []gpuSeg
	for k := 0; k < len(edges); {
		t := edges[k].t
		for k < len(edges) && edges[k].t == t {
			active[edges[k].class] += int(edges[k].delta)
			k++
		}
		if k == len(edges) {
			break
		}
		next := edges[k].t
		for c := gpuClass(0); c < numGPUClasses; c++ {
			if active[c] > 0 {
				if n := len(segs); n > 0 && segs[n-1].end == t && segs[n-1].class == c {
					segs[n-1].end = next
				} else {
					segs = append(segs, gpuSeg{t, next, c})
				}
				break
			}
		}
	}
	return segs
}
