// Package collect reads what the in-process collectors left in a run's raw
// directory — the Python package's span streams, torch.profiler's Kineto
// export — and merges them into one trace on one clock.
package collect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/inferscope/inferscope/internal/trace"
	"github.com/inferscope/inferscope/internal/trace/cupti"
	"github.com/inferscope/inferscope/internal/trace/kineto"
)

// line is one record of spans-<pid>.jsonl (docs/raw-stream.md).
type line struct {
	Type      string   `json:"type"`
	PID       int64    `json:"pid"`
	Argv      []string `json:"argv"`
	T         int64    `json:"t_ns"`
	Torch     *string  `json:"torch"`
	CUDA      bool     `json:"cuda"`
	Device    *string  `json:"device"`
	Collector string   `json:"collector"`
	ID        int64    `json:"id"`
	Parent    int64    `json:"parent"`
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Tid       int64    `json:"tid"`
	Thread    string   `json:"thread"`
	Start     int64    `json:"start_ns"`
	End       int64    `json:"end_ns"`
	Error     string   `json:"error"`
	Marker    string   `json:"marker"`
	Before    int64    `json:"before_ns"`
	After     int64    `json:"after_ns"`
	Path      string   `json:"path"`
	ExcType   string   `json:"exc_type"`
	Message   string   `json:"message"`
	Signal    string   `json:"signal"`
	Dropped   int64    `json:"dropped"`
}

// stream is one process's parsed span stream.
type stream struct {
	pid      int64
	process  *line
	spans    []line
	begins   map[int64]line
	clocks   []line
	kineto   string
	errors   []line
	signal   *line
	end      *line
	lastT    int64
	badLines int
}

