package analyze_test

import (
	"math"
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

const us = int64(1000)

func cpu(kind trace.Kind, name string, tid, ts, dur int64) trace.Event {
	return trace.Event{Kind: kind, Name: name, Pid: 1, Tid: tid, Ts: ts * us, Dur: dur * us}
}

func withCorr(e trace.Event, c int64) trace.Event { e.Corr = c; return e }

func kernel(name string, ts, dur, corr int64) trace.Event {
	return trace.Event{Kind: trace.KindKernel, Name: name, Pid: 0, Tid: 7, Ts: ts * us, Dur: dur * us, Corr: corr}
}

func scope(name string, tid, ts, dur int64) trace.Event {
	return cpu(trace.KindUserAnnotation, name, tid, ts, dur)
}

// Table-driven checks of the exclusive attribution on small hand-built
// timelines whose right answer is known to the microsecond.
func TestAttribution(t *testing.T) {
	cases := []struct {
		name   string
		events []trace.Event
		want   map[analyze.Category]float64 // µs per iteration
		class  string
	}{
		{
			name: "kernel hides the sync wait under it",
			events: []trace.Event{
				scope("s", 1, 0, 100),
				withCorr(cpu(trace.KindRuntime, "cudaLaunchKernel", 1, 5, 5), 1),
				kernel("gemm_kernel", 10, 50, 1),
				cpu(trace.KindRuntime, "cudaStreamSynchronize", 1, 15, 50),
			},
			want: map[analyze.Category]float64{analyze.CatGPUCompute: 50, analyze.CatSync: 5, analyze.CatFramework: 45},
		},
		{
			name: "time blocked in a pageable memcpy call counts as copy, not only the DMA",
			events: []trace.Event{
				scope("s", 1, 0, 100),
				withCorr(cpu(trace.KindRuntime, "cudaMemcpyAsync", 1, 10, 80), 2),
				{Kind: trace.KindMemcpy, Name: "Memcpy HtoD (Pageable -> Device)", Pid: 0, Tid: 7, Ts: 40 * us, Dur: 40 * us, Corr: 2, Copy: trace.CopyH2D, Src: trace.MemPageable, Dst: trace.MemDevice, Bytes: 1 << 20},
			},
			want:  map[analyze.Category]float64{analyze.CatH2D: 80, analyze.CatFramework: 20},
			class: analyze.ClassCopyBound,
		},
		{
			name: "a long stretch of host code with no op is preprocessing, short gaps are framework glue",
			events: []trace.Event{
				scope("s", 1, 0, 5000),
				cpu(trace.KindCPUOp, "aten::mm", 1, 4000, 100),
				withCorr(cpu(trace.KindRuntime, "cudaLaunchKernel", 1, 4050, 10), 3),
				kernel("gemm", 4200, 500, 3),
				cpu(trace.KindRuntime, "cudaDeviceSynchronize", 1, 4150, 600),
			},
			want:  map[analyze.Category]float64{analyze.CatPreprocess: 4000, analyze.CatFramework: 400, analyze.CatSync: 100, analyze.CatGPUCompute: 500},
			class: analyze.ClassCPUBound,
		},
		{
			name: "tokenize span is preprocessing even when short, ops inside it too",
			events: []trace.Event{
				scope("s", 1, 0, 100),
				{Kind: trace.KindSpan, SpanKind: "tokenize", Name: "tokenizer.__call__", Pid: 1, Tid: 1, Ts: 0, Dur: 40 * us},
				cpu(trace.KindCPUOp, "aten::tensor", 1, 30, 10),
				withCorr(cpu(trace.KindRuntime, "cudaLaunchKernel", 1, 50, 10), 4),
				kernel("elementwise_kernel", 60, 40, 4),
			},
			want: map[analyze.Category]float64{analyze.CatPreprocess: 40, analyze.CatFramework: 20, analyze.CatGPUCompute: 40},
		},
		{
			name: "CPU-only: time in ops is CPU compute",
			events: []trace.Event{
				scope("s", 1, 0, 100),
				cpu(trace.KindCPUOp, "aten::addmm", 1, 10, 60),
				cpu(trace.KindCPUOp, "aten::relu", 1, 75, 5),
			},
			want:  map[analyze.Category]float64{analyze.CatCPUCompute: 65, analyze.CatFramework: 35},
			class: analyze.ClassCPUOnly,
		},
		{
			name: "a copy in flight ranks below a kernel, above the CPU",
			events: []trace.Event{
				scope("s", 1, 0, 100),
				kernel("gemm", 0, 30, 0),
				{Kind: trace.KindMemcpy, Name: "Memcpy DtoH (Device -> Pinned)", Pid: 0, Tid: 8, Ts: 20 * us, Dur: 40 * us, Copy: trace.CopyD2H},
			},
			want: map[analyze.Category]float64{analyze.CatGPUCompute: 30, analyze.CatD2H: 30, analyze.CatFramework: 40},
		},
		{
			name: "duplicated events are dropped, not double counted",
			events: []trace.Event{
				scope("s", 1, 0, 100),
				kernel("gemm", 10, 20, 0),
				kernel("gemm", 10, 20, 0),
			},
			want: map[analyze.Category]float64{analyze.CatGPUCompute: 20, analyze.CatFramework: 80},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl := timeline.Build(&trace.Trace{Events: append([]trace.Event(nil), tc.events...)})
			r, err := analyze.Analyze(tl, analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			got := map[analyze.Category]float64{}
			var sum float64
			for _, s := range r.Breakdown {
				got[analyze.Category(s.Category)] = s.Ms * 1000
				sum += s.Ms
			}
			for c, w := range tc.want {
				if math.Abs(got[c]-w) > 1e-6 {
					t.Errorf("%s: want %.1f µs, got %.3f µs (breakdown %v)", c, w, got[c], got)
				}
			}
			for c, g := range got {
				if _, ok := tc.want[c]; !ok && g != 0 {
					t.Errorf("%s: want 0, got %.3f µs", c, g)
				}
			}
			if math.Abs(sum-r.E2EMs) > 1e-9 {
				t.Errorf("breakdown sums to %.6f ms, e2e %.6f ms", sum, r.E2EMs)
			}
			if tc.class != "" && r.Classification != tc.class {
				t.Errorf("classification: want %s, got %s (%s)", tc.class, r.Classification, r.ClassReason)
			}
		})
	}
}

// Two threads running the same scope at once: each iteration is charged
// only the GPU work its own thread launched.
func TestConcurrentScopesDoNotShareKernels(t *testing.T) {
	evs := []trace.Event{
		scope("infer", 1, 0, 100),
		scope("infer", 2, 0, 100),
		withCorr(cpu(trace.KindRuntime, "cudaLaunchKernel", 1, 0, 5), 1),
		withCorr(cpu(trace.KindRuntime, "cudaLaunchKernel", 2, 0, 5), 2),
		kernel("gemm", 10, 80, 1),
		{Kind: trace.KindKernel, Name: "gemm", Pid: 0, Tid: 8, Ts: 10 * us, Dur: 10 * us, Corr: 2},
	}
	tl := timeline.Build(&trace.Trace{Events: evs})
	r, err := analyze.Analyze(tl, analyze.Options{Warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Iterations) != 2 {
		t.Fatalf("want 2 iterations (one per thread), got %d", len(r.Iterations))
	}
	// Thread 1: 80 µs of its kernel; thread 2: 10 µs. Mean 45 µs of GPU compute.
	for _, s := range r.Breakdown {
		if s.Category == string(analyze.CatGPUCompute) && math.Abs(s.Ms*1000-45) > 1e-6 {
			t.Errorf("GPU compute per iteration: want 45 µs (80 and 10 µs), got %.3f µs", s.Ms*1000)
		}
	}
	busy := []float64{r.Iterations[0].GPUBusyPct, r.Iterations[1].GPUBusyPct}
	if !(busy[0] == 80 && busy[1] == 10 || busy[0] == 10 && busy[1] == 80) {
		t.Errorf("per-thread GPU busy: want 80%% and 10%%, got %v", busy)
	}
}
