package cupti

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/trace"
)

// handshake is one trial of native/cupti/test/clockcheck.cu: CLOCK_MONOTONIC
// right after the host saw the kernel running, and right before it let the
// kernel finish.
type handshake struct {
	Seq     int   `json:"seq"`
	Seen    int64 `json:"seen_ns"`
	Release int64 `json:"release_ns"`
}

// TestClockHandshake checks the CUPTI→monotonic mapping against CPU moments
// that must bracket each recorded kernel (H100 recording, testdata/native/
// clockcheck): start <= seen and end >= release. An error e in the mapping
// shifts both slacks by e in opposite directions, so the smallest slacks
// bound the true error: -min(end-release) <= e <= min(seen-start). The
// recorded fit claims a much tighter bound (tens of ns); the handshake can
// only confirm it to the PCIe round trip, which is what this test asserts.
func TestClockHandshake(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "native", "clockcheck")
	bins, _ := filepath.Glob(filepath.Join(dir, "cupti-*.bin"))
	if len(bins) != 1 {
		t.Fatalf("want one recording in %s, got %v", dir, bins)
	}
	rec := readRecording(t, bins[0])
	var kernels []trace.Event
	for _, e := range rec.Events {
		if e.Kind == trace.KindKernel && strings.Contains(e.Name, "handshake") {
			kernels = append(kernels, e)
		}
	}
	slices.SortFunc(kernels, func(a, b trace.Event) int { return int(a.Ts - b.Ts) })
	hs := readHandshakes(t, filepath.Join(dir, "handshakes.jsonl"))
	if len(kernels) != len(hs) || len(hs) < 10 {
		t.Fatalf("want one handshake kernel per trial (>= 10), got %d kernels for %d trials", len(kernels), len(hs))
	}
	minLead, minLag := int64(1<<62), int64(1<<62)
	for i, k := range kernels {
		lead := hs[i].Seen - k.Ts      // kernel started before the host saw it
		lag := k.End() - hs[i].Release // and ended after the host released it
		if lead < 0 || lag < 0 {
			t.Errorf("trial %d: kernel [%d, %d] must span host seen %d / release %d: lead %d ns, lag %d ns (want both >= 0)",
				hs[i].Seq, k.Ts, k.End(), hs[i].Seen, hs[i].Release, lead, lag)
		}
		minLead, minLag = min(minLead, lead), min(minLag, lag)
	}
	// 20 µs covers a PCIe round trip and kernel exit with room; a mapping off
	// by more than that fails one side or the other.
	const slack = 20_000
	if minLead > slack || minLag > slack {
		t.Errorf("smallest slacks: start→seen %d ns, release→end %d ns; want both <= %d ns", minLead, minLag, slack)
	}
	t.Logf("%d trials: clock error within [-%d, +%d] ns by handshake; fit's own bound ±%d ns (%s)",
		len(hs), minLag, minLead, rec.Clock.ErrNs, rec.Clock.Method)
}

func readHandshakes(t *testing.T, path string) []handshake {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hs []handshake
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var h handshake
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		hs = append(hs, h)
	}
	return hs
}

// TestLaunchPrecedesKernel: in every committed native recording a kernel
// starts after the CPU entered the call that launched it (same correlation
// id) — the mapping's sign and offset checked on thousands of pairs.
func TestLaunchPrecedesKernel(t *testing.T) {
	bins, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "native", "*", "cupti-*.bin"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "cupti", "*.bin"))
	for _, p := range append(bins, more...) {
		rec := readRecording(t, p)
		launch := map[int64]int64{}
		for _, e := range rec.Events {
			if (e.Kind == trace.KindRuntime || e.Kind == trace.KindDriver) && e.Corr != 0 {
				launch[e.Corr] = e.Ts
			}
		}
		pairs, bad := 0, 0
		minDelay := int64(1 << 62)
		for _, e := range rec.Events {
			ts, ok := launch[e.Corr]
			if e.Kind != trace.KindKernel || !ok {
				continue
			}
			pairs++
			minDelay = min(minDelay, e.Ts-ts)
			if e.Ts < ts {
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d kernels start before their launch call (min launch→start %d ns); want none", filepath.Base(p), bad, pairs, minDelay)
		}
		if pairs > 0 {
			t.Logf("%s: %d launch/kernel pairs, min launch→start %d ns", filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), pairs, minDelay)
		}
	}
}

func readRecording(t *testing.T, path string) *Recording {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rec
}
