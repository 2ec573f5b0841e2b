package kineto

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/timeline"
)

// FuzzRead: any input either imports or fails with an error; an imported
// trace survives the whole pipeline. Never a panic.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "s", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
		  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 7}},
		  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 30, "args": {"correlation": 7, "device": 0, "stream": 7}},
		  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 60, "dur": 10, "args": {"bytes": 4096}},
		  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 70, "dur": 20}]}`,
		`[{"ph": "X", "cat": "Kernel", "name": "k", "pid": "0", "tid": "stream 7", "ts": 1.5, "dur": 2.25}]`,
		`{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "H100"}], "traceEvents": []}`,
		`{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1712195495519689.047, "dur": -3}]}`,
		`{"nodes": [], "schema": "1"}`,
		``, `[`, `{"traceEvents": [`, `"x"`, `{"traceEvents": {}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		tl := timeline.Build(tr)
		_, _ = analyze.Analyze(tl, analyze.DefaultOptions())
	})
}

func TestParseMicros(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1.5", 1500, true},
		{"4549135003258.361", 4549135003258361, true},
		{"1712195495519689.047", 1712195495519689047, true},
		{"12.3456789", 12345, true},
		{"-2.5", -2500, true},
		{"1e3", 1000000, true},
		{"abc", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		got, ok := parseMicros([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseMicros(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The scanner must cut values at the right place whatever the buffer
// boundaries: escaped quotes and backslashes at every position of a 1 MiB
// read must still give the same events.
func TestScannerEscapesAcrossBuffers(t *testing.T) {
	want := `a\"b\\" c"\`
	name, _ := json.Marshal(want)
	for pad := 0; pad < 40; pad++ {
		var buf bytes.Buffer
		buf.WriteString(`{"traceEvents": [`)
		buf.WriteString(`{"ph": "X", "cat": "cpu_op", "name": "` + strings.Repeat("x", 1<<20-30+pad) + `", "pid": 1, "tid": 1, "ts": 0, "dur": 1},`)
		buf.WriteString(`{"ph": "X", "cat": "cpu_op", "name": ` + string(name) + `, "pid": 1, "tid": 1, "ts": 2, "dur": 1}]}`)
		tr, err := Read(&buf)
		if err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		if len(tr.Events) != 2 {
			t.Fatalf("pad %d: want 2 events, got %d", pad, len(tr.Events))
		}
		found := false
		for _, e := range tr.Events {
			found = found || e.Name == want
		}
		if !found {
			t.Errorf("pad %d: escaped name not decoded intact", pad)
		}
	}
}
