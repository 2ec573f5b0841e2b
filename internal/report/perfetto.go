package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
)

func init() { register("perfetto", Perfetto) }

// Categories of the slices InferScope adds. They must not be "inferscope":
// the Kineto importer reads that category as InferScope's own spans (scopes,
// tokenize, forward, ...), which would change the analysis of a re-imported
// export. Unknown categories are kept as inert events.
const (
	perfettoCatAttribution = "inferscope_attribution"
	perfettoCatIteration   = "inferscope_iteration"
	perfettoCatFlow        = "ac2g" // Kineto's name for launch → GPU flows
)

// Perfetto writes a Chrome/Perfetto trace (JSON object form) for
// ui.perfetto.dev: the timeline's events on their CPU threads and GPU
// streams, flow arrows from each launch to the GPU work it started, and an
// "InferScope" process with the attribution and the iterations as tracks.
// The top-level "inferscope" object carries the trace's provenance, so that
// `inferscope analyze` re-reads the export as it read the original. The
// output is streamed; memory holds no more than the timeline already does.
func Perfetto(w io.Writer, in Input) error {
	r := in.Result
	if r == nil {
		return errors.New("perfetto trace: no analysis result")
	}
	meta, err := json.Marshal(r.Metadata.Trace)
	if err != nil {
		return fmt.Errorf("perfetto trace: metadata: %w", err)
	}
	// encoding/json leaves DEL raw; Perfetto's tokenizer rejects control
	// characters inside strings (DEL only occurs inside strings here).
	meta = bytes.ReplaceAll(meta, []byte{0x7f}, []byte(`\u007f`))
	pw := &perfettoWriter{w: bufio.NewWriterSize(w, 1<<16)}
	pw.raw(`{"displayTimeUnit":"ns","inferscope":`)
	pw.w.Write(meta)
	pw.raw(`,"traceEvents":[`)
	pw.export(in.Timeline, r)
	pw.raw("\n]}\n")
	if pw.err != nil {
		return pw.err
	}
	return pw.w.Flush()
}

type perfettoWriter struct {
	w     *bufio.Writer
	buf   []byte
	first bool // an event has been written (the next needs a comma)
	err   error
	// pids and tids taken in the output, apart: Perfetto keys processes
	// by pid and threads by tid.
	usedPid, usedTid map[int64]bool
	next             int64
}

func (p *perfettoWriter) raw(s string) {
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}

// event is one Chrome trace event; zero fields are left out, except ts.
type pEvent struct {
	ph, cat, name string
	pid, tid      int64
	ts, dur       int64 // ns
	hasDur        bool
	id            int64
	bp, scope     string
	args          []pArg
}

type pArg struct {
	key string
	str string
	num float64
	n   int64
	typ byte // 's' string, 'i' int, 'f' float, 'b' bool (n != 0)
}

func strArg(k, v string) pArg       { return pArg{key: k, str: v, typ: 's'} }
func intArg(k string, v int64) pArg { return pArg{key: k, n: v, typ: 'i'} }
func fltArg(k string, v float64) pArg {
	return pArg{key: k, num: v, typ: 'f'}
}
func boolArg(k string, v bool) pArg {
	a := pArg{key: k, typ: 'b'}
	if v {
		a.n = 1
	}
	return a
}

