// Package cupti decodes cupti-<pid>.bin, the raw file of InferScope's native
// CUPTI collector (native/cupti/FORMAT.md), into trace events on
// CLOCK_MONOTONIC.
//
// GPU records (kernels, copies, memsets, syncs, CUPTI overhead) carry CUPTI
// timestamps; the file's CLOCK records pair cuptiGetTimestamp() with
// CLOCK_MONOTONIC reads bracketing it, from which Read fits an offset and a
// drift and maps every GPU time onto CLOCK_MONOTONIC (the clock of the
// Python span stream). API records (launch, sync and memcpy calls seen
// through the callback API) are already on CLOCK_MONOTONIC.
package cupti

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/inferscope/inferscope/internal/trace"
)

// Magic opens every file.
const Magic = "ISCUPTI\x00"

// Version is the newest format version this package reads.
const Version = 1

// Record types (FORMAT.md).
const (
	recClock    = 1
	recString   = 2
	recKernel   = 3
	recMemcpy   = 4
	recMemset   = 5
	recSync     = 6
	recOverhead = 7
	recAPI      = 8
	recDropped  = 9
	recEnd      = 10
	recWindow   = 11
)

// minimum sizes of each record type (header included)
var minSize = map[uint16]uint32{recClock: 40, recString: 16, recKernel: 80, recMemcpy: 56, recMemset: 56,
	recSync: 48, recOverhead: 48, recAPI: 48, recDropped: 40, recEnd: 24, recWindow: 24}

const maxRecord = 16 << 20 // a STRING never exceeds 1 MB; anything larger is corruption

// Clock maps CUPTI timestamps to CLOCK_MONOTONIC:
// mono = cupti + Offset + Drift·(cupti − Origin).
type Clock struct {
	Offset int64
	Drift  float64
	Origin int64
	// ErrNs bounds |mapped − true| for any time between the fit points:
	// the fit points' worst half-bracket plus the worst residual of any
	// other sync point beyond its own half-bracket. −1: no sync point (the
	// mapping is the identity and GPU times are not comparable with CPU times).
	ErrNs  int64
	Points int
	Method string
}

// ToMono maps a CUPTI timestamp to CLOCK_MONOTONIC ns.
func (c Clock) ToMono(cupti int64) int64 {
	return cupti + c.Offset + int64(math.Round(c.Drift*float64(cupti-c.Origin)))
}

// SyncPoint is one CLOCK record.
type SyncPoint struct {
	MonoBefore, CUPTI, MonoAfter int64
	Which                        uint32 // 0 start, 1 stop, 2 periodic
}

// Dropped counts what the collector could not record.
type Dropped struct {
	CUPTI          int64 // cuptiActivityGetNumDroppedRecords, summed
	Callback       int64 // API records lost: callback chunks full
	BuffersRefused int64 // CUPTI buffer requests refused: pool exhausted
}

// Total is every lost record that is counted (refused buffers are counted
// by CUPTI in CUPTI already, so they are not added).
func (d Dropped) Total() int64 { return d.CUPTI + d.Callback }

// Recording is one decoded file.
type Recording struct {
	Pid          int64
	Version      uint32
	CUPTIVersion uint32
	StartMono    int64
	// Events are on CLOCK_MONOTONIC. GPU events have Pid = device and
	// Tid = stream (−1 for a context-wide synchronisation); API and
	// overhead events have the process id and the OS thread id.
	Events  []trace.Event
	Strings map[uint32]string
	Clock   Clock
	Sync    []SyncPoint
	Dropped Dropped
	// Counts is the number of records of each type name read.
	Counts map[string]int
	// Nested counts driver launches recorded inside a runtime launch (a
	// diagnostic sample); NestedSameCorr how many had the runtime call's
	// correlation id.
	Nested, NestedSameCorr int
	// Clean is true when the END record was read (the collector stopped
	// normally); Truncated when the file ended inside a record (SIGKILL
	// mid-write): everything before TruncatedAt was decoded.
	Clean       bool
	Truncated   bool
	TruncatedAt int64
	Bytes       int64
	// LaunchWindows are the CLOCK_MONOTONIC intervals in which launch
	// callbacks were on when the collector sampled them; nil when it
	// recorded every launch (or none). LaunchCoverage is the share of the
	// recording they cover, 0..1 (1 when not sampled).
	LaunchWindows  []Window
	LaunchCoverage float64
}