// ParseStream reads one spans-<pid>.jsonl. A torn last line (the process
// was killed mid-write) is counted, not fatal; so is any other bad line.
func ParseStream(r io.Reader) (*stream, error) {
	s := &stream{begins: map[int64]line{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			s.badLines++
			continue
		}
		s.lastT = max(s.lastT, l.T, l.End, l.After)
		switch l.Type {
		case "process":
			s.process = &l
			s.pid = l.PID
		case "begin":
			s.begins[l.ID] = l
		case "span":
			if l.End < l.Start {
				s.badLines++
				continue
			}
			s.spans = append(s.spans, l)
		case "clock":
			s.clocks = append(s.clocks, l)
		case "kineto":
			s.kineto = l.Path
		case "error":
			s.errors = append(s.errors, l)
		case "signal":
			s.signal = &l
		case "end":
			s.end = &l
		default:
			s.badLines++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadDir merges every process's raw files in dir into one trace, on the
// Kineto clock where a Kineto trace exists (its events are exact there),
// else on CLOCK_MONOTONIC.
func ReadDir(dir string) (*trace.Trace, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "spans-*.jsonl"))
	sort.Strings(files)
	natives, _ := filepath.Glob(filepath.Join(dir, "cupti-*.bin"))
	if len(files) == 0 && len(natives) == 0 {
		return nil, fmt.Errorf("no span stream or CUPTI recording in %s: the workload never imported the inferscope package nor initialised CUDA (did it start?)", dir)
	}
	out := &trace.Trace{Threads: map[trace.ThreadKey]string{}, Meta: trace.Meta{Source: "inferscope", Format: "object", SchemaVersion: 1}}
	var notes, errs []string
	seen := map[int64]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		s, err := ParseStream(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		n, e := merge(out, dir, s)
		notes = append(notes, n...)
		errs = append(errs, e...)
		seen[s.pid] = true
	}
	// Native recordings of processes with no span stream (non-Python CUDA
	// programs, or children that never imported the package).
	for _, f := range natives {
		var pid int64
		if _, err := fmt.Sscanf(filepath.Base(f), "cupti-%d.bin", &pid); err != nil || seen[pid] {
			continue
		}
		notes = append(notes, mergeNative(out, f, pid, identity())...)
	}
	out.Meta.Incomplete = strings.Join(notes, "; ")
	out.Meta.Platform = trace.Platform(out)
	out.Meta.Errors = errs
	if len(out.Events) == 0 {
		return nil, fmt.Errorf("the workload recorded no spans in %s and no profiler trace: did it exit before running anything?", dir)
	}
	return out, nil
}

// merge adds one process's stream (and its Kineto trace) to out and returns
// notes on what is missing and the workload's errors.
func merge(out *trace.Trace, dir string, s *stream) (notes, errs []string) {
	pid := s.pid
	if s.process != nil && out.Meta.Collector == "" {
		out.Meta.Collector = s.process.Collector
		if s.process.Device != nil {
			out.Meta.Extra = map[string]any{"device": *s.process.Device}
		}
	}
	clk := identity()
	if s.kineto != "" {
		kt, err := kineto.ReadFile(filepath.Join(dir, filepath.Base(s.kineto)))
		if err != nil {
			notes = append(notes, fmt.Sprintf("process %d: torch.profiler trace unreadable (%v)", pid, err))
		} else {
			clk = fitClock(s.clocks, kt.Events)
			if out.Meta.ClockSync == "" || clk.errNs > out.Meta.ClockErrorNs {
				out.Meta.ClockSync, out.Meta.ClockErrorNs = clk.method, clk.errNs
			}
			out.Meta.Devices = append(out.Meta.Devices, kt.Meta.Devices...)
			out.Meta.CUDADriver, out.Meta.CUDARuntime, out.Meta.CUPTI = kt.Meta.CUDADriver, kt.Meta.CUDARuntime, kt.Meta.CUPTI
			out.Meta.Skipped += kt.Meta.Skipped
			out.Meta.Unknown = mergeCounts(out.Meta.Unknown, kt.Meta.Unknown)
			for k, v := range kt.Threads {
				out.Threads[k] = v
			}
			out.Events = append(out.Events, perProcessCorr(dropMarkers(kt.Events), pid)...)
		}
	} else if s.process != nil && s.process.Collector == "torch" && s.process.Torch != nil {
		notes = append(notes, fmt.Sprintf("process %d: no torch.profiler trace (the process died before exporting it): host spans only, GPU work not visible", pid))
	}
	if f := filepath.Join(dir, fmt.Sprintf("cupti-%d.bin", pid)); fileExists(f) {
		notes = append(notes, mergeNative(out, f, pid, clk)...)
	} else if s.process != nil && s.process.Collector == "cupti" && s.end != nil && s.end.CUDA {
		notes = append(notes, fmt.Sprintf("process %d: used CUDA but left no CUPTI recording (the native collector was not loaded): host spans only, GPU work not visible", pid))
	}
	annotations := annotationIndex(out.Events)
	for _, sp := range s.spans {
		out.Events = append(out.Events, spanEvent(sp, pid, clk, annotations))
		if sp.Thread != "" {
			out.Threads[trace.ThreadKey{Pid: pid, Tid: sp.Tid}] = sp.Thread
		}
	}
	closed := map[int64]bool{}
	for _, sp := range s.spans {
		closed[sp.ID] = true
	}
	for id, b := range s.begins {
		if closed[id] {
			continue
		}
		// Open when the process died: it lasted at least until the last
		// record the stream holds.
		out.Events = append(out.Events, spanEvent(line{Name: b.Name, Kind: b.Kind, Tid: b.Tid, Start: b.T, End: s.lastT}, pid, clk, nil))
	}
	if s.end != nil {
		out.Meta.Dropped += s.end.Dropped
	}
	switch {
	case s.signal != nil:
		notes = append(notes, fmt.Sprintf("process %d was interrupted by %s", pid, s.signal.Signal))
	case s.end == nil:
		notes = append(notes, fmt.Sprintf("process %d ended without its end record (killed, e.g. SIGKILL or the OOM killer): the trace holds what was flushed before", pid))
	}
	if s.badLines > 0 {
		notes = append(notes, fmt.Sprintf("process %d: %d unreadable span records skipped", pid, s.badLines))
	}
	for _, e := range s.errors {
		msg := e.ExcType + ": " + e.Message
		if strings.Contains(e.ExcType, "OutOfMemoryError") {
			msg = "GPU out of memory (" + e.ExcType + "): " + e.Message
		}
		errs = append(errs, msg)
	}
	return notes, errs
}

func mergeCounts(a, b map[string]int) map[string]int {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = map[string]int{}
	}
	for k, v := range b {
		a[k] += v
	}
	return a
}

