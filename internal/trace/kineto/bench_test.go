package kineto

import (
	"os"
	"testing"
)

// BenchmarkReadLLM measures import throughput (MB/s) on the committed
// gpt2 H100 trace, decompressed once outside the timed loop.
func BenchmarkReadLLM(b *testing.B) {
	path := os.Getenv("INFERSCOPE_BENCH_TRACE")
	if path == "" {
		b.Skip("set INFERSCOPE_BENCH_TRACE to an uncompressed trace (e.g. zcat testdata/gpu/llm.json.gz > /tmp/llm.json)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
