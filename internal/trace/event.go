// Package trace is InferScope's event model: what every collector and importer
// produces and what the timeline consumes. Times are integer nanoseconds on
// one clock per trace (the trace's own; the timeline aligns clocks).
package trace

// Kind is what an event is, independent of which collector wrote it.
type Kind uint8

const (
	KindOther          Kind = iota
	KindCPUOp               // framework operator (aten::*, cpu_op)
	KindUserAnnotation      // record_function / scope() regions
	KindPythonFunction      // python_function (stack sampling / with_stack)
	KindRuntime             // CUDA/HIP runtime API call on a CPU thread
	KindDriver              // CUDA driver API call on a CPU thread
	KindKernel              // GPU kernel execution
	KindMemcpy              // GPU copy execution
	KindMemset              // GPU memset execution
	KindGPUAnnotation       // gpu_user_annotation: a CPU region projected on a stream
	KindSync                // cuda_sync: a synchronisation record (CUPTI)
	KindSpan                // InferScope Python span (tokenize, forward, ...)
	KindInstant             // zero-duration marker
	numKinds
)

var kindNames = [...]string{"other", "cpu_op", "user_annotation", "python_function", "cuda_runtime",
	"cuda_driver", "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync", "inferscope_span", "instant"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// OnGPU reports whether events of this kind run on a device stream rather
// than a CPU thread.
func (k Kind) OnGPU() bool {
	return k == KindKernel || k == KindMemcpy || k == KindMemset || k == KindGPUAnnotation || k == KindSync
}

// CopyDir is the direction of a memory copy.
type CopyDir uint8

const (
	CopyNone CopyDir = iota
	CopyH2D
	CopyD2H
	CopyD2D
	CopyH2H
	CopyP2P
)

func (d CopyDir) String() string {
	return [...]string{"", "H2D", "D2H", "D2D", "H2H", "P2P"}[d]
}

// MemKind is where one side of a copy lives; pageable host memory forces a
// staged, synchronous copy through a driver bounce buffer.
type MemKind uint8

const (
	MemUnknown MemKind = iota
	MemPageable
	MemPinned
	MemDevice
	MemManaged
	MemArray
)

func (m MemKind) String() string {
	return [...]string{"unknown", "pageable", "pinned", "device", "managed", "array"}[m]
}

// Event is one interval (or instant) on a CPU thread or GPU stream.
// For CPU events Pid/Tid are process and thread; for GPU events Pid is the
// device and Tid the stream. Names are interned by the importer, so equal
// names share storage.
type Event struct {
	Name  string
	Ts    int64 // start, ns
	Dur   int64 // ns
	Pid   int64
	Tid   int64
	Corr  int64 // launch ↔ execution correlation id (0: none)
	ExtID int64 // framework op ↔ launch (External id)
	Bytes int64
	Kind  Kind
	Copy  CopyDir
	Src   MemKind
	Dst   MemKind
	// SpanKind carries the InferScope span kind (tokenize, forward, ...) or
	// the original category for KindOther.
	SpanKind string
}

// End is the event's end time in ns.
func (e *Event) End() int64 { return e.Ts + e.Dur }