type annKey struct {
	name string
	tid  int64
}

func annotationIndex(evs []trace.Event) map[annKey][]int64 {
	idx := map[annKey][]int64{}
	for i := range evs {
		if e := &evs[i]; e.Kind == trace.KindUserAnnotation {
			k := annKey{e.Name, e.Tid}
			idx[k] = append(idx[k], e.Ts)
		}
	}
	return idx
}

// spanEvent maps a span onto the merged clock. A user scope that the
// profiler also recorded as a record_function annotation is kept once: the
// annotation, exact on the Kineto clock, wins.
func spanEvent(sp line, pid int64, clk clock, ann map[annKey][]int64) trace.Event {
	start, end := clk.toTrace(sp.Start), clk.toTrace(sp.End)
	e := trace.Event{Name: sp.Name, Kind: trace.KindSpan, SpanKind: sp.Kind, Pid: pid, Tid: sp.Tid, Ts: start, Dur: end - start}
	if sp.Kind == "scope" {
		tol := clk.errNs + 1_000_000
		for _, ts := range ann[annKey{sp.Name, sp.Tid}] {
			if ts > start-tol && ts < start+tol {
				e.Kind = trace.KindInstant // superseded: kept for the record, ignored by analysis
				break
			}
		}
	}
	return e
}

func dropMarkers(evs []trace.Event) []trace.Event {
	out := evs[:0]
	for _, e := range evs {
		if e.Kind == trace.KindUserAnnotation && strings.HasPrefix(e.Name, markerPrefix) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// perProcessCorr qualifies correlation ids with the process: CUPTI counts
// them from 1 in every process, so a run with two CUDA processes would
// otherwise tie one's kernels to the other's launch calls. CUPTI ids are
// 32-bit; the pid goes above them.
func perProcessCorr(evs []trace.Event, pid int64) []trace.Event {
	for i := range evs {
		if c := evs[i].Corr; c != 0 {
			evs[i].Corr = pid<<32 | c&0xffffffff
		}
	}
	return evs
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// mergeNative adds a native CUPTI recording. Its events are on
// CLOCK_MONOTONIC already; clk maps them onto the trace's clock when a
// Kineto trace set it.
func mergeNative(out *trace.Trace, path string, pid int64, clk clock) (notes []string) {
	fh, err := os.Open(path)
	if err != nil {
		return []string{fmt.Sprintf("process %d: CUPTI recording unreadable (%v)", pid, err)}
	}
	defer fh.Close()
	rec, err := cupti.Read(fh)
	if err != nil {
		return []string{fmt.Sprintf("process %d: CUPTI recording unreadable (%v)", pid, err)}
	}
	for _, e := range perProcessCorr(rec.Events, pid) {
		end := clk.toTrace(e.End())
		e.Ts = clk.toTrace(e.Ts)
		e.Dur = end - e.Ts
		out.Events = append(out.Events, e)
	}
	if out.Meta.Collector == "" || out.Meta.Collector == "cupti" || out.Meta.Collector == "none" {
		out.Meta.Collector = "cupti"
	}
	if rec.Clock.ErrNs > out.Meta.ClockErrorNs || out.Meta.ClockSync == "" || strings.HasPrefix(out.Meta.ClockSync, "single clock") {
		out.Meta.ClockSync = "CUPTI: " + rec.Clock.Method
		out.Meta.ClockErrorNs = max(out.Meta.ClockErrorNs, rec.Clock.ErrNs)
	}
	out.Meta.Dropped += rec.Dropped.Total()
	if c := 100 * rec.LaunchCoverage; c < 99 && (out.Meta.LaunchSampledPct == 0 || c < out.Meta.LaunchSampledPct) {
		out.Meta.LaunchSampledPct = max(c, 0.01)
	}
	if rec.Truncated {
		notes = append(notes, fmt.Sprintf("process %d: CUPTI recording cut mid-record at byte %d (decoded up to there)", pid, rec.TruncatedAt))
	} else if !rec.Clean {
		notes = append(notes, fmt.Sprintf("process %d killed: CUPTI records up to the last flush (~1 s)", pid))
	}
	return notes
}
