package timeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/inferscope/inferscope/internal/trace"
)

// Instance is one execution of a scope: a window on one CPU thread.
type Instance struct {
	Event      int // index in Events, or -1 for the whole-trace fallback
	Track      int
	Start, End int64
}

// Dur is the instance's wall time in ns.
func (in Instance) Dur() int64 { return in.End - in.Start }

// Scope is a named region and all its executions (iterations).
type Scope struct {
	Name      string
	Instances []Instance
	// Implicit is set when the trace had no annotated region and the whole
	// traced interval of the busiest thread stands in for it.
	Implicit bool
}

// Total is the summed wall time of all instances.
func (s *Scope) Total() int64 {
	var t int64
	for _, in := range s.Instances {
		t += in.Dur()
	}
	return t
}

func isRegion(e *trace.Event) bool {
	if e.Kind == trace.KindUserAnnotation {
		return true
	}
	return e.Kind == trace.KindSpan && (e.SpanKind == "scope" || e.SpanKind == "process")
}

// GroupName folds numbered iterations ("ProfilerStep#12") into one scope.
func GroupName(name string) string {
	if i := strings.LastIndexByte(name, '#'); i > 0 {
		digits := name[i+1:]
		if digits != "" && strings.Trim(digits, "0123456789") == "" {
			return name[:i]
		}
	}
	return name
}

// Scopes lists the outermost annotated regions, grouped by name, largest
// total wall time first.
func (tl *Timeline) Scopes() []Scope {
	byName := map[string]*Scope{}
	var order []string
	for i := range tl.Events {
		e := &tl.Events[i]
		if !isRegion(e) || e.Dur <= 0 || tl.insideRegion(i) {
			continue
		}
		g := GroupName(e.Name)
		s := byName[g]
		if s == nil {
			s = &Scope{Name: g}
			byName[g] = s
			order = append(order, g)
		}
		s.Instances = append(s.Instances, Instance{Event: i, Track: int(tl.TrackOf[i]), Start: e.Ts, End: e.End()})
	}
	out := make([]Scope, 0, len(order))
	for _, g := range order {
		s := byName[g]
		sort.Slice(s.Instances, func(a, b int) bool { return s.Instances[a].Start < s.Instances[b].Start })
		out = append(out, *s)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Total() > out[b].Total() })
	return out
}

// insideRegion reports whether an annotated region encloses event i; an
// implicit process span does not count, so user scopes inside it are found.
func (tl *Timeline) insideRegion(i int) bool {
	for p := tl.Parent[i]; p >= 0; p = tl.Parent[p] {
		e := &tl.Events[p]
		if isRegion(e) && e.SpanKind != "process" {
			return true
		}
	}
	return false
}

// SelectScope picks the scope to analyse: the named one, or by default the
// outermost region with the most wall time. User scopes win over the
// implicit process span. With no region at all, the traced interval of the
// thread that launched the most GPU work (or ran the most ops) stands in.
func (tl *Timeline) SelectScope(name string) (Scope, error) {
	scopes := tl.Scopes()
	if name != "" {
		var names []string
		for _, s := range scopes {
			if s.Name == name {
				return s, nil
			}
			for _, in := range s.Instances {
				if in.Event >= 0 && tl.Events[in.Event].Name == name {
					return Scope{Name: name, Instances: []Instance{in}}, nil
				}
			}
			names = append(names, s.Name)
		}
		if len(names) == 0 {
			return Scope{}, fmt.Errorf("no scope %q: the trace has no annotated regions; wrap the measured code in torch.profiler.record_function(%q) or inferscope.scope(%q), or omit --scope to analyse the whole trace", name, name, name)
		}
		return Scope{}, fmt.Errorf("no scope %q in the trace; scopes found: %s", name, strings.Join(firstN(names, 10), ", "))
	}
	for _, s := range scopes {
		if !tl.isProcessScope(s) {
			return s, nil
		}
	}
	if len(scopes) > 0 {
		return scopes[0], nil
	}
	return tl.wholeTrace()
}

func (tl *Timeline) isProcessScope(s Scope) bool {
	e := &tl.Events[s.Instances[0].Event]
	return e.Kind == trace.KindSpan && e.SpanKind == "process"
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

func (tl *Timeline) wholeTrace() (Scope, error) {
	best, bestScore := -1, 0
	for ti, tr := range tl.Tracks {
		if tr.GPU {
			continue
		}
		score := 0
		for i := tr.Lo; i < tr.Hi; i++ {
			switch tl.Events[i].Kind {
			case trace.KindRuntime, trace.KindDriver:
				score += 4
			case trace.KindCPUOp, trace.KindSpan, trace.KindUserAnnotation, trace.KindPythonFunction:
				score++
			}
		}
		if score > bestScore {
			best, bestScore = ti, score
		}
	}
	if best < 0 {
		return Scope{}, fmt.Errorf("the trace has no CPU-side events (no operators, runtime calls or annotations) to anchor an analysis window")
	}
	start, end := int64(1<<62), int64(-1<<62)
	for i := range tl.Events {
		e := &tl.Events[i]
		if e.Kind == trace.KindInstant || e.Kind == trace.KindOther || e.Pid < 0 {
			continue
		}
		start = min(start, e.Ts)
		end = max(end, e.End())
	}
	return Scope{Name: "(whole trace)", Implicit: true, Instances: []Instance{{Event: -1, Track: best, Start: start, End: end}}}, nil
}
