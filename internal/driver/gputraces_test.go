package driver

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/report"
)

var update = flag.Bool("update", false, "rewrite golden report files")

func testOptions() analyze.Options {
	o := analyze.DefaultOptions()
	o.ToolVersion = "test"
	return o
}

// The real H100 traces (testdata/gpu/README.md) and what a correct report
// must conclude about each.
var gpuCases = []struct {
	trace      string
	class      string
	top        string
	suggestion string // a substring one suggestion must contain
}{
	{"planted_pageable_h2d", analyze.ClassCopyBound, "copy-bound", "pin_memory()"},
	{"planted_sync_in_loop", analyze.ClassSyncBound, "sync-in-loop", ".item()"},
	{"planted_tiny_kernels", analyze.ClassLaunchBound, "launch-bound", "CUDA graph"},
	{"planted_cpu_preprocess", analyze.ClassCPUBound, "cpu-preprocessing", "off the critical path"},
	{"planted_gpu_bound", analyze.ClassGPUBound, "gpu-bound", "lower precision"},
	// The seed scenarios on an H100 are not what the seed expected: even
	// ResNet-50 at batch 4 leaves the GPU idle most of the time.
	{"llm", analyze.ClassLaunchBound, "launch-bound", "CUDA graph"},
	{"cnn", analyze.ClassLaunchBound, "launch-bound", "CUDA graph"},
	{"embedding", analyze.ClassLaunchBound, "launch-bound", "CUDA graph"},
}

func TestGPUTraces(t *testing.T) {
	for _, tc := range gpuCases {
		t.Run(tc.trace, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "gpu", tc.trace+".json.gz")
			in, err := Load(path, testOptions())
			if err != nil {
				t.Fatalf("Load(%s): %v", path, err)
			}
			r := in.Result
			if r.Classification != tc.class {
				t.Errorf("classification: want %s, got %s (%s)", tc.class, r.Classification, r.ClassReason)
			}
			if len(r.Diagnosis) == 0 || r.Diagnosis[0].ID != tc.top {
				t.Errorf("top diagnosis: want %s, got %v", tc.top, ids(r))
			}
			if !hasSuggestion(r, tc.suggestion) {
				t.Errorf("no suggestion mentions %q; got %v", tc.suggestion, texts(r))
			}
			if sum := breakdownSum(r); math.Abs(sum-r.E2EMs) > 0.01*r.E2EMs {
				t.Errorf("breakdown sums to %.4f ms, e2e is %.4f ms (more than 1%% apart)", sum, r.E2EMs)
			}
			saturated := r.Classification == analyze.ClassGPUBound && r.GPUBusyPct >= 90
			if !saturated && len(r.Suggestions) < 2 {
				t.Errorf("want ≥2 suggestions for a %s run, got %d", r.Classification, len(r.Suggestions))
			}
			for _, d := range r.Diagnosis {
				if len(d.Evidence) == 0 {
					t.Errorf("finding %s has no evidence", d.ID)
				}
			}
			checkGolden(t, in, tc.trace+".md", "md")
		})
	}
}

func checkGolden(t *testing.T, in report.Input, name, format string) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Render(&buf, format, in); err != nil {
		t.Fatalf("render %s: %v", format, err)
	}
	golden := filepath.Join("..", "..", "testdata", "golden", name)
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden %s (run `go test ./internal/driver -update` to create it): %v", golden, err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("%s differs from golden %s (rerun with -update if the change is intended):\n%s", format, golden, firstDiff(string(want), got))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, w, g)
		}
	}
	return "(same lines, different bytes)"
}

func ids(r *analyze.Result) []string {
	var out []string
	for _, d := range r.Diagnosis {
		out = append(out, d.ID)
	}
	return out
}

func texts(r *analyze.Result) []string {
	var out []string
	for _, s := range r.Suggestions {
		out = append(out, s.Text)
	}
	return out
}

func hasSuggestion(r *analyze.Result, sub string) bool {
	for _, s := range r.Suggestions {
		if strings.Contains(s.Text, sub) {
			return true
		}
	}
	return false
}

func breakdownSum(r *analyze.Result) float64 {
	var s float64
	for _, b := range r.Breakdown {
		s += b.Ms
	}
	return s
}

// The same workloads recorded by `inferscope run` on the H100 (our own trace
// format: Kineto events + Python spans on one clock) must read back to the
// same verdicts.
func TestRunTraces(t *testing.T) {
	for _, tc := range gpuCases {
		path := filepath.Join("..", "..", "testdata", "run-gpu", tc.trace+".json.gz")
		if _, err := os.Stat(path); err != nil {
			continue // llm's run trace is too large to commit
		}
		t.Run(tc.trace, func(t *testing.T) {
			in, err := Load(path, testOptions())
			if err != nil {
				t.Fatalf("Load(%s): %v", path, err)
			}
			r := in.Result
			if r.Metadata.Trace.Source != "inferscope" {
				t.Errorf("source: want inferscope, got %q", r.Metadata.Trace.Source)
			}
			if r.Classification != tc.class || len(r.Diagnosis) == 0 || r.Diagnosis[0].ID != tc.top {
				t.Errorf("want %s / %s, got %s / %v", tc.class, tc.top, r.Classification, ids(r))
			}
			if r.Metadata.Trace.ClockErrorNs <= 0 {
				t.Errorf("want a clock-sync error bound in the metadata, got %d ns", r.Metadata.Trace.ClockErrorNs)
			}
		})
	}
}

func TestSplitTrailingReport(t *testing.T) {
	cases := []struct {
		in           []string
		rest         string
		report, form string
	}{
		{[]string{"python", "infer.py", "--report", "r.md"}, "python infer.py", "r.md", ""},
		{[]string{"python", "infer.py", "--report", "r.html", "--format", "json"}, "python infer.py", "r.html", "json"},
		{[]string{"python", "infer.py", "--batch", "8"}, "python infer.py --batch 8", "", ""},
		{[]string{"--report", "x"}, "--report x", "", ""}, // nothing left to run: not ours
	}
	for _, c := range cases {
		rest, rep, form := SplitTrailingReport(c.in)
		if strings.Join(rest, " ") != c.rest || rep != c.report || form != c.form {
			t.Errorf("%v: want (%s, %q, %q), got (%s, %q, %q)", c.in, c.rest, c.report, c.form, strings.Join(rest, " "), rep, form)
		}
	}
}
