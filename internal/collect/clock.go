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
// taken between two perf_counter_ns reads. Each marker gives the offset to
// within half its bracket; two or more also give the drift. The error bound
// is the widest half-bracket plus the worst residual of the fit.
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
	first, last := pts[0], pts[len(pts)-1]
	c := clock{origin: int64(first.mono), offset: first.trace - first.mono}
	if len(pts) >= 2 && last.mono > first.mono {
		c.drift = (last.trace - last.mono - c.offset) / (last.mono - first.mono)
	}
	var worst float64
	for _, p := range pts {
		res := math.Abs(float64(c.toTrace(int64(p.mono))) - p.trace)
		worst = max(worst, res+p.half)
	}
	c.errNs = int64(math.Ceil(worst)) + 1000 // Kineto writes µs with ns digits, but rounds: add 1 µs
	c.method = fmt.Sprintf("record_function markers bracketed by perf_counter_ns (%d markers, offset%s)", len(pts), map[bool]string{true: " + drift", false: ""}[len(pts) >= 2])
	return c
}
