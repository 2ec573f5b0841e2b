// Package timeline turns a trace's flat events into one ordered model: a
// track per CPU thread and per GPU stream, parent/child nesting on each CPU
// track, launch → kernel/copy correlation, duplicate removal and the scopes
// (iterations) that analysis is done over.
package timeline

import (
	"cmp"
	"slices"

	"github.com/inferscope/inferscope/internal/trace"
)

// Timeline is the aligned, ordered event model of one trace.
type Timeline struct {
	Meta   trace.Meta
	Events []trace.Event // grouped by track, each track ordered by (Ts, -Dur)
	Tracks []Track
	// Parent[i] is the index of the innermost event enclosing Events[i] on
	// the same CPU track, or -1.
	Parent []int32
	// Launch[i], for GPU work, is the index of the runtime/driver call that
	// launched it (via the correlation id), or -1.
	Launch []int32
	// TrackOf[i] is the index in Tracks of Events[i].
	TrackOf []int32
}

// Track is one CPU thread or GPU stream: the events Events[Lo:Hi].
type Track struct {
	Key    trace.ThreadKey
	Name   string
	GPU    bool
	Lo, Hi int
}

// Build orders, de-duplicates, nests and correlates a trace's events.
func Build(t *trace.Trace) *Timeline {
	evs := t.Events
	// A total order (ties broken down to the name) makes an unstable sort
	// deterministic; stable sorting moved far more memory on large traces.
	slices.SortFunc(evs, func(a, b trace.Event) int {
		ga, gb := a.Kind.OnGPU(), b.Kind.OnGPU()
		switch {
		case ga != gb:
			if ga {
				return 1
			}
			return -1
		case a.Pid != b.Pid:
			return cmp.Compare(a.Pid, b.Pid)
		case a.Tid != b.Tid:
			return cmp.Compare(a.Tid, b.Tid)
		case a.Ts != b.Ts:
			return cmp.Compare(a.Ts, b.Ts)
		case a.Dur != b.Dur:
			return cmp.Compare(b.Dur, a.Dur) // enclosing first
		}
		if c := cmp.Compare(nestRank(a.Kind), nestRank(b.Kind)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Corr, b.Corr); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ExtID, b.ExtID); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	tl := &Timeline{Meta: t.Meta}
	// De-duplicate: the same interval reported twice (e.g. merged collectors,
	// re-exported traces) would double-count in attribution.
	out := evs[:0]
	for i := range evs {
		if n := len(out); n > 0 && sameEvent(&out[n-1], &evs[i]) {
			tl.Meta.Duplicates++
			continue
		}
		out = append(out, evs[i])
	}
	tl.Events = out
	n := len(out)
	tl.Parent = make([]int32, n)
	tl.Launch = make([]int32, n)
	tl.TrackOf = make([]int32, n)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && out[hi].Pid == out[lo].Pid && out[hi].Tid == out[lo].Tid && out[hi].Kind.OnGPU() == out[lo].Kind.OnGPU() {
			hi++
		}
		tr := Track{Key: trace.ThreadKey{Pid: out[lo].Pid, Tid: out[lo].Tid}, GPU: out[lo].Kind.OnGPU(), Lo: lo, Hi: hi}
		tr.Name = t.Threads[tr.Key]
		for i := lo; i < hi; i++ {
			tl.TrackOf[i] = int32(len(tl.Tracks))
		}
		tl.Tracks = append(tl.Tracks, tr)
		tl.nest(lo, hi)
		lo = hi
	}
	tl.correlate()
	return tl
}

// nestRank orders events with equal start and duration so that the more
// general one encloses the more specific one.
func nestRank(k trace.Kind) int {
	switch k {
	case trace.KindSpan:
		return 0
	case trace.KindUserAnnotation:
		return 1
	case trace.KindPythonFunction:
		return 2
	case trace.KindCPUOp:
		return 3
	case trace.KindRuntime:
		return 4
	case trace.KindDriver:
		return 5
	}
	return 6
}

func sameEvent(a, b *trace.Event) bool {
	return a.Ts == b.Ts && a.Dur == b.Dur && a.Kind == b.Kind && a.Corr == b.Corr && a.ExtID == b.ExtID && a.Name == b.Name
}

// nest assigns parents on one track with a stack: an event is a child of the
// innermost open event that started before it and has not yet ended.
func (tl *Timeline) nest(lo, hi int) {
	stack := make([]int32, 0, 64)
	for i := lo; i < hi; i++ {
		e := &tl.Events[i]
		for len(stack) > 0 && tl.Events[stack[len(stack)-1]].End() <= e.Ts {
			stack = stack[:len(stack)-1]
		}
		tl.Parent[i] = -1
		if len(stack) > 0 {
			tl.Parent[i] = stack[len(stack)-1]
		}
		if e.Dur > 0 {
			stack = append(stack, int32(i))
		}
	}
}

func (tl *Timeline) correlate() {
	launches := make(map[int64]int32, 1024)
	for i := range tl.Events {
		e := &tl.Events[i]
		if e.Corr == 0 {
			continue
		}
		if e.Kind == trace.KindRuntime {
			launches[e.Corr] = int32(i)
		} else if e.Kind == trace.KindDriver {
			if _, ok := launches[e.Corr]; !ok {
				launches[e.Corr] = int32(i)
			}
		}
	}
	for i := range tl.Events {
		tl.Launch[i] = -1
		e := &tl.Events[i]
		if e.Kind.OnGPU() && e.Corr != 0 {
			if l, ok := launches[e.Corr]; ok {
				tl.Launch[i] = l
			}
		}
	}
}

// HasGPU reports whether any GPU work (kernels, copies, memsets) was traced.
func (tl *Timeline) HasGPU() bool {
	for _, tr := range tl.Tracks {
		if !tr.GPU {
			continue
		}
		for i := tr.Lo; i < tr.Hi; i++ {
			if k := tl.Events[i].Kind; k == trace.KindKernel || k == trace.KindMemcpy || k == trace.KindMemset {
				return true
			}
		}
	}
	return false
}
