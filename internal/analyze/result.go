package analyze

import "github.com/inferscope/inferscope/internal/trace"

// SchemaVersion names the JSON report schema (docs/report-schema.md).
const SchemaVersion = "inferscope.report/v1"

// Result is everything a report shows. Its JSON form is the documented,
// stable machine-readable report.
type Result struct {
	Schema         string       `json:"schema"`
	Scope          ScopeInfo    `json:"scope"`
	E2EMs          float64      `json:"e2e_ms"` // mean wall time of an analysed iteration
	Latency        Stats        `json:"latency_ms"`
	Breakdown      []Slice      `json:"breakdown"`
	GPUBusyPct     float64      `json:"gpu_busy_pct"`
	GPUIdlePct     float64      `json:"gpu_idle_pct"`
	Classification string       `json:"classification"`
	ClassReason    string       `json:"classification_reason"`
	Diagnosis      []Finding    `json:"diagnosis"`
	Suggestions    []Suggestion `json:"suggestions"`
	GPUClasses     []Slice      `json:"gpu_compute_by_class,omitempty"`
	Metrics        Metrics      `json:"metrics"`
	TopKernels     []KernelStat `json:"top_kernels"`
	TopCPUOps      []OpStat     `json:"top_cpu_ops"`
	Iterations     []Iteration  `json:"iterations"`
	Metadata       Metadata     `json:"metadata"`
	// Timelines holds the attributed segments of each analysed iteration
	// for the HTML and Perfetto renderers; too bulky for the JSON report.
	Timelines []IterTimeline `json:"-"`
}

// IterTimeline is one analysed iteration as three lanes of segments, in the
// trace's ns: the attribution, the scope thread's state, the GPU's activity.
type IterTimeline struct {
	Index      int
	Start, End int64
	Attr       []Seg // Cat is a Category
	CPU        []Seg // Cat is a CPU state: preprocessing, op, launch, sync, memcpy, model
	GPU        []Seg // Cat is a kernel class or h2d/d2h/d2d; gaps are idle
}

// Seg is one interval of a lane.
type Seg struct {
	Start, End int64
	Cat        string
}

func appendSeg(segs *[]Seg, start, end int64, cat string) {
	if n := len(*segs); n > 0 && (*segs)[n-1].End == start && (*segs)[n-1].Cat == cat {
		(*segs)[n-1].End = end
		return
	}
	*segs = append(*segs, Seg{Start: start, End: end, Cat: cat})
}

// ScopeInfo says which region was analysed.
type ScopeInfo struct {
	Name       string   `json:"name"`
	Thread     string   `json:"thread"`
	Iterations int      `json:"iterations"`
	Analyzed   int      `json:"analyzed_iterations"`
	Excluded   []int    `json:"excluded_iterations,omitempty"` // warm-up outliers (1-based)
	Implicit   bool     `json:"implicit"`                      // no annotated region: whole trace
	Others     []string `json:"other_scopes,omitempty"`
}

// Stats summarises a distribution.
type Stats struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Slice is one part of a whole, in ms per iteration and percent.
type Slice struct {
	Category string  `json:"category"`
	Label    string  `json:"label"`
	Ms       float64 `json:"ms"`
	Pct      float64 `json:"pct"`
}

// Finding is one diagnosis: a claim with the evidence to check it.
type Finding struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Evidence []string `json:"evidence"`
	// Impact is the share of wall time (0..1) the finding explains; the
	// diagnosis list is ordered by it.
	Impact float64 `json:"impact"`
}

// Suggestion is one concrete change, tied to the finding that motivates it.
type Suggestion struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Reason string `json:"reason"` // finding id
}

// Metrics are the per-iteration facts behind the findings.
type Metrics struct {
	Kernels          int     `json:"kernels_per_iter"`
	KernelMedianUs   float64 `json:"kernel_median_us"`
	KernelP90Us      float64 `json:"kernel_p90_us"`
	SmallKernelPct   float64 `json:"kernels_under_10us_pct"`
	LaunchRatePerS   float64 `json:"launches_per_s"`
	LaunchCalls      int     `json:"launch_calls_per_iter"`
	LaunchCallMeanUs float64 `json:"launch_call_mean_us"`
	// LaunchCallsSampled: the collector recorded launch calls in sampled
	// windows only; LaunchCalls is then the kernel count, and
	// LaunchCallMeanUs and LaunchDelayUs come from LaunchCallsSeen calls.
	LaunchCallsSampled bool    `json:"launch_calls_sampled,omitempty"`
	LaunchCallsSeen    int     `json:"launch_calls_seen,omitempty"`
	LaunchDelayUs      float64 `json:"launch_to_start_median_us"`
	GapMedianUs        float64 `json:"gpu_gap_median_us"`
	SyncCalls          int     `json:"sync_calls_per_iter"`
	SyncMs             float64 `json:"sync_call_ms"`
	ItemCalls          int     `json:"item_calls_per_iter"`
	PostSyncIdleMs     float64 `json:"post_sync_idle_ms"`
	Copies             []Copy  `json:"copies"`
	FP32GEMMMs         float64 `json:"fp32_gemm_ms"`
	GEMMMs             float64 `json:"gemm_ms"`
	ComputeCapab       string  `json:"compute_capability,omitempty"`
	// Preprocessing names what the CPU was doing during CPU preprocessing
	// (tokenizer spans, host code between ops), per iteration.
	Preprocessing []OpStat `json:"preprocessing,omitempty"`
}

// Copy summarises one direction of copies per iteration.
type Copy struct {
	Dir           string  `json:"dir"`
	Count         int     `json:"count"`
	Bytes         int64   `json:"bytes"`
	DMAms         float64 `json:"dma_ms"`
	GBps          float64 `json:"gb_per_s"`
	PageableCount int     `json:"pageable_count"`
	PageableBytes int64   `json:"pageable_bytes"`
	BlockedMs     float64 `json:"cpu_blocked_ms"`
}

// KernelStat is one kernel name's time per iteration.
type KernelStat struct {
	Name    string  `json:"name"`
	Class   string  `json:"class"`
	Count   int     `json:"count"`
	TotalMs float64 `json:"total_ms"`
	MeanUs  float64 `json:"mean_us"`
	Pct     float64 `json:"pct_of_gpu"`
}

// OpStat is one CPU operator's exclusive (self) time per iteration.
type OpStat struct {
	Name   string  `json:"name"`
	Count  int     `json:"count"`
	SelfMs float64 `json:"self_ms"`
	Pct    float64 `json:"pct_of_e2e"`
}

// Iteration is one execution of the scope.
type Iteration struct {
	Index      int     `json:"index"`
	StartMs    float64 `json:"start_ms"` // from the first iteration's start
	Ms         float64 `json:"ms"`
	GPUBusyPct float64 `json:"gpu_busy_pct"`
	Excluded   bool    `json:"excluded"`
}

// Metadata is provenance: where the numbers come from and how far to trust them.
type Metadata struct {
	Trace       trace.Meta `json:"trace"`
	ToolVersion string     `json:"tool_version"`
	Events      int        `json:"events"`
	Assumptions []string   `json:"assumptions"`
}
