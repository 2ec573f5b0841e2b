package collect

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferscope/inferscope/internal/trace"
)

const markerPrefix = "inferscope::clock#"

// clock maps CLOCK_MONOTONIC ns (perf_counter_ns) onto the trace's clock:
// trace = mono·(1+drift) + offset.
type clock struct {
	offset float64
	drift  float64
	origin int64 // mono time the drift is measured from
	errNs  int64
	method string
}

func identity() clock { return clock{method: "single clock (CLOCK_MONOTONIC)"} }

func (c clock) toTrace(mono int64) int64 {
	return mono + int64(math.Round(c.offset+c.drift*float64(mono-c.origin)))
}

// fitClock aligns on record_function markers whose Kineto timestamp was
// taken between two perf_counter_ns reads. The tightest-bracketed marker of
// the first half of the run and of the second half fix offset and drift;
// every marker then checks the fit. The error bound is the fit points'
// half-brackets plus the worst excess of any marker beyond its own bracket.
func fitClock(marks []line, evs []trace.Event) clock {
	ts := map[string]int64{}
	for i := range evs {
		if e := &evs[i]; e.Kind == trace.KindUserAnnotation && strings.HasPrefix(e.Name, markerPrefix) {
			ts[e.Name] = e.Ts
		}
	}
	type pt struct {
		mono, trace float64
		half        float64
	}
	var pts []pt
	for _, m := range marks {
		if t, ok := ts[m.Marker]; ok && m.After >= m.Before {
			pts = append(pts, pt{mono: float64(m.Before+m.After) / 2, trace: float64(t), half: float64(m.After-m.Before) / 2})
		}
	}
	if len(pts) == 0 {
		return clock{method: "none: no clock markers in the profiler trace (spans may be misaligned)", errNs: -1}
	}
	mid := (pts[0].mono + pts[len(pts)-1].mono) / 2
	best := func(early bool) pt {
		var b pt
		found := false
		for _, p := range pts {
			if (p.mono <= mid) == early && (!found || p.half < b.half) {
				b, found = p, true
			}
		}
		if !found {
			return pts[0]
		}
		return b
	}
	a, b := best(true), best(false)
	c := clock{origin: int64(a.mono), offset: a.trace - a.mono}
	if b.mono > a.mono {
		c.drift = (b.trace - b.mono - c.offset) / (b.mono - a.mono)
	}
	worst := max(a.half, b.half)
	for _, p := range pts {
		res := math.Abs(float64(c.toTrace(int64(p.mono))) - p.trace)
		worst = max(worst, max(a.half, b.half)+max(0, res-p.half))
	}
	c.errNs = int64(math.Ceil(worst)) + 1000 // Kineto rounds its µs timestamps: add 1 µs
	drift := ""
	if b.mono > a.mono {
		drift = " + drift"
	}
	c.method = fmt.Sprintf("record_function markers bracketed by perf_counter_ns (%d markers, offset%s)", len(pts), drift)
	return c
}
