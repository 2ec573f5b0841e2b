package cupti

import (
	"bytes"
	"math"
	"testing"
)

func (e *enc) window(start, end uint64, flags uint16) {
	e.hdr(recWindow, flags, 24)
	e.u64(start, end)
}

// The header's start is mono 1000; the last clock point ends at mono
// 1000+span, so coverage is the windows' share of [1000, 1000+span].
func TestLaunchCoverage(t *testing.T) {
	type win struct {
		start, end uint64
		flags      uint16
	}
	const span = 1000
	cases := []struct {
		name    string
		windows []win
		want    float64
		nWin    int
	}{
		{"no window records: every launch recorded", nil, 1, 0},
		{"one 10% window", []win{{1100, 1200, 0}}, 0.1, 1},
		{"two windows", []win{{1000, 1100, 0}, {1500, 1550, 0}}, 0.15, 2},
		{"sampling ended: on to the end", []win{{1100, 1200, 0}, {1700, 0, 1}}, 0.4, 2},
		{"empty window ignored", []win{{1300, 1300, 0}}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnc(1)
			e.clock(1000, 1000, 1000, 0)
			for _, w := range c.windows {
				e.window(w.start, w.end, w.flags)
			}
			e.clock(1000+span, 1000+span, 1000+span, 1)
			e.end()
			rec, err := Read(bytes.NewReader(e.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(rec.LaunchCoverage-c.want) > 1e-9 || len(rec.LaunchWindows) != c.nWin {
				t.Errorf("coverage %.3f with %d windows, want %.3f with %d (windows %+v)", rec.LaunchCoverage, len(rec.LaunchWindows), c.want, c.nWin, rec.LaunchWindows)
			}
			if got := rec.Counts["launch_window"]; got != len(c.windows) {
				t.Errorf("counted %d launch_window records, want %d", got, len(c.windows))
			}
		})
	}
}
