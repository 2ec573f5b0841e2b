package driver

import (
	"os"
	"testing"
)

// BenchmarkPipeline runs import → timeline → analysis on the committed gpt2
// H100 trace, or on INFERSCOPE_BENCH_TRACE when set (e.g. a ≥1 GB trace
// from scripts/make_big_trace.py).
func BenchmarkPipeline(b *testing.B) {
	path := "../../testdata/gpu/llm.json.gz"
	if p := os.Getenv("INFERSCOPE_BENCH_TRACE"); p != "" {
		path = p
	}
	if st, err := os.Stat(path); err == nil {
		b.SetBytes(st.Size())
	}
	for i := 0; i < b.N; i++ {
		if _, err := Load(path, testOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
