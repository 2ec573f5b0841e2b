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
