package cupti

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/inferscope/inferscope/internal/trace"
)

// enc builds files in the collector's format (FORMAT.md).
type enc struct{ bytes.Buffer }

func newEnc(pid uint32) *enc {
	e := &enc{}
	e.WriteString(Magic)
	e.u32(1, 32, pid, 26)
	e.u64(1000)
	return e
}

func (e *enc) u32(v ...uint32) {
	for _, x := range v {
		binary.Write(&e.Buffer, binary.LittleEndian, x)
	}
}
func (e *enc) u64(v ...uint64) {
	for _, x := range v {
		binary.Write(&e.Buffer, binary.LittleEndian, x)
	}
}
func (e *enc) hdr(typ, flags uint16, size uint32) {
	binary.Write(&e.Buffer, binary.LittleEndian, typ)
	binary.Write(&e.Buffer, binary.LittleEndian, flags)
	e.u32(size)
}
func (e *enc) clock(before, cupti, after uint64, which uint32) {
	e.hdr(recClock, 0, 40)
	e.u64(before, cupti, after)
	e.u32(which, 0)
}
func (e *enc) str(id uint32, s string) {
	size := (16 + len(s) + 7) &^ 7
	e.hdr(recString, 0, uint32(size))
	e.u32(id, uint32(len(s)))
	e.WriteString(s)
	e.Write(make([]byte, size-16-len(s)))
}
func (e *enc) kernel(start, end uint64, dev, ctx, stream, corr, name uint32) {
	e.hdr(recKernel, 0, 80)
	e.u64(start, end)
	e.u32(dev, ctx, stream, corr, name, 1, 1, 1, 128, 1, 1, 0, 32, 0)
}
func (e *enc) memcpy(start, end, bytes uint64, dev, ctx, stream, corr uint32, kind, src, dst uint8) {
	e.hdr(recMemcpy, 0, 56)
	e.u64(start, end, bytes)
	e.u32(dev, ctx, stream, corr)
	e.Write([]byte{kind, src, dst, 0})
	e.u32(0)
}
func (e *enc) memset(start, end, bytes uint64, dev, ctx, stream, corr uint32, mk uint16) {
	e.hdr(recMemset, 0, 56)
	e.u64(start, end, bytes)
	e.u32(dev, ctx, stream, corr, 0)
	binary.Write(&e.Buffer, binary.LittleEndian, mk)
	binary.Write(&e.Buffer, binary.LittleEndian, uint16(0))
}
func (e *enc) sync(start, end uint64, ctx, stream, corr, typ uint32) {
	e.hdr(recSync, 0, 48)
	e.u64(start, end)
	e.u32(ctx, stream, corr, typ, 0, 0)
}
func (e *enc) api(start, end uint64, corr, tid, name, cbid uint32, domain, kind uint8, flags uint16, parent uint32) {
	e.hdr(recAPI, flags, 48)
	e.u64(start, end)
	e.u32(corr, tid, name, cbid)
	e.Write([]byte{domain, kind, 0, 0})
	e.u32(parent)
}
func (e *enc) overhead(start, end uint64, kind, obj, a, b, c uint32) {
	e.hdr(recOverhead, 0, 48)
	e.u64(start, end)
	e.u32(kind, obj, a, b, c, 0)
}
func (e *enc) dropped(cupti, cb, refused, records uint64) {
	e.hdr(recDropped, 0, 40)
	e.u64(cupti, cb, refused, records)
}
func (e *enc) end() {
	e.hdr(recEnd, 0, 24)
	e.u64(0, 0)
}

// sample: CUPTI clock = mono − 500 exactly, brackets of ±10 ns.
func sample() *enc {
	e := newEnc(4242)
	e.clock(1490, 1000, 1510, 0)
	e.str(1, "cudaLaunchKernel")
	e.str(2, "void vecadd(float const*, float const*, float*, int)")
	e.api(1600, 1700, 7, 4243, 1, 211, 2, 1, 0, 0)
	e.api(1610, 1690, 7, 4243, 1, 307, 1, 1, 1, 7) // nested driver launch, same corr
	e.kernel(1300, 1400, 0, 1, 7, 7, 2)
	e.memcpy(1400, 1450, 4096, 0, 1, 7, 8, 1, 1, 3)
	e.memcpy(1450, 1460, 4, 0, 1, 7, 9, 2, 3, 2)
	e.memset(1460, 1470, 64, 0, 1, 7, 10, 3)
	e.sync(1470, 1480, 1, 0xffffffff, 11, 4)
	e.overhead(1480, 1490, 1<<16, 2, 4242, 4243, 0)
	e.Write(append([]byte{0x63, 0, 0, 0, 16, 0, 0, 0}, make([]byte, 8)...)) // unknown type 99: skipped
	e.dropped(3, 1, 2, 20)
	e.clock(1000490, 1000000, 1000510, 1)
	e.end()
	return e
}