// Window is a CLOCK_MONOTONIC interval [Start, End).
type Window struct{ Start, End int64 }

var typeNames = map[uint16]string{recClock: "clock", recString: "string", recKernel: "kernel", recMemcpy: "memcpy",
	recMemset: "memset", recSync: "sync", recOverhead: "overhead", recAPI: "api", recDropped: "dropped", recEnd: "end",
	recWindow: "launch_window"}

// ErrFormat is returned (wrapped) for a file that is not a CUPTI recording.
var ErrFormat = errors.New("not an InferScope CUPTI recording")

// Read decodes a whole file. A file cut inside a record is not an error:
// the records before are returned and Truncated is set. A record whose
// header is impossible (size not a multiple of 8, too small for its type,
// or huge) ends decoding the same way: the tail is unreadable.
func Read(r io.Reader) (*Recording, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	hdr := make([]byte, 32)
	if n, err := io.ReadFull(br, hdr); err != nil {
		if n >= 8 && string(hdr[:8]) == Magic {
			return &Recording{Truncated: true, Counts: map[string]int{}, Strings: map[uint32]string{}, Clock: Clock{ErrNs: -1, Method: "none"}}, nil
		}
		return nil, fmt.Errorf("%w: %d-byte file", ErrFormat, n)
	}
	if string(hdr[:8]) != Magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrFormat, hdr[:8])
	}
	le := binary.LittleEndian
	rec := &Recording{
		Version:      le.Uint32(hdr[8:]),
		Pid:          int64(le.Uint32(hdr[16:])),
		CUPTIVersion: le.Uint32(hdr[20:]),
		StartMono:    int64(le.Uint64(hdr[24:])),
		Strings:      map[uint32]string{},
		Counts:       map[string]int{},
	}
	if rec.Version == 0 || rec.Version > Version {
		return nil, fmt.Errorf("%w: format version %d (this build reads ≤ %d)", ErrFormat, rec.Version, Version)
	}
	hsize := int64(le.Uint32(hdr[12:]))
	if hsize < 32 || hsize > 4096 {
		return nil, fmt.Errorf("%w: header size %d", ErrFormat, hsize)
	}
	off := int64(32)
	if _, err := br.Discard(int(hsize - 32)); err != nil {
		rec.Truncated, rec.TruncatedAt = true, off
		rec.finish()
		return rec, nil
	}
	off = hsize
	d := decoder{rec: rec, ctxDevice: map[uint32]int64{}, toEnd: math.MaxInt64}
	var rh [8]byte
	buf := make([]byte, 256)
	for {
		n, err := io.ReadFull(br, rh[:])
		if err == io.EOF {
			break
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return nil, err
		}
		if n < 8 {
			rec.Truncated, rec.TruncatedAt = true, off
			break
		}
		typ, size := le.Uint16(rh[0:]), le.Uint32(rh[4:])
		if size < 8 || size%8 != 0 || size > maxRecord || size < minSize[typ] {
			rec.Truncated, rec.TruncatedAt = true, off
			break
		}
		if int(size) > len(buf) {
			buf = make([]byte, size)
		}
		b := buf[:size]
		copy(b, rh[:])
		if _, err := io.ReadFull(br, b[8:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				rec.Truncated, rec.TruncatedAt = true, off
				break
			}
			return nil, err
		}
		if !d.record(typ, le.Uint16(rh[2:]), b) {
			rec.Truncated, rec.TruncatedAt = true, off
			break
		}
		off += int64(size)
	}
	rec.Bytes = off
	d.finish()
	return rec, nil
}

func (r *Recording) finish() {
	if r.Clock.Method == "" {
		r.Clock = Clock{ErrNs: -1, Method: "none"}
	}
}

