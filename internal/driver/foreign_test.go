package driver

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/report"
)

// sharedDir finds ../shared beside the repository (CI puts it there).
func sharedDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("INFERSCOPE_SHARED"); d != "" {
		return d
	}
	d := filepath.Join("..", "..", "..", "shared")
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("../shared not found beside the repository (set INFERSCOPE_SHARED): %v", err)
	}
	return d
}

// Every foreign trace from HTA's test data gets a report in every format, or
// one clear line. Where the right answer is known, it is checked.
func TestForeignTraces(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "external", "hta-traces")
	want := map[string]struct {
		err   string // substring of the expected error, "" when a report is expected
		class string
	}{
		"execution_trace__benchmark_simple_add_et.json.gz":                  {err: "execution trace"},
		"cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz":           {class: analyze.ClassCPUOnly},
		"mtia_inference_trace__mtia_inference_rank_0.json.gz":               {class: analyze.ClassCPUOnly},
		"amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz":             {},
		"ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz": {},
		"trace_file_list__inference_rank_1.json.gz":                         {},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !strings.Contains(e.Name(), ".json") {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			in, err := Load(filepath.Join(dir, e.Name()), testOptions())
			w := want[e.Name()]
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Errorf("error is not an input error: %v", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				if w.err == "" || !strings.Contains(err.Error(), w.err) {
					t.Errorf("want a report (or error containing %q), got error: %v", w.err, err)
				}
				return
			}
			if w.err != "" {
				t.Fatalf("want error containing %q, got a report", w.err)
			}
			if w.class != "" && in.Result.Classification != w.class {
				t.Errorf("classification: want %s, got %s", w.class, in.Result.Classification)
			}
			for _, f := range report.Formats() {
				var buf bytes.Buffer
				if err := report.Render(&buf, f, in); err != nil {
					t.Errorf("render %s: %v", f, err)
				}
				if buf.Len() == 0 {
					t.Errorf("render %s: empty output", f)
				}
			}
		})
	}
	if n < 20 {
		t.Errorf("want the 20 HTA traces in %s, found %d", dir, n)
	}
}
