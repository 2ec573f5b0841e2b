package collect

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

func TestParseStreamToleratesTornTail(t *testing.T) {
	in := `{"type":"process","pid":7,"argv":["x.py"],"t_ns":1,"python":"3.11","torch":null,"cuda":false,"device":null,"collector":"none"}
{"type":"begin","id":1,"name":"step","kind":"scope","tid":7,"t_ns":100}
{"type":"span","id":2,"parent":1,"name":"tok","kind":"tokenize","tid":7,"thread":"MainThread","start_ns":110,"end_ns":150}
{"type":"span","id":3,"parent":1,"name":"bad","kind":"forward","tid":7,"start_ns":200,"end_ns":100}
{"type":"span","id":1,"parent":0,"name":"st`
	s, err := ParseStream(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.pid != 7 || len(s.spans) != 1 || len(s.begins) != 1 || s.badLines != 2 || s.end != nil {
		t.Errorf("want pid 7, 1 span, 1 begin, 2 bad lines (negative span, torn tail), no end; got pid %d, %d spans, %d begins, %d bad, end %v",
			s.pid, len(s.spans), len(s.begins), s.badLines, s.end)
	}
}

// A known CPU marker and GPU-clock event must line up within the bound.
func TestFitClock(t *testing.T) {
	const offset, drift = 5_000_000_000.0, 20e-6 // 5 s apart, 20 ppm drift
	toKineto := func(mono int64) int64 { return mono + int64(offset+drift*float64(mono-1_000_000)) }
	var marks []line
	var evs []trace.Event
	for i, m := range []struct{ at, half int64 }{{1_000_000, 40_000}, {1_500_000, 5_000}, {900_000_000, 60_000}, {901_000_000, 8_000}} {
		name := fmt.Sprintf("%s%d", markerPrefix, i)
		marks = append(marks, line{Marker: name, Before: m.at - m.half, After: m.at + m.half})
		evs = append(evs, trace.Event{Kind: trace.KindUserAnnotation, Name: name, Ts: toKineto(m.at) + m.half/2})
	}
	c := fitClock(marks, evs)
	if c.errNs <= 0 || c.errNs > 20_000 {
		t.Fatalf("error bound: want (0, 20 µs] from the tight markers, got %d ns", c.errNs)
	}
	for _, probe := range []int64{2_000_000, 450_000_000, 900_500_000} {
		if d := c.toTrace(probe) - toKineto(probe); d > c.errNs || -d > c.errNs {
			t.Errorf("at %d: mapped %d off the true clock, outside the ±%d ns bound", probe, d, c.errNs)
		}
	}
}

func TestReadDirKilledRun(t *testing.T) {
	dir := t.TempDir()
	body := `{"type":"process","pid":9,"argv":["x.py"],"t_ns":1,"python":"3.11","torch":"2.5","cuda":false,"device":null,"collector":"torch"}
{"type":"begin","id":1,"name":"step","kind":"scope","tid":9,"t_ns":1000}
{"type":"span","id":2,"parent":1,"name":"forward","kind":"forward","tid":9,"start_ns":1100,"end_ns":5000}
`
	if err := os.WriteFile(filepath.Join(dir, "spans-9.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	inc := tr.Meta.Incomplete
	for _, want := range []string{"no torch.profiler trace", "without its end record"} {
		if !strings.Contains(inc, want) {
			t.Errorf("incomplete note: want it to mention %q, got %q", want, inc)
		}
	}
	var open *trace.Event
	for i := range tr.Events {
		if tr.Events[i].Name == "step" {
			open = &tr.Events[i]
		}
	}
	if open == nil || open.Ts != 1000 || open.End() != 5000 {
		t.Errorf("open scope: want [1000, 5000) (closed at the last record), got %+v", open)
	}
}

// The process ran with the native collector and used CUDA, yet no
// cupti-<pid>.bin exists (the library failed to load): the report says so.
func TestReadDirCUPTIMissing(t *testing.T) {
	dir := t.TempDir()
	body := `{"type":"process","pid":11,"argv":["x.py"],"t_ns":1,"python":"3.11","torch":"2.5","cuda":null,"device":null,"collector":"cupti"}
{"type":"span","id":1,"parent":0,"name":"step","kind":"scope","tid":11,"start_ns":1000,"end_ns":5000}
{"type":"end","t_ns":6000,"dropped":0,"recorded":1,"cuda":true,"device":"GPU"}
`
	if err := os.WriteFile(filepath.Join(dir, "spans-11.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Meta.Collector != "cupti" || !strings.Contains(tr.Meta.Incomplete, "no CUPTI recording") {
		t.Errorf("want collector cupti and a note on the missing recording, got %q, %q", tr.Meta.Collector, tr.Meta.Incomplete)
	}
}

func FuzzParseStream(f *testing.F) {
	f.Add([]byte(`{"type":"span","id":1,"name":"a","kind":"scope","tid":1,"start_ns":1,"end_ns":2}` + "\n"))
	f.Add([]byte(`{"type":"clock","marker":"inferscope::clock#0","before_ns":1,"after_ns":3}` + "\n{\"type\":\"end\"}"))
	f.Add([]byte("\x00\n{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseStream(strings.NewReader(string(data)))
	})
}

// A non-Python CUDA program leaves only a native recording: it is still
// analysed (whole trace), on CLOCK_MONOTONIC, with the collector named.
func TestReadDirNativeOnly(t *testing.T) {
	b, err := os.ReadFile("../../testdata/cupti/vecadd.bin")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cupti-4242.bin"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[trace.Kind]int{}
	for _, e := range tr.Events {
		kinds[e.Kind]++
	}
	if kinds[trace.KindKernel] == 0 || kinds[trace.KindMemcpy] == 0 {
		t.Errorf("want kernels and copies from the recording, got %v", kinds)
	}
	if tr.Meta.Collector != "cupti" || !strings.HasPrefix(tr.Meta.ClockSync, "CUPTI") || tr.Meta.ClockErrorNs <= 0 {
		t.Errorf("metadata: want collector cupti and a CUPTI clock fit, got %q, %q, %d ns", tr.Meta.Collector, tr.Meta.ClockSync, tr.Meta.ClockErrorNs)
	}
	if tr.Meta.Platform != "cuda" {
		t.Errorf("platform: want cuda, got %q", tr.Meta.Platform)
	}
}

// Two CUDA processes number their correlation ids from 1 alike: each
// kernel must be tied to a launch call of its own process, which precedes
// it, never to the other process's call with the same id.
func TestReadDirTwoProcessesKeepTheirLaunches(t *testing.T) {
	dir := t.TempDir()
	for pid, f := range map[int]string{4242: "ctypes.bin", 4343: "torch.bin"} {
		b, err := os.ReadFile("../../testdata/cupti/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("cupti-%d.bin", pid)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline.Build(tr)
	kernels, before, launches := 0, 0, map[int32]bool{}
	for i, e := range tl.Events {
		if l := tl.Launch[i]; e.Kind == trace.KindKernel && l >= 0 {
			kernels++
			launches[l] = true
			if e.Ts < tl.Events[l].Ts {
				before++
			}
		}
	}
	if kernels == 0 || before > 0 || len(launches) != kernels {
		t.Errorf("%d kernels tied to %d distinct launch calls, %d of them start before their call: want one call each, none before (kernels > 0)", kernels, len(launches), before)
	}
}
