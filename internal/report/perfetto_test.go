package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

// exportPerfetto writes in's Perfetto trace to a temporary file.
func exportPerfetto(t *testing.T, in Input) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace_perfetto.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Render(f, "perfetto", in); err != nil {
		t.Fatalf("render perfetto: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type perfettoFile struct {
	DisplayTimeUnit string                       `json:"displayTimeUnit"`
	InferScope      json.RawMessage              `json:"inferscope"`
	TraceEvents     []map[string]json.RawMessage `json:"traceEvents"`
}

func readPerfetto(t *testing.T, path string) perfettoFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("%s is not valid JSON", path)
	}
	var pf perfettoFile
	if err := json.Unmarshal(b, &pf); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return pf
}

func str(e map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(e[k], &s)
	return s
}

func num(e map[string]json.RawMessage, k string) float64 {
	var f float64
	_ = json.Unmarshal(e[k], &f)
	return f
}

// TestPerfettoExport checks the structure Perfetto needs, then re-imports
// the export as `inferscope analyze` would and compares the analysis.
func TestPerfettoExport(t *testing.T) {
	for _, tc := range traceCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.large {
				t.Skip("large trace: covered by TestPerfettoLargeRoundTrip")
			}
			in := load(t, tracePath(tc.name))
			path := exportPerfetto(t, in)
			pf := readPerfetto(t, path)
			checkPerfettoStructure(t, in, pf)
			checkReimport(t, in, path)
		})
	}
}

func checkPerfettoStructure(t *testing.T, in Input, pf perfettoFile) {
	t.Helper()
	r, tl := in.Result, in.Timeline
	if pf.DisplayTimeUnit != "ns" {
		t.Errorf("displayTimeUnit = %q, want ns", pf.DisplayTimeUnit)
	}
	var meta trace.Meta
	if err := json.Unmarshal(pf.InferScope, &meta); err != nil {
		t.Fatalf(`"inferscope" is not a trace.Meta: %v`, err)
	}
	wantMeta, _ := json.Marshal(r.Metadata.Trace)
	gotMeta, _ := json.Marshal(meta)
	if !bytes.Equal(wantMeta, gotMeta) {
		t.Errorf("inferscope metadata:\n  expected: %s\n  got:      %s", wantMeta, gotMeta)
	}

	procName, threadName := map[int64]string{}, map[[2]int64]string{}
	starts, ends := map[int64]int{}, map[int64]int{}
	counts := map[string]int{}
	attrNames := map[string]bool{}
	for _, c := range analyze.Categories {
		attrNames[c.Label()] = true
	}
	var original, attr, iters int
	for i, e := range pf.TraceEvents {
		ph := str(e, "ph")
		for k, v := range e {
			if len(v) > 0 && v[0] == '[' {
				t.Fatalf("event %d has an array at top level (%q): Perfetto's tokenizer rejects it", i, k)
			}
		}
		if _, ok := e["ts"]; !ok && ph != "M" {
			t.Fatalf("event %d (%s) has no ts", i, ph)
		}
		pid, tid := int64(num(e, "pid")), int64(num(e, "tid"))
		if pid < 0 || pid >= 1<<32 || tid < 0 || tid >= 1<<32 {
			t.Fatalf("event %d: pid %d tid %d out of uint32 range", i, pid, tid)
		}
		cat := str(e, "cat")
		counts[ph+" "+cat]++
		switch ph {
		case "M":
			var args struct{ Name string }
			_ = json.Unmarshal(e["args"], &args)
			switch str(e, "name") {
			case "process_name":
				procName[pid] = args.Name
			case "thread_name":
				threadName[[2]int64{pid, tid}] = args.Name
			}
		case "s":
			starts[int64(num(e, "id"))]++
		case "f":
			ends[int64(num(e, "id"))]++
			if str(e, "bp") != "e" {
				t.Fatalf("flow end %d binds %q, want the enclosing slice (bp e)", i, str(e, "bp"))
			}
		case "X", "i":
			if dur := num(e, "dur"); dur < 0 {
				t.Fatalf("event %d has negative dur %v", i, dur)
			}
			switch cat {
			case perfettoCatAttribution:
				attr++
				if !attrNames[str(e, "name")] {
					t.Errorf("attribution slice named %q, want a category label", str(e, "name"))
				}
			case perfettoCatIteration:
				iters++
			case "inferscope":
				if _, ok := e["args"]; !ok {
					t.Errorf("an InferScope span without its kind: %s", e["name"])
				}
				original++
			default:
				original++
			}
		}
	}
	if original != len(tl.Events) {
		t.Errorf("%d original events exported, timeline has %d", original, len(tl.Events))
	}
	launched := 0
	for _, l := range tl.Launch {
		if l >= 0 {
			launched++
		}
	}
	if launched == 0 || len(starts) != launched || len(ends) != launched {
		t.Errorf("flows: %d starts, %d ends, want one each for %d launched GPU events", len(starts), len(ends), launched)
	}
	for id, n := range ends {
		if n != 1 || starts[id] != 1 {
			t.Fatalf("flow %d: %d starts, %d ends", id, starts[id], n)
		}
	}
	wantAttr := 0
	for _, it := range r.Timelines {
		wantAttr += len(it.Attr)
	}
	if attr != wantAttr || attr == 0 {
		t.Errorf("%d attribution slices, want %d (one per segment)", attr, wantAttr)
	}
	if iters != len(r.Iterations) {
		t.Errorf("%d iteration slices, want %d", iters, len(r.Iterations))
	}
	var isPid int64 = -1
	for pid, n := range procName {
		if n == "InferScope" {
			isPid = pid
		}
	}
	tracks := map[string]bool{}
	for k, n := range threadName {
		if k[0] == isPid {
			tracks[n] = true
		}
	}
	if isPid < 0 || !tracks["Attribution"] || !tracks["Iterations"] {
		t.Errorf("no InferScope process with Attribution and Iterations tracks: processes %v, threads %v", procName, threadName)
	}
	if tl.HasGPU() {
		found := false
		for _, n := range procName {
			found = found || strings.HasPrefix(n, "GPU ")
		}
		if !found {
			t.Errorf("no GPU process: %v", procName)
		}
	}
	t.Logf("events by phase and category: %v", counts)
}