// write emits one event. Keys are written ts/dur first and no top-level
// value is an array: Perfetto's tokenizer scans an event's keys in order for
// "ts" and "dur" and gives up on a top-level array before it finds them.
func (p *perfettoWriter) write(e *pEvent) {
	if p.err != nil {
		return
	}
	b := p.buf[:0]
	if p.first {
		b = append(b, ",\n"...)
	} else {
		b = append(b, '\n')
		p.first = true
	}
	b = append(b, `{"ph":`...)
	b = appendJSONString(b, e.ph)
	b = append(b, `,"ts":`...)
	b = appendMicros(b, e.ts)
	if e.hasDur {
		b = append(b, `,"dur":`...)
		b = appendMicros(b, e.dur)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, e.pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, e.tid, 10)
	if e.cat != "" || e.ph == "X" {
		b = append(b, `,"cat":`...)
		b = appendJSONString(b, e.cat)
	}
	if e.name != "" || e.ph == "X" {
		b = append(b, `,"name":`...)
		b = appendJSONString(b, e.name)
	}
	if e.id != 0 {
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, e.id, 10)
	}
	if e.bp != "" {
		b = append(b, `,"bp":`...)
		b = appendJSONString(b, e.bp)
	}
	if e.scope != "" {
		b = append(b, `,"s":`...)
		b = appendJSONString(b, e.scope)
	}
	if len(e.args) > 0 {
		b = append(b, `,"args":{`...)
		for i, a := range e.args {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, a.key)
			b = append(b, ':')
			switch a.typ {
			case 's':
				b = appendJSONString(b, a.str)
			case 'i':
				b = strconv.AppendInt(b, a.n, 10)
			case 'f':
				if math.IsNaN(a.num) || math.IsInf(a.num, 0) {
					b = append(b, "null"...)
				} else {
					b = strconv.AppendFloat(b, a.num, 'f', -1, 64)
				}
			case 'b':
				b = strconv.AppendBool(b, a.n != 0)
			}
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	p.buf = b
	_, p.err = p.w.Write(b)
}

func (p *perfettoWriter) meta(kind string, pid, tid int64, ts int64, arg pArg) {
	p.write(&pEvent{ph: "M", name: kind, pid: pid, tid: tid, ts: ts, args: []pArg{arg}})
}

// id maps a trace pid/tid to one Perfetto accepts (it reads them as
// uint32): in-range ids are kept, others get a fresh unused number.
func (p *perfettoWriter) id(v int64, remap map[int64]int64, used map[int64]bool) int64 {
	if out, ok := remap[v]; ok {
		return out
	}
	out := v
	if v < 0 || v >= 1<<31 {
		out = p.fresh()
	}
	remap[v] = out
	used[out] = true
	return out
}

// fresh returns a number used neither as a pid nor as a tid.
func (p *perfettoWriter) fresh() int64 {
	for p.usedPid[p.next] || p.usedTid[p.next] {
		p.next++
	}
	p.usedPid[p.next], p.usedTid[p.next] = true, true
	return p.next
}

// kindCategory is the Kineto category that the importer reads back as the
// same kind.
func kindCategory(e *trace.Event) string {
	switch e.Kind {
	case trace.KindCPUOp:
		return "cpu_op"
	case trace.KindUserAnnotation:
		return "user_annotation"
	case trace.KindPythonFunction:
		return "python_function"
	case trace.KindRuntime:
		return "cuda_runtime"
	case trace.KindDriver:
		return "cuda_driver"
	case trace.KindKernel:
		return "kernel"
	case trace.KindMemcpy:
		return "gpu_memcpy"
	case trace.KindMemset:
		return "gpu_memset"
	case trace.KindGPUAnnotation:
		return "gpu_user_annotation"
	case trace.KindSync:
		return "cuda_sync"
	case trace.KindSpan:
		return "inferscope"
	case trace.KindInstant:
		return "cpu_instant_event"
	}
	return e.SpanKind // KindOther keeps its original category
}

