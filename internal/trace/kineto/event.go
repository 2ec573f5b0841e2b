package kineto

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/inferscope/inferscope/internal/trace"
)

// importer owns one import: the header, the workers and what they share.
type importer struct {
	t       trace.Trace
	own     *trace.Meta
	events  int
	batches chan *batch
	free    chan *batch
	workers []*worker
	wg      sync.WaitGroup
	idMu    sync.Mutex
	strIDs  map[string]int64 // string pids/tids ("Spans") → synthetic ids
}

func newImporter() *importer {
	return &importer{t: trace.Trace{Threads: map[trace.ThreadKey]string{}}, strIDs: map[string]int64{}}
}

// worker decodes batches of raw events on its own goroutine.
type worker struct {
	im      *importer
	p       fastjson.Parser
	names   map[string]string
	numBuf  []byte
	chunks  [][]trace.Event // fixed-size chunks: no copying as they fill
	unknown map[string]int
	skipped int
	threads map[trace.ThreadKey]string
}

func newWorker(im *importer) *worker {
	return &worker{im: im, names: make(map[string]string, 4096), unknown: map[string]int{}, threads: map[trace.ThreadKey]string{}}
}

// categories maps Kineto's category names (lower-cased; very old Kineto
// wrote "Kernel", "Runtime") to event kinds.
var categories = map[string]trace.Kind{
	"cpu_op":              trace.KindCPUOp,
	"operator":            trace.KindCPUOp,
	"user_annotation":     trace.KindUserAnnotation,
	"python_function":     trace.KindPythonFunction,
	"cuda_runtime":        trace.KindRuntime,
	"runtime":             trace.KindRuntime,
	"cuda_driver":         trace.KindDriver,
	"kernel":              trace.KindKernel,
	"gpu_memcpy":          trace.KindMemcpy,
	"memcpy":              trace.KindMemcpy,
	"gpu_memset":          trace.KindMemset,
	"memset":              trace.KindMemset,
	"gpu_user_annotation": trace.KindGPUAnnotation,
	"cuda_sync":           trace.KindSync,
	"inferscope":          trace.KindSpan,
	"cpu_instant_event":   trace.KindInstant,
}

// ignored are categories that carry no interval of work: Kineto's own
// bookkeeping spans and flow arrows (correlation ids already link launches).
// Our own exported attribution and iteration tracks are derived data: a
// re-imported InferScope trace is analysed from the events underneath them.
var ignored = map[string]bool{"trace": true, "ac2g": true, "async_gpu": true, "async_cpu_to_gpu": true, "fwdbwd": true,
	"inferscope_attribution": true, "inferscope_iteration": true}

func (im *worker) intern(b []byte) string {
	if s, ok := im.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(im.names) < 1<<20 { // unbounded unique names (e.g. per-call ids) must not grow the table forever
		im.names[s] = s
	}
	return s
}

func (im *worker) event(raw []byte) {
	v, err := im.p.ParseBytes(raw)
	if err != nil || v.Type() != fastjson.TypeObject {
		im.skipped++
		return
	}
	ph := v.GetStringBytes("ph")
	switch string(ph) {
	case "X", "i", "I":
	case "M":
		im.metadata(v)
		return
	default: // flows, counters, B/E pairs: not intervals of work we attribute
		im.skipped++
		return
	}
	cat := v.GetStringBytes("cat")
	kind, known := categories[string(cat)]
	lc := ""
	if !known {
		lc = strings.ToLower(string(cat))
		kind, known = categories[lc]
	}
	if ignored[string(cat)] || ignored[lc] || (len(cat) == 0 && string(ph) != "X") {
		im.skipped++
		return
	}
	if !known {
		if len(im.unknown) < 256 {
			im.unknown[lc]++
		}
		kind = trace.KindOther
	}
	if string(ph) != "X" {
		kind = trace.KindInstant
	}
	ts, ok := im.micros(v.Get("ts"))
	if !ok {
		im.skipped++
		return
	}
	dur, _ := im.micros(v.Get("dur"))
	if dur < 0 {
		dur = 0
	}
	e := trace.Event{Name: im.intern(v.GetStringBytes("name")), Ts: ts, Dur: dur, Kind: kind}
	e.Pid = im.id(v.Get("pid"))
	e.Tid = im.id(v.Get("tid"))
	if !known {
		e.SpanKind = im.intern(cat)
	}
	if a := v.Get("args"); a != nil && a.Type() == fastjson.TypeObject {
		e.Corr = argInt(a, "correlation")
		e.ExtID = argInt(a, "External id")
		if e.ExtID == 0 {
			e.ExtID = argInt(a, "external id")
		}
		e.Bytes = argInt(a, "bytes")
		if kind.OnGPU() {
			if d := a.Get("device"); d != nil {
				e.Pid = argInt(a, "device")
			}
			if s := a.Get("stream"); s != nil {
				e.Tid = argInt(a, "stream")
			}
		}
		if kind == trace.KindSpan {
			e.SpanKind = im.intern(a.GetStringBytes("kind"))
		}
		if kind == trace.KindMemcpy && e.Bytes == 0 {
			e.Bytes = argInt(a, "size")
		}
	}
	if kind == trace.KindMemcpy {
		e.Copy, e.Src, e.Dst = parseCopy(e.Name)
	}
	if n := len(im.chunks); n == 0 || len(im.chunks[n-1]) == cap(im.chunks[n-1]) {
		im.chunks = append(im.chunks, make([]trace.Event, 0, chunkEvents))
	}
	last := &im.chunks[len(im.chunks)-1]
	*last = append(*last, e)
}

// chunkEvents sizes the workers' event chunks (~3 MB each).
const chunkEvents = 32 << 10

