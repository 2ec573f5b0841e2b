package cupti

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscope/inferscope/internal/trace"
)

// Summary is what TestRecorded checks and logs for a real recording.
type summary struct {
	kinds                  map[trace.Kind]int
	launches, matched      int
	pageableH2D, pinnedH2D int
	minTs, maxTs           int64
}

func summarize(rec *Recording) summary {
	s := summary{kinds: map[trace.Kind]int{}, minTs: 1<<63 - 1}
	launch := map[int64]bool{}
	for _, e := range rec.Events {
		if e.Kind == trace.KindRuntime || e.Kind == trace.KindDriver {
			launch[e.Corr] = true
		}
	}
	for _, e := range rec.Events {
		s.kinds[e.Kind]++
		s.minTs, s.maxTs = min(s.minTs, e.Ts), max(s.maxTs, e.End())
		switch e.Kind {
		case trace.KindKernel:
			s.launches++
			if launch[e.Corr] {
				s.matched++
			}
		case trace.KindMemcpy:
			if e.Copy == trace.CopyH2D && e.Src == trace.MemPageable {
				s.pageableH2D++
			}
			if e.Copy == trace.CopyH2D && e.Src == trace.MemPinned {
				s.pinnedH2D++
			}
		}
	}
	return s
}

// TestRecorded decodes recordings made on an H100 (native/cupti/test/run_gpu.sh).
func TestRecorded(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "cupti")
	tests := []struct {
		file      string
		clean     bool
		minKernel int
		pageable  bool // expects pageable and pinned H2D copies
	}{
		{"vecadd.bin", true, 5, true},
		{"torch.bin", true, 200, true},
		{"torch-sync.bin", true, 200, true}, // SYNCHRONIZATION activity on (run 2)
		{"ctypes.bin", true, 200, true},
		{"kill.bin", false, 100, false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, tc.file))
			if os.IsNotExist(err) {
				t.Skip("not recorded")
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rec, err := Read(f)
			if err != nil {
				t.Fatal(err)
			}
			s := summarize(rec)
			t.Logf("%s: pid %d cupti %d, %d bytes, counts %v, kinds %v, kernels %d (%d with a launch record), nested %d (%d same corr), dropped %+v, clean %v truncated %v@%d, clock %s offset %.0f ns err %d ns, span %.3f s",
				tc.file, rec.Pid, rec.CUPTIVersion, rec.Bytes, rec.Counts, s.kinds, s.launches, s.matched, rec.Nested, rec.NestedSameCorr,
				rec.Dropped, rec.Clean, rec.Truncated, rec.TruncatedAt, rec.Clock.Method, float64(rec.Clock.Offset), rec.Clock.ErrNs, float64(s.maxTs-s.minTs)/1e9)
			if rec.Clean != tc.clean {
				t.Errorf("clean = %v, want %v", rec.Clean, tc.clean)
			}
			if s.kinds[trace.KindKernel] < tc.minKernel {
				t.Errorf("%d kernels, want ≥ %d", s.kinds[trace.KindKernel], tc.minKernel)
			}
			if tc.pageable && (s.pageableH2D == 0 || s.pinnedH2D == 0) {
				t.Errorf("H2D copies: %d pageable, %d pinned; want both", s.pageableH2D, s.pinnedH2D)
			}
			if rec.Clock.ErrNs < 0 || rec.Clock.ErrNs > 50_000 {
				t.Errorf("clock error %d ns", rec.Clock.ErrNs)
			}
			if s.launches > 0 && s.matched*10 < s.launches*9 {
				t.Errorf("only %d of %d kernels have a launch record with their correlation id", s.matched, s.launches)
			}
			// GPU times mapped onto CLOCK_MONOTONIC fall inside the process's life
			if s.minTs < rec.StartMono-1_000_000 {
				t.Errorf("event at %d before the collector started (%d)", s.minTs, rec.StartMono)
			}
		})
	}
}

// TestRecordedTornTail cuts a real recording inside its last records, as a
// SIGKILL during write(2) would: what precedes decodes, the cut is reported.
func TestRecordedTornTail(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "cupti", "kill.bin"))
	if err != nil {
		t.Skip("not recorded")
	}
	whole, err := Read(bytes.NewReader(b))
	if err != nil || whole.Truncated || whole.Clean {
		t.Fatalf("whole kill.bin: err %v truncated %v clean %v", err, whole.Truncated, whole.Clean)
	}
	for _, cut := range []int{3, 13, 47, 101} {
		rec, err := Read(bytes.NewReader(b[:len(b)-cut]))
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Truncated || rec.TruncatedAt > int64(len(b)-cut) || len(rec.Events) >= len(whole.Events) || len(rec.Events) < len(whole.Events)-4 {
			t.Errorf("cut %d: truncated %v at %d, %d of %d events", cut, rec.Truncated, rec.TruncatedAt, len(rec.Events), len(whole.Events))
		}
	}
}
