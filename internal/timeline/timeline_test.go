package timeline

import (
	"testing"

	"github.com/inferscope/inferscope/internal/trace"
)

func ev(kind trace.Kind, name string, tid, ts, dur int64) trace.Event {
	return trace.Event{Kind: kind, Name: name, Pid: 1, Tid: tid, Ts: ts, Dur: dur}
}

func TestNestingAndCorrelation(t *testing.T) {
	tr := &trace.Trace{Events: []trace.Event{
		ev(trace.KindCPUOp, "aten::linear", 1, 10, 50),
		ev(trace.KindUserAnnotation, "step", 1, 0, 100),
		ev(trace.KindCPUOp, "aten::addmm", 1, 20, 30),
		{Kind: trace.KindRuntime, Name: "cudaLaunchKernel", Pid: 1, Tid: 1, Ts: 25, Dur: 5, Corr: 9},
		{Kind: trace.KindKernel, Name: "gemm", Pid: 0, Tid: 7, Ts: 40, Dur: 10, Corr: 9},
		ev(trace.KindCPUOp, "aten::relu", 2, 20, 30), // other thread: never nested under thread 1
	}}
	tl := Build(tr)
	parent := map[string]string{}
	for i, e := range tl.Events {
		p := "-"
		if tl.Parent[i] >= 0 {
			p = tl.Events[tl.Parent[i]].Name
		}
		parent[e.Name] = p
	}
	want := map[string]string{"step": "-", "aten::linear": "step", "aten::addmm": "aten::linear", "cudaLaunchKernel": "aten::addmm", "aten::relu": "-", "gemm": "-"}
	for name, p := range want {
		if parent[name] != p {
			t.Errorf("parent of %s: want %s, got %s", name, p, parent[name])
		}
	}
	for i, e := range tl.Events {
		if e.Name == "gemm" {
			if l := tl.Launch[i]; l < 0 || tl.Events[l].Name != "cudaLaunchKernel" {
				t.Errorf("gemm's launch: want cudaLaunchKernel, got index %d", l)
			}
		}
	}
	if len(tl.Tracks) != 3 {
		t.Errorf("want 3 tracks (2 threads, 1 stream), got %d", len(tl.Tracks))
	}
}

func TestScopes(t *testing.T) {
	tr := &trace.Trace{Events: []trace.Event{
		ev(trace.KindUserAnnotation, "ProfilerStep#1", 1, 0, 100),
		ev(trace.KindUserAnnotation, "ProfilerStep#2", 1, 100, 120),
		ev(trace.KindUserAnnotation, "forward", 1, 10, 50), // nested: not a top-level scope
		ev(trace.KindUserAnnotation, "other", 1, 300, 10),
		{Kind: trace.KindSpan, SpanKind: "process", Name: "infer.py", Pid: 1, Tid: 1, Ts: -10, Dur: 1000},
	}}
	tl := Build(tr)
	s, err := tl.SelectScope("")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "ProfilerStep" || len(s.Instances) != 2 {
		t.Errorf("default scope: want ProfilerStep ×2 (numbered steps folded, process span skipped), got %s ×%d", s.Name, len(s.Instances))
	}
	if s, err := tl.SelectScope("other"); err != nil || len(s.Instances) != 1 {
		t.Errorf("--scope other: got %v, %v", s, err)
	}
	if _, err := tl.SelectScope("missing"); err == nil {
		t.Error("--scope missing: want an error listing the scopes")
	}
}

func TestWholeTraceFallback(t *testing.T) {
	tl := Build(&trace.Trace{Events: []trace.Event{
		ev(trace.KindCPUOp, "aten::mm", 1, 0, 10),
		{Kind: trace.KindRuntime, Name: "cudaLaunchKernel", Pid: 1, Tid: 2, Ts: 20, Dur: 5},
		{Kind: trace.KindKernel, Name: "k", Pid: 0, Tid: 7, Ts: 30, Dur: 40},
	}})
	s, err := tl.SelectScope("")
	if err != nil {
		t.Fatal(err)
	}
	in := s.Instances[0]
	if !s.Implicit || in.Start != 0 || in.End != 70 || tl.Tracks[in.Track].Key.Tid != 2 {
		t.Errorf("whole-trace scope: want implicit [0,70) on the launching thread 2, got %+v on tid %d", s, tl.Tracks[in.Track].Key.Tid)
	}
}