func (p *perfettoWriter) export(tl *timeline.Timeline, r *analyze.Result) {
	p.usedPid, p.usedTid = map[int64]bool{}, map[int64]bool{}
	p.next = 1 << 30 // above any Linux pid (pid_max ≤ 2^22)
	cpuPid, cpuTid := map[int64]int64{}, map[int64]int64{}
	gpuPid, gpuTid := map[int64]int64{}, map[int64]int64{}
	t0 := int64(math.MaxInt64)
	if tl != nil {
		// CPU ids first, then GPU devices as their own processes (Kineto
		// uses the device number as pid), avoiding CPU pids.
		for _, tr := range tl.Tracks {
			if !tr.GPU {
				p.id(tr.Key.Pid, cpuPid, p.usedPid)
				p.id(tr.Key.Tid, cpuTid, p.usedTid)
			}
		}
		for _, tr := range tl.Tracks {
			if tr.GPU {
				if _, ok := gpuPid[tr.Key.Pid]; !ok {
					if d := tr.Key.Pid; d >= 0 && d < 1<<31 && !p.usedPid[d] {
						gpuPid[d] = d
						p.usedPid[d] = true
					} else {
						gpuPid[d] = p.fresh()
					}
				}
				p.id(tr.Key.Tid, gpuTid, p.usedTid)
			}
		}
		for i := range tl.Events {
			t0 = min(t0, tl.Events[i].Ts)
		}
	}
	for _, it := range r.Timelines {
		t0 = min(t0, it.Start)
	}
	if t0 == math.MaxInt64 {
		t0 = 0
	}
	isPid, attrTid, iterTid := p.fresh(), p.fresh(), p.fresh()

	// Names first: processes and threads.
	p.meta("process_name", isPid, 0, t0, strArg("name", "InferScope"))
	p.meta("process_sort_index", isPid, 0, t0, intArg("sort_index", -1))
	p.meta("thread_name", isPid, attrTid, t0, strArg("name", "Attribution"))
	p.meta("thread_sort_index", isPid, attrTid, t0, intArg("sort_index", 0))
	p.meta("thread_name", isPid, iterTid, t0, strArg("name", "Iterations"))
	p.meta("thread_sort_index", isPid, iterTid, t0, intArg("sort_index", 1))
	if tl != nil {
		devName := map[int64]string{}
		for _, d := range tl.Meta.Devices {
			devName[int64(d.ID)] = d.Name
		}
		named := map[int64]bool{}
		for _, tr := range tl.Tracks {
			if !tr.GPU {
				if tr.Name != "" {
					p.meta("thread_name", cpuPid[tr.Key.Pid], cpuTid[tr.Key.Tid], t0, strArg("name", tr.Name))
				}
				continue
			}
			pid := gpuPid[tr.Key.Pid]
			if !named[pid] {
				named[pid] = true
				p.meta("process_name", pid, 0, t0, strArg("name", fmt.Sprintf("GPU %d", tr.Key.Pid)))
				if n := devName[tr.Key.Pid]; n != "" {
					p.meta("process_labels", pid, 0, t0, strArg("labels", n))
				}
				p.meta("process_sort_index", pid, 0, t0, intArg("sort_index", 1000+tr.Key.Pid))
			}
			name := strings.TrimSpace(tr.Name)
			if name == "" {
				name = fmt.Sprintf("stream %d", tr.Key.Tid)
			}
			p.meta("thread_name", pid, gpuTid[tr.Key.Tid], t0, strArg("name", name))
		}
		p.events(tl, cpuPid, cpuTid, gpuPid, gpuTid)
	}
	p.inferscope(r, isPid, attrTid, iterTid)
}