func find(t *testing.T, evs []trace.Event, kind trace.Kind, name string) trace.Event {
	t.Helper()
	for _, e := range evs {
		if e.Kind == kind && (name == "" || e.Name == name) {
			return e
		}
	}
	t.Fatalf("no %v event %q in %+v", kind, name, evs)
	return trace.Event{}
}

func TestReadSample(t *testing.T) {
	rec, err := Read(bytes.NewReader(sample().Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Clean || rec.Truncated || rec.Pid != 4242 || rec.CUPTIVersion != 26 {
		t.Fatalf("header/status: %+v", rec)
	}
	if rec.Clock.Offset != 500 || rec.Clock.Drift != 0 || rec.Clock.ErrNs != 11 || rec.Clock.Points != 2 {
		t.Fatalf("clock: %+v", rec.Clock)
	}
	if rec.Dropped != (Dropped{CUPTI: 3, Callback: 1, BuffersRefused: 2}) || rec.Dropped.Total() != 4 {
		t.Fatalf("dropped: %+v", rec.Dropped)
	}
	if rec.Nested != 1 || rec.NestedSameCorr != 1 || rec.Counts["unknown"] != 1 || rec.Counts["api"] != 2 {
		t.Fatalf("counts: %v nested %d/%d", rec.Counts, rec.Nested, rec.NestedSameCorr)
	}
	tests := []struct {
		kind trace.Kind
		name string
		want trace.Event
	}{
		{trace.KindRuntime, "cudaLaunchKernel", trace.Event{Ts: 1600, Dur: 100, Pid: 4242, Tid: 4243, Corr: 7}},
		{trace.KindKernel, "", trace.Event{Name: "void vecadd(float const*, float const*, float*, int)", Ts: 1800, Dur: 100, Pid: 0, Tid: 7, Corr: 7}},
		{trace.KindMemcpy, "Memcpy HtoD (Pageable -> Device)", trace.Event{Ts: 1900, Dur: 50, Tid: 7, Corr: 8, Bytes: 4096, Copy: trace.CopyH2D, Src: trace.MemPageable, Dst: trace.MemDevice}},
		{trace.KindMemcpy, "Memcpy DtoH (Device -> Pinned)", trace.Event{Ts: 1950, Dur: 10, Tid: 7, Corr: 9, Bytes: 4, Copy: trace.CopyD2H, Src: trace.MemDevice, Dst: trace.MemPinned}},
		{trace.KindMemset, "Memset (Device)", trace.Event{Ts: 1960, Dur: 10, Tid: 7, Corr: 10, Bytes: 64, Dst: trace.MemDevice}},
		{trace.KindSync, "Context Sync", trace.Event{Ts: 1970, Dur: 10, Pid: 0, Tid: -1, Corr: 11}},
		{trace.KindOther, "CUPTI overhead: buffer flush", trace.Event{Ts: 1980, Dur: 10, Pid: 4242, Tid: 4243, SpanKind: "overhead"}},
	}
	for _, tc := range tests {
		got := find(t, rec.Events, tc.kind, tc.name)
		w := tc.want
		w.Kind = tc.kind
		if w.Name == "" {
			w.Name = tc.name
		}
		if got != w {
			t.Errorf("%v %q:\n got %+v\nwant %+v", tc.kind, tc.name, got, w)
		}
	}
	if len(rec.Events) != 7 {
		t.Errorf("%d events, want 7 (nested launch skipped)", len(rec.Events))
	}
}

func TestClockFit(t *testing.T) {
	tests := []struct {
		name    string
		pts     []SyncPoint
		offset  int64
		driftPM float64 // ppm
		errNs   int64
	}{
		{"none", nil, 0, 0, -1},
		{"one point", []SyncPoint{{MonoBefore: 90, CUPTI: 0 + 1, MonoAfter: 110}}, 99, 0, 11},
		{"offset+drift", []SyncPoint{
			{MonoBefore: 1000, CUPTI: 1, MonoAfter: 1002},
			{MonoBefore: 1e9 + 1000 + 1000, CUPTI: 1e9 + 1, MonoAfter: 1e9 + 1000 + 1002}}, 1000, 1, 2},
		{"epoch-sized CUPTI times keep ns precision", []SyncPoint{
			{MonoBefore: 5_000_000_000, CUPTI: 1_795_411_254_638_337_001, MonoAfter: 5_000_000_002},
			{MonoBefore: 6_000_000_000, CUPTI: 1_795_411_255_638_337_001, MonoAfter: 6_000_000_002}}, 5_000_000_001 - 1_795_411_254_638_337_001, 0, 2},
		{"residual widens the bound", []SyncPoint{
			{MonoBefore: 1000, CUPTI: 1, MonoAfter: 1002},
			{MonoBefore: 5e8 + 1000 + 50, CUPTI: 5e8 + 1, MonoAfter: 5e8 + 1000 + 52},              // 50 ns off the line
			{MonoBefore: 1e9 + 1000, CUPTI: 1e9 + 1, MonoAfter: 1e9 + 1002}}, 1000, 0, 1 + 49 + 1}, // residual 50 minus its own half-bracket 1, plus the fit points' 1
		{"bad bracket ignored", []SyncPoint{{MonoBefore: 10, CUPTI: 5, MonoAfter: 5}, {MonoBefore: 100, CUPTI: 50, MonoAfter: 100}}, 50, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := FitClock(tc.pts)
			if c.ErrNs != tc.errNs || c.Offset != tc.offset || int64(c.Drift*1e6+0.5) != int64(tc.driftPM+0.5) {
				t.Fatalf("got %+v", c)
			}
			for _, p := range tc.pts {
				if p.MonoAfter < p.MonoBefore {
					continue
				}
				mid := (p.MonoBefore + p.MonoAfter) / 2
				if d := c.ToMono(p.CUPTI) - mid; d > c.ErrNs || -d > c.ErrNs {
					t.Errorf("point %+v maps %d off, bound %d", p, d, c.ErrNs)
				}
			}
		})
	}
}

func TestTruncated(t *testing.T) {
	full := sample().Bytes()
	whole, _ := Read(bytes.NewReader(full))
	// every prefix decodes without error; a cut inside a record reports it
	prev := -1
	for n := 8; n <= len(full); n++ {
		rec, err := Read(bytes.NewReader(full[:n]))
		if err != nil {
			t.Fatalf("prefix %d: %v", n, err)
		}
		if len(rec.Events) < prev {
			t.Fatalf("prefix %d: %d events, fewer than a shorter prefix (%d)", n, len(rec.Events), prev)
		}
		prev = len(rec.Events)
		if n < len(full) && rec.Clean {
			t.Fatalf("prefix %d claims a clean end", n)
		}
		if n > 32 && rec.Truncated && (rec.TruncatedAt > int64(n) || rec.TruncatedAt < 32) {
			t.Fatalf("prefix %d: truncated at %d", n, rec.TruncatedAt)
		}
	}
	// cut in the middle of the kernel record (after the header, strings and one api record)
	cut := bytes.Index(full, []byte{recKernel, 0, 0, 0, 80, 0, 0, 0}) + 20
	rec, _ := Read(bytes.NewReader(full[:cut]))
	if !rec.Truncated || rec.Clean || rec.Counts["kernel"] != 0 || rec.Counts["api"] != 2 || rec.Strings[2] == "" {
		t.Fatalf("cut kernel: %+v", rec)
	}
	if rec.Clock.Points != 1 || rec.Clock.ErrNs != 11 {
		t.Fatalf("one clock point left: %+v", rec.Clock)
	}
	if len(whole.Events) != 7 {
		t.Fatal(len(whole.Events))
	}
}

func TestBadFiles(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		err  bool
	}{
		{"empty", nil, true},
		{"wrong magic", append([]byte("NOTCUPTI"), make([]byte, 24)...), true},
		{"magic only", []byte(Magic), false},
		{"future version", func() []byte { b := newEnc(1).Bytes(); b[8] = 9; return b }(), true},
		{"bad record size", func() []byte { e := newEnc(1); e.hdr(recKernel, 0, 12); return e.Bytes() }(), false},
		{"record too small for its type", func() []byte { e := newEnc(1); e.hdr(recKernel, 0, 16); e.u64(0); return e.Bytes() }(), false},
		{"string longer than its record", func() []byte { e := newEnc(1); e.hdr(recString, 0, 16); e.u32(1, 100); return e.Bytes() }(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Read(bytes.NewReader(tc.data))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v", err)
			}
			if err != nil && !errors.Is(err, ErrFormat) {
				t.Fatalf("err %v is not ErrFormat", err)
			}
			if err == nil && !rec.Truncated {
				t.Fatalf("not reported truncated: %+v", rec)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	f.Add(sample().Bytes())
	f.Add(newEnc(1).Bytes())
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, e := range rec.Events {
			if e.Dur < 0 {
				t.Fatalf("negative duration: %+v", e)
			}
		}
		if rec.Bytes > int64(len(b)) {
			t.Fatalf("decoded %d bytes of %d", rec.Bytes, len(b))
		}
	})
}
