package driver

import (
	"path/filepath"
	"testing"

	"github.com/inferscope/inferscope/internal/analyze"
)

// TestNativeRecordings analyses raw directories written on an H100 by
// `inferscope run --collector cupti --keep-raw` (span stream + CUPTI
// recording, or CUPTI alone for a non-Python program) and checks the
// verdicts the Kineto path gives on the same workloads.
func TestNativeRecordings(t *testing.T) {
	tests := []struct {
		dir, scope, class, top string
		minKernels             int
		sampled                bool // launch calls sampled (LAUNCH_WINDOW records)
	}{
		{"planted_sync_in_loop", "sync_in_loop", "sync-bound", "sync-in-loop", 200, false},
		{"embedding", "embedding_inference", "launch-bound", "launch-bound", 100, false},
		{"vecadd", "(whole trace)", "", "", 5, false},
		// Recorded with sampled launch calls (the default since): the
		// launch loop must not read as CPU preprocessing.
		{"sampled_tiny_kernels", "tiny_kernels", "launch-bound", "launch-bound", 4000, true},
		{"sampled_sync_in_loop", "sync_in_loop", "sync-bound", "sync-in-loop", 400, true},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			in, err := Load(filepath.Join("..", "..", "testdata", "native", tc.dir), analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			r := in.Result
			if r.Scope.Name != tc.scope {
				t.Errorf("scope: want %q, got %q", tc.scope, r.Scope.Name)
			}
			if tc.class != "" && r.Classification != tc.class {
				t.Errorf("classification: want %s, got %s (%s)", tc.class, r.Classification, r.ClassReason)
			}
			if tc.top != "" && (len(r.Diagnosis) == 0 || r.Diagnosis[0].ID != tc.top) {
				t.Errorf("top diagnosis: want %s, got %+v", tc.top, r.Diagnosis)
			}
			if r.Metrics.Kernels < tc.minKernels/max(1, r.Scope.Analyzed) {
				t.Errorf("kernels per iteration: want >= %d, got %d", tc.minKernels/max(1, r.Scope.Analyzed), r.Metrics.Kernels)
			}
			if r.Metrics.LaunchCallsSampled != tc.sampled {
				t.Errorf("launch calls sampled: want %v, got %v (trace: %.1f%% of the run covered)", tc.sampled, r.Metrics.LaunchCallsSampled, r.Metadata.Trace.LaunchSampledPct)
			}
			if r.Metadata.Trace.Collector != "" && r.Metadata.Trace.Collector != "cupti" {
				t.Errorf("collector: want cupti, got %q", r.Metadata.Trace.Collector)
			}
			var sum float64
			for _, s := range r.Breakdown {
				sum += s.Ms
			}
			if d := sum - r.E2EMs; d > 0.01*r.E2EMs || d < -0.01*r.E2EMs {
				t.Errorf("breakdown sums to %.3f ms, e2e %.3f ms: want within 1%%", sum, r.E2EMs)
			}
		})
	}
}
