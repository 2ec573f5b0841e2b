package trace

// Trace is one imported or collected trace: events plus what is known about
// where they came from.
type Trace struct {
	Events []Event
	Meta   Meta
	// Threads maps "pid/tid" to a thread name where the source named it.
	Threads map[ThreadKey]string
}

// ThreadKey names a CPU thread or a GPU stream.
type ThreadKey struct{ Pid, Tid int64 }

// Meta is the provenance of a trace, carried into every report.
type Meta struct {
	Source        string         `json:"source"` // "kineto", "inferscope"
	Format        string         `json:"format"` // "object" or "list" (legacy) for Kineto
	SchemaVersion int            `json:"schema_version,omitempty"`
	Path          string         `json:"path,omitempty"`
	Devices       []Device       `json:"devices,omitempty"`
	CUDADriver    int            `json:"cuda_driver_version,omitempty"`
	CUDARuntime   int            `json:"cuda_runtime_version,omitempty"`
	CUPTI         int            `json:"cupti_version,omitempty"`
	Collector     string         `json:"collector,omitempty"`
	ClockSync     string         `json:"clock_sync_method,omitempty"`
	ClockErrorNs  int64          `json:"clock_sync_error_ns,omitempty"`
	ClockErrorPct float64        `json:"clock_sync_error_pct,omitempty"` // of the analysed e2e latency
	Unknown       map[string]int `json:"unknown_categories,omitempty"`   // kept as KindOther, counted
	Skipped       int            `json:"skipped_events,omitempty"`       // metadata, flows, malformed
	Duplicates    int            `json:"duplicates_dropped"`
	Dropped       int64          `json:"dropped_records"`
	// LaunchSampledPct is the share of the run (%) in which the native
	// collector recorded launch calls, when it sampled them; 0: every
	// launch was recorded (or the collector records none).
	LaunchSampledPct float64        `json:"launch_calls_sampled_pct,omitempty"`
	Platform         string         `json:"platform,omitempty"` // "cuda", "rocm", "mtia", "cpu"
	Command          []string       `json:"command,omitempty"`
	Incomplete       string         `json:"incomplete,omitempty"` // why the run was cut short
	Errors           []string       `json:"errors,omitempty"`     // workload errors (e.g. OOM)
	Extra            map[string]any `json:"extra,omitempty"`
}

// Device is one accelerator as the trace describes it.
type Device struct {
	ID           int    `json:"id"`
	Name         string `json:"name"`
	ComputeMajor int    `json:"compute_major,omitempty"`
	ComputeMinor int    `json:"compute_minor,omitempty"`
	NumSMs       int    `json:"num_sms,omitempty"`
	MemoryBytes  int64  `json:"memory_bytes,omitempty"`
}