type decoder struct {
	rec       *Recording
	ctxDevice map[uint32]int64
	syncs     []int // indexes of sync events whose device is taken from the context
	syncCtx   []uint32
	gpu       []int // indexes of events on the CUPTI clock
	sampled   bool  // a launch-window record was read
	toEnd     int64 // start of a launch window that lasted to the end; MaxInt64: none
}

func u64(b []byte, o int) int64  { return int64(binary.LittleEndian.Uint64(b[o:])) }
func u32(b []byte, o int) uint32 { return binary.LittleEndian.Uint32(b[o:]) }

// record decodes one whole record; false when it is malformed.
func (d *decoder) record(typ, flags uint16, b []byte) bool {
	r := d.rec
	if name, ok := typeNames[typ]; ok {
		r.Counts[name]++
	} else {
		r.Counts["unknown"]++
		return true
	}
	switch typ {
	case recClock:
		r.Sync = append(r.Sync, SyncPoint{MonoBefore: u64(b, 8), CUPTI: u64(b, 16), MonoAfter: u64(b, 24), Which: u32(b, 32)})
	case recString:
		id, n := u32(b, 8), u32(b, 12)
		if uint64(n) > uint64(len(b)-16) {
			return false
		}
		r.Strings[id] = string(b[16 : 16+n])
	case recKernel:
		start, end := u64(b, 8), u64(b, 16)
		dev, ctx := int64(u32(b, 24)), u32(b, 28)
		d.ctxDevice[ctx] = dev
		d.add(trace.Event{Name: d.str(u32(b, 40), "kernel"), Kind: trace.KindKernel, Ts: start, Dur: dur(start, end),
			Pid: dev, Tid: stream(u32(b, 32)), Corr: int64(u32(b, 36))}, true)
	case recMemcpy:
		start, end := u64(b, 8), u64(b, 16)
		dev, ctx := int64(u32(b, 32)), u32(b, 36)
		d.ctxDevice[ctx] = dev
		cd, src, dst := copyDir(b[48]), memKind(b[49]), memKind(b[50])
		d.add(trace.Event{Name: memcpyName(b[48], b[49], b[50]), Kind: trace.KindMemcpy, Ts: start, Dur: dur(start, end),
			Pid: dev, Tid: stream(u32(b, 40)), Corr: int64(u32(b, 44)), Bytes: u64(b, 24), Copy: cd, Src: src, Dst: dst}, true)
	case recMemset:
		start, end := u64(b, 8), u64(b, 16)
		dev, ctx := int64(u32(b, 32)), u32(b, 36)
		d.ctxDevice[ctx] = dev
		mk := memKind(uint8(binary.LittleEndian.Uint16(b[52:])))
		d.add(trace.Event{Name: "Memset (" + titleMem(mk) + ")", Kind: trace.KindMemset, Ts: start, Dur: dur(start, end),
			Pid: dev, Tid: stream(u32(b, 40)), Corr: int64(u32(b, 44)), Bytes: u64(b, 24), Dst: mk}, true)
	case recSync:
		start, end := u64(b, 8), u64(b, 16)
		d.syncs = append(d.syncs, len(r.Events))
		d.syncCtx = append(d.syncCtx, u32(b, 24))
		d.add(trace.Event{Name: syncName(u32(b, 36)), Kind: trace.KindSync, Ts: start, Dur: dur(start, end),
			Tid: stream(u32(b, 28)), Corr: int64(u32(b, 32))}, true)
	case recOverhead:
		start, end := u64(b, 8), u64(b, 16)
		ok, obj := u32(b, 24), u32(b, 28)
		e := trace.Event{Name: "CUPTI overhead: " + overheadName(ok), Kind: trace.KindOther, SpanKind: "overhead", Ts: start, Dur: dur(start, end)}
		switch obj {
		case 1, 2: // process, thread
			e.Pid, e.Tid = int64(u32(b, 32)), int64(u32(b, 36))
		default: // device, context, stream
			e.Pid, e.Tid = int64(u32(b, 32)), stream(u32(b, 40))
			e.SpanKind = "gpu_overhead"
		}
		if e.Pid == 0 && (obj == 1 || obj == 2) {
			e.Pid = r.Pid
		}
		d.add(e, true)
	case recAPI:
		if flags&1 != 0 { // nested driver launch: diagnostic only
			r.Nested++
			if u32(b, 24) == u32(b, 44) {
				r.NestedSameCorr++
			}
			return true
		}
		start, end := u64(b, 8), u64(b, 16)
		d.add(trace.Event{Name: d.str(u32(b, 32), "cuda_api"), Kind: trace.KindRuntime, Ts: start, Dur: dur(start, end),
			Pid: r.Pid, Tid: int64(u32(b, 28)), Corr: int64(u32(b, 24))}, false)
		if b[40] == 1 { // driver domain
			r.Events[len(r.Events)-1].Kind = trace.KindDriver
		}
	case recDropped:
		r.Dropped = Dropped{CUPTI: u64(b, 8), Callback: u64(b, 16), BuffersRefused: u64(b, 24)}
	case recEnd:
		r.Clean = true
	case recWindow:
		w := Window{Start: u64(b, 8), End: u64(b, 16)}
		d.sampled = true
		if flags&1 != 0 { // launch callbacks stayed on from Start to the end
			d.toEnd = min(d.toEnd, w.Start)
		} else if w.End > w.Start {
			r.LaunchWindows = append(r.LaunchWindows, w)
		}
	}
	return true
}