// checkReimport re-reads the export with the Kineto importer and analyses it
// again: the analysis must not change.
func checkReimport(t *testing.T, in Input, path string) {
	t.Helper()
	again, err := analyzeFile(path)
	if err != nil {
		t.Fatalf("re-import %s: %v", path, err)
	}
	a, b := in.Result, again.Result
	if a.Classification != b.Classification {
		t.Errorf("classification after re-import:\n  expected: %s (%s)\n  got:      %s (%s)", a.Classification, a.ClassReason, b.Classification, b.ClassReason)
	}
	if math.Abs(a.E2EMs-b.E2EMs) > 1e-9 {
		t.Errorf("e2e after re-import: expected %.6f ms, got %.6f ms", a.E2EMs, b.E2EMs)
	}
	if fa, fb := fmt.Sprint(a.Breakdown), fmt.Sprint(b.Breakdown); fa != fb {
		t.Errorf("breakdown after re-import:\n  expected: %s\n  got:      %s", fa, fb)
	}
	ids := func(r *analyze.Result) string {
		var s []string
		for _, d := range r.Diagnosis {
			s = append(s, d.ID)
		}
		return strings.Join(s, ",")
	}
	if ids(a) != ids(b) {
		t.Errorf("diagnosis after re-import:\n  expected: %s\n  got:      %s", ids(a), ids(b))
	}
	if a.Scope.Name != b.Scope.Name || a.Scope.Iterations != b.Scope.Iterations {
		t.Errorf("scope after re-import: expected %q ×%d, got %q ×%d", a.Scope.Name, a.Scope.Iterations, b.Scope.Name, b.Scope.Iterations)
	}
	if b.Metadata.Trace.Source != a.Metadata.Trace.Source || fmt.Sprint(b.Metadata.Trace.Devices) != fmt.Sprint(a.Metadata.Trace.Devices) {
		t.Errorf("provenance after re-import:\n  expected: %+v\n  got:      %+v", a.Metadata.Trace, b.Metadata.Trace)
	}
}

