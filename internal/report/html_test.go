package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace/kineto"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenVersion pins the tool version written into reports, so goldens do
// not change with the build.
const goldenVersion = "golden-test"

const gpuTraces = "../../testdata/gpu"

// testOptions are the analysis options of every test here.
func testOptions() analyze.Options {
	o := analyze.DefaultOptions()
	o.ToolVersion = goldenVersion
	return o
}

var loaded sync.Map // path → *loadedTrace

type loadedTrace struct {
	once sync.Once
	in   Input
	err  error
}

// load imports and analyses a trace once per test binary; renderers only
// read the result and timeline, so tests may share them.
func load(t testing.TB, path string) Input {
	t.Helper()
	v, _ := loaded.LoadOrStore(path, &loadedTrace{})
	lt := v.(*loadedTrace)
	lt.once.Do(func() { lt.in, lt.err = analyzeFile(path) })
	if lt.err != nil {
		t.Fatalf("load %s: %v", path, lt.err)
	}
	return lt.in
}

func analyzeFile(path string) (Input, error) {
	tr, err := kineto.ReadFile(path)
	if err != nil {
		return Input{}, err
	}
	tl := timeline.Build(tr)
	r, err := analyze.Analyze(tl, testOptions())
	if err != nil {
		return Input{}, err
	}
	return Input{Result: r, Timeline: tl}, nil
}

// traceCases are the real H100 traces; llm is the large one (~12k kernels
// per iteration) and is skipped under -short.
var traceCases = []struct {
	name  string
	large bool
}{
	{"planted_pageable_h2d", false},
	{"planted_cpu_preprocess", false},
	{"planted_gpu_bound", false},
	{"planted_sync_in_loop", false},
	{"planted_tiny_kernels", false},
	{"cnn", false},
	{"embedding", false},
	{"llm", true},
}

func tracePath(name string) string { return filepath.Join(gpuTraces, name+".json.gz") }

func renderHTML(t *testing.T, in Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, "html", in); err != nil {
		t.Fatalf("render html: %v", err)
	}
	return b.String()
}