func (d *decoder) add(e trace.Event, cuptiClock bool) {
	if cuptiClock {
		d.gpu = append(d.gpu, len(d.rec.Events))
	}
	d.rec.Events = append(d.rec.Events, e)
}

func (d *decoder) str(id uint32, def string) string {
	if s, ok := d.rec.Strings[id]; ok {
		return s
	}
	return def
}

func (d *decoder) finish() {
	r := d.rec
	for i, ev := range d.syncs {
		if dev, ok := d.ctxDevice[d.syncCtx[i]]; ok {
			r.Events[ev].Pid = dev
		}
	}
	r.Clock = FitClock(r.Sync)
	for _, i := range d.gpu {
		e := &r.Events[i]
		end := r.Clock.ToMono(e.Ts + e.Dur)
		e.Ts = r.Clock.ToMono(e.Ts)
		e.Dur = max(0, end-e.Ts)
	}
	d.launchCoverage()
}

// launchCoverage closes a window that lasted to the end at the last time
// the recording saw, and measures the share of the recording the windows
// cover. A recording with no window records had every launch recorded.
func (d *decoder) launchCoverage() {
	r := d.rec
	r.LaunchCoverage = 1
	if !d.sampled {
		return
	}
	last := r.StartMono
	for _, e := range r.Events {
		last = max(last, e.End())
	}
	for _, p := range r.Sync {
		last = max(last, p.MonoAfter)
	}
	if d.toEnd != math.MaxInt64 && last > d.toEnd {
		r.LaunchWindows = append(r.LaunchWindows, Window{Start: d.toEnd, End: last})
	}
	var on int64
	for _, w := range r.LaunchWindows {
		on += max(0, min(w.End, last)-max(w.Start, r.StartMono))
	}
	if span := last - r.StartMono; span > 0 {
		r.LaunchCoverage = min(1, float64(on)/float64(span))
	}
}

func dur(start, end int64) int64 { return max(0, end-start) }

func stream(s uint32) int64 {
	if s == 0xffffffff {
		return -1
	}
	return int64(s)
}