// TestPerfettoLargeRoundTrip exports the llm trace (≈300k events), checks
// it streams to valid JSON and re-analyses to the same result.
func TestPerfettoLargeRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("large trace under -short")
	}
	in := load(t, tracePath("llm"))
	path := exportPerfetto(t, in)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	t.Logf("llm Perfetto trace: %d bytes", st.Size())
	dec := json.NewDecoder(bufio.NewReader(f))
	var v struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	if len(v.TraceEvents) < len(in.Timeline.Events) {
		t.Errorf("%d events exported, timeline has %d", len(v.TraceEvents), len(in.Timeline.Events))
	}
	checkReimport(t, in, path)
}

// TestPerfettoIDs exports a hand-made trace with ids Perfetto cannot read
// as uint32 (string pids of InferScope traces become negative ids) and a
// device number that collides with a CPU pid.
func TestPerfettoIDs(t *testing.T) {
	tr := &trace.Trace{
		Meta:    trace.Meta{Source: "inferscope", Format: "object"},
		Threads: map[trace.ThreadKey]string{{Pid: -1, Tid: 1 << 40}: "main \"thread\""},
		Events: []trace.Event{
			{Name: "step", Ts: 1000, Dur: 10000, Pid: -1, Tid: 1 << 40, Kind: trace.KindSpan, SpanKind: "scope"},
			{Name: "cudaLaunchKernel", Ts: 2000, Dur: 500, Pid: -1, Tid: 1 << 40, Kind: trace.KindRuntime, Corr: 7},
			{Name: "gemm_kernel\x7f", Ts: 3000, Dur: 4000, Pid: 0, Tid: 7, Kind: trace.KindKernel, Corr: 7},
			{Name: "other", Ts: 1000, Dur: 1, Pid: 0, Tid: 0, Kind: trace.KindCPUOp},
		},
	}
	tl := timeline.Build(tr)
	r, err := analyze.Analyze(tl, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Result: r, Timeline: tl}
	path := exportPerfetto(t, in)
	raw, _ := os.ReadFile(path)
	if bytes.IndexByte(raw, 0x7f) >= 0 {
		t.Errorf("raw DEL in the output; Perfetto's tokenizer rejects control characters in strings")
	}
	pf := readPerfetto(t, path)
	checkPerfettoStructure(t, in, pf)
	for _, e := range pf.TraceEvents {
		if str(e, "cat") == "kernel" {
			var args struct{ Device, Stream int64 }
			_ = json.Unmarshal(e["args"], &args)
			if num(e, "pid") == 0 || args.Device != 0 || args.Stream != 7 {
				t.Errorf("kernel event %v: want the GPU process apart from CPU pid 0, args device 0 stream 7", e)
			}
		}
	}
	checkReimport(t, in, path)
}

func TestPerfettoWithoutTimeline(t *testing.T) {
	in := load(t, tracePath("planted_cpu_preprocess"))
	var b bytes.Buffer
	if err := Perfetto(&b, Input{Result: in.Result}); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.Bytes()) || !strings.Contains(b.String(), `"Attribution"`) {
		t.Errorf("without a timeline the export must still be valid JSON with the attribution track:\n%s", clip(b.String()))
	}
}

func TestAppendMicros(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{0, "0.000"}, {1, "0.001"}, {999, "0.999"}, {1000, "1.000"}, {1234567, "1234.567"},
		{4549135003258361, "4549135003258.361"}, {-1500, "-1.500"}, {-1, "-0.001"},
	} {
		if got := string(appendMicros(nil, c.ns)); got != c.want {
			t.Errorf("appendMicros(%d): expected %s, got %s", c.ns, c.want, got)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{`quote " and \ backslash`, `quote " and \ backslash`},
		{"tab\tnl\ncr\r nul\x00 del\x7f", "tab\tnl\ncr\r nul\x00 del\x7f"},
		{"<script>&", "<script>&"},
		{"µs → ünïcödé", "µs → ünïcödé"},
		{"bad \xff utf8", "bad \ufffd utf8"},
	} {
		enc := appendJSONString(nil, c.in)
		for _, b := range enc {
			if b < 0x20 || b == 0x7f {
				t.Errorf("%q encodes with raw control byte %#x: %s", c.in, b, enc)
			}
		}
		var got string
		if err := json.Unmarshal(enc, &got); err != nil || got != c.want {
			t.Errorf("appendJSONString(%q) = %s: decodes to %q (%v), expected %q", c.in, enc, got, err, c.want)
		}
	}
}
