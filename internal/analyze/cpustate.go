package analyze

import (
	"sort"
	"strings"

	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

// cpuLabel is what a CPU thread is doing at one moment, from the innermost
// event and its ancestors.
type cpuLabel uint8

const (
	lblRoot   cpuLabel = iota // inside the scope, no more specific event
	lblModel                  // inside model code (forward/generate), between ops
	lblPre                    // tokenization, preprocessing, transforms
	lblOp                     // inside a framework operator
	lblLaunch                 // runtime call: launch and everything not below
	lblSync                   // blocking synchronisation call
	lblMemcpy                 // blocking / staged memcpy call
)

var cpuLabelNames = [...]string{"scope", "model", "preprocessing", "op", "launch", "sync", "memcpy"}

type cpuSeg struct {
	start, end int64
	label      cpuLabel
	ev         int32 // innermost event (runtime call for lblMemcpy/lblSync), -1 for root
}

var syncCalls = []string{"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
	"cuCtxSynchronize", "cuEventSynchronize", "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize"}

// IsSyncCall reports whether a runtime/driver call blocks the CPU until the
// GPU catches up.
func IsSyncCall(name string) bool {
	for _, s := range syncCalls {
		if name == s {
			return true
		}
	}
	return false
}

// IsMemcpyCall reports whether a runtime/driver call copies memory.
func IsMemcpyCall(name string) bool {
	return strings.HasPrefix(name, "cudaMemcpy") || strings.HasPrefix(name, "cuMemcpy") || strings.HasPrefix(name, "hipMemcpy")
}

// IsLaunchCall reports whether a runtime/driver call launches a kernel.
func IsLaunchCall(name string) bool {
	return strings.Contains(name, "LaunchKernel") || strings.HasPrefix(name, "cuLaunch") || strings.HasPrefix(name, "cudaLaunch") ||
		strings.Contains(name, "ModuleLaunchKernel") || name == "cudaGraphLaunch" || name == "cuGraphLaunch" || name == "hipGraphLaunch"
}

func spanLabel(kind string, parent cpuLabel) cpuLabel {
	switch kind {
	case "tokenize", "preprocess", "transform", "decode":
		return lblPre
	case "forward", "generate", "encode":
		if parent == lblPre {
			return lblPre
		}
		return lblModel
	}
	return parent
}

// callKind is what a runtime/driver call does, by name.
type callKind uint8

const (
	callOther callKind = iota
	callSync
	callMemcpy
	callLaunch
)

func kindOfCall(name string) callKind {
	switch {
	case IsSyncCall(name):
		return callSync
	case IsMemcpyCall(name):
		return callMemcpy
	case IsLaunchCall(name):
		return callLaunch
	}
	return callOther
}

// callKinds memoises kindOfCall: a trace has a few dozen distinct call
// names and hundreds of thousands of calls.
type callKinds map[string]callKind

func (m callKinds) of(name string) callKind {
	k, ok := m[name]
	if !ok {
		k = kindOfCall(name)
		m[name] = k
	}
	return k
}

func labelOf(e *trace.Event, parent cpuLabel, calls callKinds) cpuLabel {
	switch e.Kind {
	case trace.KindRuntime, trace.KindDriver:
		switch calls.of(e.Name) {
		case callSync:
			return lblSync
		case callMemcpy:
			return lblMemcpy
		}
		return lblLaunch
	case trace.KindCPUOp:
		if parent == lblPre {
			return lblPre
		}
		return lblOp
	case trace.KindSpan:
		return spanLabel(e.SpanKind, parent)
	case trace.KindPythonFunction:
		if strings.HasPrefix(e.Name, "nn.Module:") && parent != lblPre {
			return lblModel
		}
	case trace.KindUserAnnotation:
		n := strings.ToLower(e.Name)
		if strings.Contains(n, "tokeniz") || strings.Contains(n, "preprocess") {
			return lblPre
		}
	}
	return parent
}

type frame struct {
	end   int64
	label cpuLabel
	ev    int32
}

// cpuSegments partitions [in.Start, in.End) on the instance's thread into
// segments labelled by the innermost meaningful event. Children that
// overrun their parent (clock rounding) are clipped to it.
func cpuSegments(tl *timeline.Timeline, in timeline.Instance, calls callKinds, out []cpuSeg) []cpuSeg {
	tr := tl.Tracks[in.Track]
	evs := tl.Events[tr.Lo:tr.Hi]
	i := sort.Search(len(evs), func(k int) bool { return evs[k].Ts >= in.Start })
	stack := []frame{{end: in.End, label: lblRoot, ev: -1}}
	t := in.Start
	emit := func(to int64, f frame) {
		if to > t {
			out = append(out, cpuSeg{start: t, end: to, label: f.label, ev: f.ev})
			t = to
		}
	}
	for ; i < len(evs) && evs[i].Ts < in.End; i++ {
		idx := tr.Lo + i
		if idx == in.Event {
			continue
		}
		e := &evs[i]
		if e.Dur <= 0 || e.Kind == trace.KindInstant || e.Kind == trace.KindOther {
			continue
		}
		for len(stack) > 1 && stack[len(stack)-1].end <= e.Ts {
			emit(stack[len(stack)-1].end, stack[len(stack)-1])
			stack = stack[:len(stack)-1]
		}
		top := stack[len(stack)-1]
		emit(e.Ts, top)
		stack = append(stack, frame{end: min(e.End(), top.end), label: labelOf(e, top.label, calls), ev: int32(idx)})
	}
	for len(stack) > 0 {
		emit(stack[len(stack)-1].end, stack[len(stack)-1])
		stack = stack[:len(stack)-1]
	}
	return out
}

// resolveGaps decides what bare scope time (lblRoot) was: a long stretch of
// host code with no framework op is CPU-side work such as preprocessing; a
// short one between ops is Python glue of the framework. brk[k] (nil: none)
// ends a stretch before segment k (see splitAtStarts).
func resolveGaps(segs []cpuSeg, threshold int64, brk []bool) {
	for i := 0; i < len(segs); {
		if segs[i].label != lblRoot {
			i++
			continue
		}
		j := i
		var total int64
		for j < len(segs) && segs[j].label == lblRoot && (j == i || brk == nil || !brk[j]) {
			total += segs[j].end - segs[j].start
			j++
		}
		l := lblModel
		if total >= threshold {
			l = lblPre
		}
		for k := i; k < j; k++ {
			segs[k].label = l
		}
		i = j
	}
}

// splitAtStarts cuts bare scope time (lblRoot) at the times GPU work
// started (sorted), and marks the pieces that begin at one. With launch calls
// sampled, most launches leave no CPU-side record, and a stretch of "host code
// with no op" would swallow a launch loop whole; a kernel starting is the sign
// left that the CPU launched it just before, so no stretch spans one.
func splitAtStarts(segs []cpuSeg, starts []int64) ([]cpuSeg, []bool) {
	out := make([]cpuSeg, 0, len(segs)+len(starts))
	brk := make([]bool, 0, cap(out))
	k := 0
	for _, s := range segs {
		cut := false // s begins where GPU work started
		if s.label == lblRoot {
			for ; k < len(starts) && starts[k] < s.end; k++ {
				if starts[k] <= s.start {
					continue
				}
				p := s
				p.end = starts[k]
				out, brk = append(out, p), append(brk, cut)
				s.start, cut = starts[k], true
			}
		}
		out, brk = append(out, s), append(brk, cut)
	}
	return out, brk
}