// FitClock fits CUPTI → CLOCK_MONOTONIC from sync points: the tightest
// bracketed point of the first half and of the second half fix offset and
// drift; every point then checks the fit. Arithmetic is in integers where it
// matters: CUPTI timestamps are epoch-based (~1.8e18 ns), beyond float64's
// integer precision.
func FitClock(pts []SyncPoint) Clock {
	type pt struct{ cupti, mono, half int64 } // mono: bracket midpoint; half rounded up
	var ps []pt
	for _, p := range pts {
		if p.MonoAfter >= p.MonoBefore && p.CUPTI > 0 {
			d := p.MonoAfter - p.MonoBefore
			ps = append(ps, pt{p.CUPTI, p.MonoBefore + d/2, (d + 1) / 2})
		}
	}
	if len(ps) == 0 {
		return Clock{ErrNs: -1, Method: "none: no clock records (GPU times left on the CUPTI clock)"}
	}
	mid := ps[0].cupti + (ps[len(ps)-1].cupti-ps[0].cupti)/2
	best := func(early bool) pt {
		var b pt
		found := false
		for _, p := range ps {
			if (p.cupti <= mid) == early && (!found || p.half < b.half) {
				b, found = p, true
			}
		}
		if !found {
			return ps[0]
		}
		return b
	}
	a, b := best(true), best(false)
	c := Clock{Origin: a.cupti, Offset: a.mono - a.cupti, Points: len(ps)}
	if b.cupti > a.cupti {
		c.Drift = float64((b.mono-b.cupti)-c.Offset) / float64(b.cupti-a.cupti)
	}
	base := max(a.half, b.half)
	worst := base
	for _, p := range ps {
		res := c.ToMono(p.cupti) - p.mono
		if res < 0 {
			res = -res
		}
		worst = max(worst, base+max(0, res-p.half))
	}
	c.ErrNs = worst + 1 // +1: the midpoint's integer rounding
	drift := ""
	if b.cupti > a.cupti {
		drift = fmt.Sprintf(" + drift %.3g ppm", c.Drift*1e6)
	}
	c.Method = fmt.Sprintf("cuptiGetTimestamp bracketed by CLOCK_MONOTONIC (%d points, offset%s)", len(ps), drift)
	return c
}

func copyDir(k uint8) trace.CopyDir {
	switch k {
	case 1, 3: // HtoD, HtoA
		return trace.CopyH2D
	case 2, 4: // DtoH, AtoH
		return trace.CopyD2H
	case 5, 6, 7, 8: // AtoA, AtoD, DtoA, DtoD
		return trace.CopyD2D
	case 9:
		return trace.CopyH2H
	case 10:
		return trace.CopyP2P
	}
	return trace.CopyNone
}

func memKind(k uint8) trace.MemKind {
	switch k {
	case 1:
		return trace.MemPageable
	case 2:
		return trace.MemPinned
	case 3, 6: // device, device static
		return trace.MemDevice
	case 4:
		return trace.MemArray
	case 5, 7: // managed, managed static
		return trace.MemManaged
	}
	return trace.MemUnknown
}

var copyNames = [...]string{"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"}

func titleMem(m trace.MemKind) string {
	return [...]string{"Unknown", "Pageable", "Pinned", "Device", "Managed", "Array"}[m]
}

// memcpyName is Kineto's name for the same copy, "Memcpy HtoD (Pageable -> Device)",
// so analysis that reads names sees the same strings from both collectors.
func memcpyName(k, src, dst uint8) string {
	n := "Unknown"
	if int(k) < len(copyNames) {
		n = copyNames[k]
	}
	return "Memcpy " + n + " (" + titleMem(memKind(src)) + " -> " + titleMem(memKind(dst)) + ")"
}

func syncName(t uint32) string {
	switch t {
	case 1:
		return "Event Sync"
	case 2:
		return "Stream Wait Event"
	case 3:
		return "Stream Sync"
	case 4:
		return "Context Sync"
	}
	return "Sync"
}

func overheadName(k uint32) string {
	names := map[uint32]string{1: "driver compiler", 1 << 16: "buffer flush", 2 << 16: "instrumentation",
		3 << 16: "resource", 4 << 16: "module loading", 5 << 16: "lazy function loading",
		6 << 16: "command buffer full", 7 << 16: "activity buffer request", 8 << 16: "UVM activity init"}
	if n, ok := names[k]; ok {
		return n
	}
	return fmt.Sprintf("kind %d", k)
}