// micros converts a Kineto time in microseconds (often fractional, as text
// with ns digits) to integer ns without float rounding where possible.
func (im *worker) micros(v *fastjson.Value) (int64, bool) {
	if v == nil {
		return 0, false
	}
	switch v.Type() {
	case fastjson.TypeNumber:
		im.numBuf = v.MarshalTo(im.numBuf[:0])
		return parseMicros(im.numBuf)
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return parseMicros(b)
	}
	return 0, false
}

func parseMicros(b []byte) (int64, bool) {
	neg := false
	i := 0
	if i < len(b) && b[i] == '-' {
		neg, i = true, 1
	}
	var whole int64
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		whole = whole*10 + int64(b[i]-'0')
		digits++
	}
	var frac int64
	scale := int64(1000)
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if scale > 1 { // digits below 1 ns are dropped
				scale /= 10
				frac += int64(b[i]-'0') * scale
			}
		}
	}
	if i != len(b) || digits == 0 || digits > 16 || whole > (math.MaxInt64-999)/1000 { // ×1000 must fit int64
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9e15 {
			return 0, false
		}
		return int64(math.Round(f * 1000)), true
	}
	ns := whole*1000 + frac
	if neg {
		ns = -ns
	}
	return ns, true
}

func (im *worker) id(v *fastjson.Value) int64 {
	if v == nil {
		return 0
	}
	switch v.Type() {
	case fastjson.TypeNumber:
		n, err := v.Int64()
		if err != nil {
			return int64(v.GetFloat64())
		}
		return n
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return n
		}
		return im.im.stringID(b)
	}
	return 0
}

func (im *importer) stringID(b []byte) int64 {
	im.idMu.Lock()
	defer im.idMu.Unlock()
	if id, ok := im.strIDs[string(b)]; ok {
		return id
	}
	id := -int64(len(im.strIDs) + 1)
	im.strIDs[string(b)] = id
	return id
}

func argInt(a *fastjson.Value, key string) int64 {
	v := a.Get(key)
	if v == nil {
		return 0
	}
	switch v.Type() {
	case fastjson.TypeNumber:
		if n, err := v.Int64(); err == nil {
			return n
		}
		return int64(v.GetFloat64())
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		n, err := strconv.ParseInt(string(b), 0, 64)
		if err != nil {
			return 0
		}
		return n
	}
	return 0
}

func (im *worker) metadata(v *fastjson.Value) {
	name := string(v.GetStringBytes("name"))
	if name != "thread_name" {
		return
	}
	k := trace.ThreadKey{Pid: im.id(v.Get("pid")), Tid: im.id(v.Get("tid"))}
	im.threads[k] = string(v.GetStringBytes("args", "name"))
}

// parseCopy reads direction and memory kinds from CUPTI's copy names, e.g.
// "Memcpy HtoD (Pageable -> Device)"; ROCm writes "Memcpy HtoD (Host -> Device)".
func parseCopy(name string) (trace.CopyDir, trace.MemKind, trace.MemKind) {
	dir := trace.CopyNone
	switch {
	case strings.Contains(name, "HtoD"):
		dir = trace.CopyH2D
	case strings.Contains(name, "DtoH"):
		dir = trace.CopyD2H
	case strings.Contains(name, "DtoD"):
		dir = trace.CopyD2D
	case strings.Contains(name, "HtoH"):
		dir = trace.CopyH2H
	case strings.Contains(name, "PtoP"):
		dir = trace.CopyP2P
	}
	src, dst := trace.MemUnknown, trace.MemUnknown
	if i := strings.IndexByte(name, '('); i >= 0 {
		inner := strings.TrimSuffix(name[i+1:], ")")
		if a, b, ok := strings.Cut(inner, " -> "); ok {
			src, dst = memKind(a), memKind(b)
		}
	}
	return dir, src, dst
}

func memKind(s string) trace.MemKind {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pageable":
		return trace.MemPageable
	case "pinned":
		return trace.MemPinned
	case "device":
		return trace.MemDevice
	case "managed":
		return trace.MemManaged
	case "array":
		return trace.MemArray
	}
	return trace.MemUnknown
}

func (im *importer) finish() (*trace.Trace, error) {
	im.stop()
	t := &im.t
	total := 0
	for _, w := range im.workers {
		for _, c := range w.chunks {
			total += len(c)
		}
	}
	// One exact allocation; each chunk is released once copied, so the
	// peak is one copy of the events plus a chunk, not two full copies.
	t.Events = make([]trace.Event, 0, total)
	unknown := map[string]int{}
	for _, w := range im.workers {
		for k, c := range w.chunks {
			t.Events = append(t.Events, c...)
			w.chunks[k] = nil
		}
		t.Meta.Skipped += w.skipped
		for k, v := range w.unknown {
			unknown[k] += v
		}
		for k, v := range w.threads {
			t.Threads[k] = v
		}
	}
	if len(unknown) > 0 {
		t.Meta.Unknown = unknown
	}
	if im.own != nil {
		own := *im.own
		own.Skipped, own.Unknown = t.Meta.Skipped, t.Meta.Unknown
		if own.Devices == nil {
			own.Devices = t.Meta.Devices
		}
		t.Meta = own
	} else {
		t.Meta.Source = "kineto"
	}
	if im.events == 0 {
		return nil, fmt.Errorf("the trace has no events: was the profiler stopped before the workload ran? Profile at least one iteration inside torch.profiler.profile()")
	}
	if len(t.Events) == 0 {
		return nil, fmt.Errorf("none of the trace's %d events is a timed interval (\"ph\": \"X\"): not a PyTorch profiler timeline", im.events)
	}
	t.Meta.Platform = trace.Platform(t)
	return t, nil
}
