// Package analyze attributes a scope's wall time to causes, measures the
// facts behind them and turns those into a diagnosis with suggestions.
package analyze

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

// Options steer one analysis.
type Options struct {
	Scope string // scope name; "" picks the outermost region with the most time
	// GapThreshold: bare host-code stretches inside the scope at least this
	// long, with no framework op, count as CPU preprocessing; shorter ones
	// as framework (Python glue) overhead.
	GapThreshold time.Duration
	// Warmup iterations to exclude; -1 decides: the first iteration is
	// excluded when ≥3 ran and it took >1.5× the median of the rest.
	Warmup      int
	ToolVersion string
}

// DefaultOptions are what `inferscope analyze` uses without flags.
func DefaultOptions() Options {
	return Options{GapThreshold: time.Millisecond, Warmup: -1, ToolVersion: "dev"}
}

type analyzer struct {
	tl          *timeline.Timeline
	opt         Options
	hasGPU      bool
	callCopyDir map[int32]trace.CopyDir
	work        *gpuWork
	classes     map[string]gpuClass // kernel name → class: names repeat thousands of times
	calls       callKinds
}

func (x *analyzer) classOf(e *trace.Event) gpuClass {
	if e.Kind != trace.KindKernel {
		return eventClass(e)
	}
	c, ok := x.classes[e.Name]
	if !ok {
		c = eventClass(e)
		x.classes[e.Name] = c
	}
	return c
}

// MaxTimelines bounds how many iterations keep their segment lanes for the
// HTML and Perfetto renderers: the lanes of a long run would dwarf the events.
const MaxTimelines = 32

// ErrNoWork is returned when the selected scope covers no time.
var ErrNoWork = errors.New("the selected scope has no duration")

// Analyze attributes, measures and diagnoses one scope of a timeline.
func Analyze(tl *timeline.Timeline, opt Options) (*Result, error) {
	if opt.GapThreshold <= 0 {
		opt.GapThreshold = time.Millisecond
	}
	scope, err := tl.SelectScope(opt.Scope)
	if err != nil {
		return nil, err
	}
	if scope.Total() <= 0 {
		return nil, fmt.Errorf("scope %q: %w", scope.Name, ErrNoWork)
	}
	x := &analyzer{tl: tl, opt: opt, hasGPU: tl.HasGPU(), callCopyDir: map[int32]trace.CopyDir{}, work: newGPUWork(tl), classes: map[string]gpuClass{}, calls: callKinds{}}
	for _, i := range x.work.idx {
		if e := &tl.Events[i]; e.Kind == trace.KindMemcpy && tl.Launch[i] >= 0 {
			x.callCopyDir[tl.Launch[i]] = e.Copy
		}
	}
	included := x.pickIterations(scope)
	f := newFacts(x)
	var total attribution
	iters := make([]Iteration, len(scope.Instances))
	for k, in := range scope.Instances {
		a, tlSeg := x.instance(scope, k, f, included[k])
		iters[k] = Iteration{Index: k + 1, StartMs: ms(in.Start - scope.Instances[0].Start), Ms: ms(in.Dur()),
			GPUBusyPct: pct(a.gpuBusy, a.total), Excluded: !included[k]}
		if included[k] {
			total.merge(&a)
			if tlSeg.Attr != nil {
				f.timelines = append(f.timelines, tlSeg)
			}
		}
	}
	return x.result(scope, iters, &total, f), nil
}

func (x *analyzer) pickIterations(s timeline.Scope) []bool {
	n := len(s.Instances)
	inc := make([]bool, n)
	for i := range inc {
		inc[i] = true
	}
	warm := x.opt.Warmup
	if warm < 0 {
		warm = 0
		if n >= 3 {
			rest := make([]float64, 0, n-1)
			for _, in := range s.Instances[1:] {
				rest = append(rest, float64(in.Dur()))
			}
			if float64(s.Instances[0].Dur()) > 1.5*median(rest) {
				warm = 1
			}
		}
	}
	for i := 0; i < warm && i < n-1; i++ {
		inc[i] = false
	}
	return inc
}

// instance analyses one iteration. GPU work is taken from every stream
// unless another thread ran the same scope at the same time; then only work
// launched from this iteration's thread counts, so concurrent threads do
// not share each other's kernels.
func (x *analyzer) instance(s timeline.Scope, k int, f *facts, record bool) (attribution, IterTimeline) {
	in := s.Instances[k]
	only := -1
	for j, o := range s.Instances {
		if j != k && o.Track != in.Track && o.Start < in.End && in.Start < o.End {
			only = in.Track
			break
		}
	}
	cpu := cpuSegments(x.tl, in, x.calls, nil)
	work := x.work.overlapping(x.tl, in.Start, in.End, only, nil)
	var brk []bool
	if x.tl.Meta.LaunchSampledPct > 0 {
		starts := make([]int64, len(work))
		for j, i := range work {
			starts[j] = x.tl.Events[i].Ts
		}
		cpu, brk = splitAtStarts(cpu, starts)
	}
	resolveGaps(cpu, int64(x.opt.GapThreshold), brk)
	classes := make([]gpuClass, len(work))
	for j, i := range work {
		classes[j] = x.classOf(&x.tl.Events[i])
	}
	gpu := gpuSegments(x.tl, work, in.Start, in.End, classes)
	it := IterTimeline{Index: k + 1, Start: in.Start, End: in.End}
	keep := record && len(f.timelines) < MaxTimelines
	var lane *[]Seg
	if keep {
		lane = &it.Attr
	}
	a := x.attribute(cpu, gpu, lane)
	if record {
		f.observe(in, cpu, gpu, work)
	}
	if !keep {
		return a, it
	}
	for _, c := range cpu {
		appendSeg(&it.CPU, c.start, c.end, cpuLabelNames[c.label])
	}
	for _, g := range gpu {
		appendSeg(&it.GPU, g.start, g.end, g.class.String())
	}
	return a, it
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func pct(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

func median(v []float64) float64 { return quantile(v, 0.5) }

func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}