func TestFormatsRegistered(t *testing.T) {
	for _, f := range []string{"html", "perfetto"} {
		found := false
		for _, g := range Formats() {
			found = found || g == f
		}
		if !found {
			t.Errorf("format %q not registered; have %v", f, Formats())
		}
	}
	for path, want := range map[string]string{"r.html": "html", "trace_perfetto.json": "perfetto"} {
		if got := FormatFor(path); got != want {
			t.Errorf("FormatFor(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestHTMLGolden(t *testing.T) {
	in := load(t, tracePath("planted_pageable_h2d"))
	got := renderHTML(t, in)
	golden := filepath.Join("testdata", "planted_pageable_h2d.html.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", golden, len(got))
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run `go test ./internal/report -run TestHTMLGolden -update` to create it): %v", err)
	}
	if got != string(want) {
		out := filepath.Join(t.TempDir(), "got.html")
		_ = os.WriteFile(out, []byte(got), 0o644)
		t.Errorf("HTML differs from %s (full output in %s; -update rewrites the golden):\n%s", golden, out, lineDiff(string(want), got, 8))
	}
}

// lineDiff shows the first n differing lines as expected/got pairs.
func lineDiff(want, got string, n int) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < n; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			// long lines: show both from a little before the first difference
			c := 0
			for c < len(w) && c < len(g) && w[c] == g[c] {
				c++
			}
			from := max(0, c-60)
			cut := func(s string) string {
				if from > len(s) {
					return ""
				}
				s = s[from:]
				if from > 0 {
					s = "…" + s
				}
				return clip(s)
			}
			fmt.Fprintf(&b, "line %d, column %d:\n  expected: %s\n  got:      %s\n", i+1, c+1, cut(w), cut(g))
			shown++
		}
	}
	if len(wl) != len(gl) {
		fmt.Fprintf(&b, "expected %d lines, got %d\n", len(wl), len(gl))
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

var externalRef = regexp.MustCompile(`(?i)(src\s*=|href\s*=|@import|url\(|https?://[^\s"'<]*\.(js|css|woff2?|ttf|png|svg)\b|<link|<script)`)

func TestHTMLTraces(t *testing.T) {
	for _, tc := range traceCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.large && testing.Short() {
				t.Skip("large trace under -short")
			}
			in := load(t, tracePath(tc.name))
			r := in.Result
			out := renderHTML(t, in)
			t.Logf("%s: %d bytes of HTML", tc.name, len(out))
			if !strings.HasPrefix(out, "<!DOCTYPE html>") {
				t.Errorf("page does not start with a doctype: %q", clip(out))
			}
			if m := externalRef.FindString(out); m != "" {
				t.Errorf("page references an external resource (%q); it must be self-contained", m)
			}
			if max := 1500 << 10; len(out) > max {
				t.Errorf("page is %d bytes, want < %d", len(out), max)
			}
			wants := []string{
				fmt.Sprintf("%.2f ms", r.E2EMs),
				">" + r.Classification + "<",
				"<h2>Breakdown</h2>", "<h2>Diagnosis</h2>", "<h2>Suggestions</h2>", "<h2>Details</h2>", "<h3>Trace</h3>",
			}
			for _, s := range r.Breakdown {
				wants = append(wants, s.Label, fmt.Sprintf("%.3f", s.Ms))
			}
			for _, d := range r.Diagnosis {
				wants = append(wants, "["+d.ID+"]")
			}
			if k := representative(r.Timelines); k >= 0 {
				wants = append(wants, fmt.Sprintf("Timeline of iteration %d", r.Timelines[k].Index), "<svg", "Attribution", "CPU thread", "GPU")
			}
			for _, w := range wants {
				if !strings.Contains(out, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			checkSVG(t, out)
		})
	}
}

// checkSVG parses the inline SVG as XML: it must be well-formed on its own
// (it is also valid as a standalone image), with a bounded number of marks.
func checkSVG(t *testing.T, page string) {
	t.Helper()
	i, j := strings.Index(page, "<svg"), strings.Index(page, "</svg>")
	if i < 0 || j < i {
		t.Fatalf("no inline SVG")
	}
	svg := page[i : j+len("</svg>")]
	dec := xml.NewDecoder(strings.NewReader(svg))
	rects, titles := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect":
				rects++
			case "title":
				titles++
			}
		}
	}
	if rects == 0 || titles == 0 {
		t.Errorf("SVG has %d rects and %d tooltips", rects, titles)
	}
	if rects > 12000 {
		t.Errorf("SVG has %d rects: narrow segments are not merged", rects)
	}
	t.Logf("SVG: %d bytes, %d rects, %d tooltips", len(svg), rects, titles)
}

