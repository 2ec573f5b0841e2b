package analyze_test

import (
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

// Launch metrics with every launch recorded and with launch calls sampled
// (the native collector's default): sampled, the count comes from the
// kernels and the per-call cost and delay from the calls that were seen.
func TestLaunchMetrics(t *testing.T) {
	// Two iterations of 4 kernels; launch calls of 3 µs, kernels start 7 µs
	// after their launch. Sampled: only the first iteration's launches seen.
	build := func(sampled bool) []trace.Event {
		var evs []trace.Event
		for it := int64(0); it < 2; it++ {
			base := it * 1000
			evs = append(evs, scope("step", 1, base, 500))
			for k := int64(0); k < 4; k++ {
				corr := it*10 + k + 1
				ts := base + 10 + 20*k
				if !sampled || it == 0 {
					evs = append(evs, withCorr(cpu(trace.KindRuntime, "cudaLaunchKernel", 1, ts, 3), corr))
				}
				evs = append(evs, kernel("elementwise_kernel", ts+7, 2, corr))
			}
		}
		return evs
	}
	cases := []struct {
		name      string
		sampled   float64
		wantCalls int
		wantSeen  int
	}{
		{"every launch recorded", 0, 4, 0},
		{"launch calls sampled", 10, 4, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := &trace.Trace{Events: build(c.sampled > 0)}
			tr.Meta.LaunchSampledPct = c.sampled
			r, err := analyze.Analyze(timeline.Build(tr), analyze.Options{Warmup: 0})
			if err != nil {
				t.Fatal(err)
			}
			m := r.Metrics
			if m.LaunchCalls != c.wantCalls || m.LaunchCallsSampled != (c.sampled > 0) || m.LaunchCallsSeen != c.wantSeen {
				t.Errorf("launch calls %d (sampled %v, seen %d), want %d (sampled %v, seen %d)",
					m.LaunchCalls, m.LaunchCallsSampled, m.LaunchCallsSeen, c.wantCalls, c.sampled > 0, c.wantSeen)
			}
			if m.LaunchCallMeanUs != 3 || m.LaunchDelayUs != 7 {
				t.Errorf("launch call %.1f µs, launch→start %.1f µs; want 3 and 7", m.LaunchCallMeanUs, m.LaunchDelayUs)
			}
		})
	}
}

// A launch loop whose launch calls went unrecorded (sampled away) is one long
// stretch of "host code with no op" on the CPU side. The kernels starting
// through it show the CPU was launching: framework overhead, not
// preprocessing. A real 2 ms stretch with no kernel is still preprocessing.
func TestSampledLaunchLoopIsNotPreprocessing(t *testing.T) {
	evs := []trace.Event{scope("step", 1, 0, 5000)}
	// 0–2000 µs: no GPU work (tokenizing, say); 2000–5000 µs: a kernel of
	// 2 µs every 15 µs, no launch call recorded.
	for ts := int64(2010); ts < 5000; ts += 15 {
		evs = append(evs, kernel("elementwise_kernel", ts, 2, ts))
	}
	tr := &trace.Trace{Events: evs}
	tr.Meta.LaunchSampledPct = 10
	r, err := analyze.Analyze(timeline.Build(tr), analyze.Options{Warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	got := map[analyze.Category]float64{}
	for _, s := range r.Breakdown {
		got[analyze.Category(s.Category)] = s.Ms * 1000
	}
	// 2000 µs before the first kernel (plus the 10 µs to it, in one stretch).
	if p := got[analyze.CatPreprocess]; p < 1990 || p > 2020 {
		t.Errorf("preprocessing %.0f µs, want ~2010 (the stretch with no GPU work); breakdown %v", p, got)
	}
	if f := got[analyze.CatFramework]; f < 2500 {
		t.Errorf("framework overhead %.0f µs, want ≥ 2500 (the launch loop between kernels); breakdown %v", f, got)
	}
}

// A kernel that starts before its own launch call means the trace's GPU and
// CPU clocks disagree: the report must say so rather than attribute on it.
func TestClockSuspectWhenKernelsPrecedeLaunches(t *testing.T) {
	for _, c := range []struct {
		name   string
		offset int64 // kernel start − launch start, µs
		want   bool
	}{{"kernels after their launches", 7, false}, {"kernels before their launches", -500, true}} {
		t.Run(c.name, func(t *testing.T) {
			evs := []trace.Event{scope("step", 1, 0, 2000)}
			for k := int64(0); k < 4; k++ {
				ts := 1000 + 100*k
				evs = append(evs, withCorr(cpu(trace.KindRuntime, "cudaLaunchKernel", 1, ts, 5), k+1), kernel("gemm", ts+c.offset, 5, k+1))
			}
			r, err := analyze.Analyze(timeline.Build(&trace.Trace{Events: evs}), analyze.Options{Warmup: 0})
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, f := range r.Diagnosis {
				got = got || f.ID == "clock-suspect"
			}
			if got != c.want {
				t.Errorf("clock-suspect finding: want %v, got %v (launch→start median %.1f µs)", c.want, got, r.Metrics.LaunchDelayUs)
			}
		})
	}
}