// events writes the timeline's events, each launch followed by the start of
// a flow to the GPU work it launched and each GPU event by the flow's end.
func (p *perfettoWriter) events(tl *timeline.Timeline, cpuPid, cpuTid, gpuPid, gpuTid map[int64]int64) {
	launched := map[int32][]int32{} // launch call → GPU events
	for i, l := range tl.Launch {
		if l >= 0 {
			launched[l] = append(launched[l], int32(i))
		}
	}
	ev := pEvent{}
	for _, tr := range tl.Tracks {
		pid, tid := cpuPid[tr.Key.Pid], cpuTid[tr.Key.Tid]
		if tr.GPU {
			pid, tid = gpuPid[tr.Key.Pid], gpuTid[tr.Key.Tid]
		}
		for i := tr.Lo; i < tr.Hi; i++ {
			e := &tl.Events[i]
			ev = pEvent{ph: "X", cat: kindCategory(e), name: e.Name, pid: pid, tid: tid, ts: e.Ts, dur: e.Dur, hasDur: true, args: ev.args[:0]}
			if e.Kind == trace.KindInstant {
				ev.ph, ev.hasDur, ev.scope = "i", false, "t"
			}
			if e.ExtID != 0 {
				ev.args = append(ev.args, intArg("External id", e.ExtID))
			}
			if e.Kind.OnGPU() {
				ev.args = append(ev.args, intArg("device", e.Pid), intArg("stream", e.Tid))
			}
			if e.Corr != 0 {
				ev.args = append(ev.args, intArg("correlation", e.Corr&0xffffffff)) // CUPTI's id, without the process bits collect adds
			}
			if e.Bytes != 0 {
				ev.args = append(ev.args, intArg("bytes", e.Bytes))
			}
			if e.Kind == trace.KindSpan && e.SpanKind != "" {
				ev.args = append(ev.args, strArg("kind", e.SpanKind))
			}
			p.write(&ev)
			for _, g := range launched[int32(i)] {
				p.write(&pEvent{ph: "s", cat: perfettoCatFlow, name: perfettoCatFlow, pid: pid, tid: tid, ts: e.Ts, id: int64(g) + 1})
			}
			if tl.Launch[i] >= 0 {
				p.write(&pEvent{ph: "f", cat: perfettoCatFlow, name: perfettoCatFlow, pid: pid, tid: tid, ts: e.Ts, id: int64(i) + 1, bp: "e"})
			}
		}
	}
}

// inferscope writes the analysis tracks: one slice per attribution segment
// and one per iteration (analysed ones exactly; warm-up ones excluded from
// the analysis placed from their recorded offset).
func (p *perfettoWriter) inferscope(r *analyze.Result, pid, attrTid, iterTid int64) {
	ev := pEvent{}
	for _, it := range r.Timelines {
		for _, s := range it.Attr {
			ev = pEvent{ph: "X", cat: perfettoCatAttribution, name: analyze.Category(s.Cat).Label(), pid: pid, tid: attrTid,
				ts: s.Start, dur: s.End - s.Start, hasDur: true,
				args: append(ev.args[:0], strArg("category", s.Cat), intArg("iteration", int64(it.Index)))}
			p.write(&ev)
		}
	}
	if len(r.Timelines) == 0 {
		return
	}
	byIndex := map[int]analyze.IterTimeline{}
	for _, it := range r.Timelines {
		byIndex[it.Index] = it
	}
	var base int64
	for _, it := range r.Iterations {
		if t, ok := byIndex[it.Index]; ok {
			base = t.Start - int64(math.Round(it.StartMs*1e6))
			break
		}
	}
	iters := append([]analyze.Iteration(nil), r.Iterations...)
	sort.SliceStable(iters, func(a, b int) bool { return iters[a].StartMs < iters[b].StartMs })
	for _, it := range iters {
		start := base + int64(math.Round(it.StartMs*1e6))
		end := start + int64(math.Round(it.Ms*1e6))
		name := fmt.Sprintf("iteration %d", it.Index)
		if t, ok := byIndex[it.Index]; ok {
			start, end = t.Start, t.End
		} else if it.Excluded {
			name += " (warm-up, excluded)"
		}
		p.write(&pEvent{ph: "X", cat: perfettoCatIteration, name: name, pid: pid, tid: iterTid, ts: start, dur: end - start, hasDur: true,
			args: []pArg{intArg("index", int64(it.Index)), fltArg("wall_ms", it.Ms), fltArg("gpu_busy_pct", round3(it.GPUBusyPct)), boolArg("excluded", it.Excluded)}})
	}
}

func round3(x float64) float64 { return math.Round(x*1e3) / 1e3 }

// appendMicros writes integer ns as µs with three decimals, exactly.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		if ns == math.MinInt64 {
			return append(b, "9223372036854775.808"...)
		}
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendJSONString quotes s for JSON: quotes, backslashes and control
// characters (DEL included, which Perfetto's tokenizer rejects) escaped,
// invalid UTF-8 replaced; <, > and & stay as they are.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