// TestHTMLEscapesWorkloadStrings puts markup in every string that comes from
// the workload or the trace and checks that none of it survives unescaped.
func TestHTMLEscapesWorkloadStrings(t *testing.T) {
	payloads := []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(1)>`,
		`'><svg onload=alert(1)>`,
	}
	forbidden := []string{"<script", "<img", "<svg onload"}
	for _, p := range payloads {
		t.Run(p, func(t *testing.T) {
			base := load(t, tracePath("planted_pageable_h2d"))
			r := *base.Result // shallow copy; every slice touched below is copied
			r.Scope.Name = p
			r.Scope.Thread = "pid 1 tid 1 (" + p + ")"
			r.Scope.Others = []string{p, "other " + p}
			r.ClassReason = "because " + p
			r.TopKernels = append([]analyze.KernelStat(nil), r.TopKernels...)
			r.TopKernels[0].Name = p
			r.TopKernels[0].Class = p
			r.TopCPUOps = append([]analyze.OpStat(nil), r.TopCPUOps...)
			r.TopCPUOps[0].Name = p
			r.Diagnosis = append([]analyze.Finding(nil), r.Diagnosis...)
			r.Diagnosis[0].Evidence = append([]string{"kernel " + p}, r.Diagnosis[0].Evidence...)
			r.Diagnosis[0].Title = p
			r.Diagnosis[0].ID = p
			r.Suggestions = append([]analyze.Suggestion{{ID: p, Text: "`" + p + "` and " + p, Reason: p}}, r.Suggestions...)
			r.Breakdown = append([]analyze.Slice{{Category: p, Label: p, Ms: 1, Pct: 10}}, r.Breakdown...)
			r.Metadata.Trace.Path = "/tmp/" + p + ".json"
			r.Metadata.Trace.Devices = append(r.Metadata.Trace.Devices[:0:0], r.Metadata.Trace.Devices...)
			r.Metadata.Trace.Devices[0].Name = p
			r.Metadata.Trace.Errors = []string{p}
			r.Metadata.Trace.Incomplete = p
			r.Metadata.Trace.Command = []string{"python", p}
			r.Metadata.Trace.Unknown = map[string]int{p: 1}
			r.Metadata.Assumptions = []string{p}
			r.Metadata.ToolVersion = p
			r.Classification = p
			r.Timelines = append([]analyze.IterTimeline(nil), r.Timelines...)
			for i := range r.Timelines {
				it := &r.Timelines[i]
				it.GPU = append(append([]analyze.Seg(nil), it.GPU...), analyze.Seg{Start: it.End - 10, End: it.End, Cat: p})
			}
			out := renderHTML(t, Input{Result: &r, Timeline: base.Timeline})
			low := strings.ToLower(out)
			for _, f := range append(forbidden, strings.ToLower(p)) {
				if i := strings.Index(low, f); i >= 0 {
					t.Errorf("unescaped %q in the page: …%s…", f, out[max(0, i-80):min(len(out), i+80)])
				}
			}
			if !strings.Contains(out, "alert(1)") {
				t.Errorf("the payload vanished instead of being shown escaped")
			}
		})
	}
}

func TestRepresentative(t *testing.T) {
	mk := func(durs ...int64) []analyze.IterTimeline {
		var out []analyze.IterTimeline
		var t0 int64
		for i, d := range durs {
			out = append(out, analyze.IterTimeline{Index: i + 1, Start: t0, End: t0 + d})
			t0 += d
		}
		return out
	}
	cases := []struct {
		name string
		durs []int64
		want int
	}{
		{"none", nil, -1},
		{"one", []int64{5}, 0},
		{"odd", []int64{30, 10, 20}, 2},
		{"even takes the lower median", []int64{40, 10}, 1},
		{"ties keep order", []int64{10, 10, 10}, 1},
		{"four", []int64{4, 1, 3, 2}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := representative(mk(c.durs...)); got != c.want {
				t.Errorf("representative(%v) = %d, want %d", c.durs, got, c.want)
			}
		})
	}
}

func TestLayoutLane(t *testing.T) {
	id := func(s string) string { return s }
	// 1000 px for 1 ms: 1 µs per px, so segments under 500 ns are narrow.
	const nsPerPx = 1000.0
	many := func(n int, dur, gap int64, cats ...string) []analyze.Seg {
		var out []analyze.Seg
		t := int64(0)
		for i := 0; i < n; i++ {
			out = append(out, analyze.Seg{Start: t, End: t + dur, Cat: cats[i%len(cats)]})
			t += dur + gap
		}
		return out
	}
	cases := []struct {
		name      string
		segs      []analyze.Seg
		gaps      bool
		wantMarks int
		check     func(t *testing.T, m []markView)
	}{
		{
			name:      "wide segments are drawn one to one",
			segs:      []analyze.Seg{{Start: 0, End: 5000, Cat: "op"}, {Start: 5000, End: 9000, Cat: "launch"}},
			wantMarks: 2,
			check: func(t *testing.T, m []markView) {
				if m[0].Rects[0].Class != "c-op" || m[1].Rects[0].X != "5" {
					t.Errorf("marks = %+v", m)
				}
				if !strings.Contains(m[0].Tip, "framework op") && !strings.Contains(m[0].Tip, "op: at 0.000 ms, 5.0 µs") {
					t.Errorf("tooltip %q", m[0].Tip)
				}
			},
		},
		{
			// 1000 contiguous 100 ns segments = 100 px, in 2 px columns
			name:      "narrow contiguous segments become stacked columns",
			segs:      many(1000, 100, 0, "op", "op", "op", "launch"),
			wantMarks: 50,
			check: func(t *testing.T, m []markView) {
				for _, mk := range m {
					var h float64
					for _, r := range mk.Rects {
						var x float64
						fmt.Sscan(r.H, &x)
						h += x - 0.1
					}
					if h < svgLaneH-0.5 || h > svgLaneH+0.5 {
						t.Fatalf("column heights add up to %.2f, want the lane height %v: %+v", h, svgLaneH, mk)
					}
					if !strings.Contains(mk.Tip, "short segments") || !strings.Contains(mk.Tip, "op 75%") {
						t.Fatalf("tooltip %q", mk.Tip)
					}
				}
			},
		},
		{
			// 25% busy GPU: 100 ns kernels every 400 ns, 80 px in 2 px columns
			name:      "a sparse GPU lane shows its busy share as column height",
			segs:      many(200, 100, 300, "gemm"),
			gaps:      true,
			wantMarks: 40,
			check: func(t *testing.T, m []markView) {
				r := m[0].Rects[0]
				var h float64
				fmt.Sscan(r.H, &h)
				if h < svgLaneH*0.2 || h > svgLaneH*0.3 || !strings.Contains(m[0].Tip, "idle 7") {
					t.Errorf("column %+v (tooltip %q): want ~25%% of the lane high and idle ~75%% in the tooltip", r, m[0].Tip)
				}
			},
		},
		{
			name:      "isolated narrow segments keep a minimum width",
			segs:      []analyze.Seg{{Start: 0, End: 10, Cat: "gemm"}, {Start: 100000, End: 100010, Cat: "h2d"}},
			gaps:      true,
			wantMarks: 2,
			check: func(t *testing.T, m []markView) {
				if m[1].Rects[0].W != fmtPx(svgMinPx+0.2) || m[1].Rects[0].Class != "c-h2d" {
					t.Errorf("mark %+v", m[1])
				}
			},
		},
		{
			name:      "unknown categories get a neutral class",
			segs:      []analyze.Seg{{Start: 0, End: 5000, Cat: "no such thing"}},
			wantMarks: 1,
			check: func(t *testing.T, m []markView) {
				if m[0].Rects[0].Class != "c-unknown" {
					t.Errorf("class %q", m[0].Rects[0].Class)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := layoutLane(c.segs, 0, nsPerPx, 0, id, c.gaps)
			if len(m) != c.wantMarks {
				t.Fatalf("%d marks, want %d", len(m), c.wantMarks)
			}
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ raw, want float64 }{
		{0, 1}, {0.7, 1}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {95, 100}, {102.6, 200}, {0.013, 0.02},
	} {
		if got := niceStep(c.raw); fmt.Sprintf("%g", got) != fmt.Sprintf("%g", c.want) {
			t.Errorf("niceStep(%g) = %g, want %g", c.raw, got, c.want)
		}
	}
}

func TestCodeSpans(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"use `torch.compile(model)` now", "use <code>torch.compile(model)</code> now"},
		{"`<b>` & more", "<code>&lt;b&gt;</code> &amp; more"},
		{"unbalanced ` <x>", "unbalanced ` &lt;x&gt;"},
	} {
		if got := string(codeSpans(c.in)); got != c.want {
			t.Errorf("codeSpans(%q):\n  expected: %s\n  got:      %s", c.in, c.want, got)
		}
	}
}
