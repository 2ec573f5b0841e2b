package analyze

import (
	"github.com/inferscope/inferscope/internal/trace"
)

// attribution is the exclusive partition of one or more iterations.
type attribution struct {
	byCat      [9]int64 // indexed like Categories
	byClass    [numGPUClasses]int64
	gpuBusy    int64 // any GPU work in flight
	postSync   int64 // GPU idle right after a sync returned, until the next GPU work
	cpuInCopy  int64 // CPU blocked in memcpy calls while the copy engine was not yet busy
	total      int64
	labelTotal [lblMemcpy + 1]int64
}

func (a *attribution) add(c Category, ns int64) { a.byCat[catIndex(c)] += ns }

func (a *attribution) merge(b *attribution) {
	for i := range a.byCat {
		a.byCat[i] += b.byCat[i]
	}
	for i := range a.byClass {
		a.byClass[i] += b.byClass[i]
	}
	for i := range a.labelTotal {
		a.labelTotal[i] += b.labelTotal[i]
	}
	a.gpuBusy += b.gpuBusy
	a.postSync += b.postSync
	a.cpuInCopy += b.cpuInCopy
	a.total += b.total
}

// attribute walks the CPU segments (which tile the window) against the GPU
// segments and assigns every nanosecond to one category, in the priority of
// DESIGN.md: GPU kernel > copy in flight > what the CPU thread was doing.
func (x *analyzer) attribute(cpu []cpuSeg, gpu []gpuSeg, rec *[]Seg) attribution {
	var a attribution
	put := func(c Category, from, to int64) {
		a.add(c, to-from)
		if rec != nil {
			appendSeg(rec, from, to, string(c))
		}
	}
	g := 0
	lastSyncEnd := int64(-1)
	for _, c := range cpu {
		a.labelTotal[c.label] += c.end - c.start
		t := c.start
		for t < c.end {
			for g < len(gpu) && gpu[g].end <= t {
				g++
			}
			if g < len(gpu) && gpu[g].start <= t {
				to := min(c.end, gpu[g].end)
				cls := gpu[g].class
				a.byClass[cls] += to - t
				a.gpuBusy += to - t
				switch cls {
				case gcCopyH2D:
					put(CatH2D, t, to)
				case gcCopyD2H:
					put(CatD2H, t, to)
				case gcCopyD2D:
					put(CatD2D, t, to)
				default:
					put(CatGPUCompute, t, to)
				}
				lastSyncEnd = -1
				t = to
				continue
			}
			to := c.end
			if g < len(gpu) && gpu[g].start < to {
				to = gpu[g].start
			}
			put(x.idleCategory(c), t, to)
			if c.label == lblMemcpy {
				a.cpuInCopy += to - t
			}
			if lastSyncEnd >= 0 && c.label != lblSync {
				a.postSync += to - t
			}
			t = to
		}
		if c.label == lblSync {
			lastSyncEnd = c.end
		}
	}
	for _, v := range a.byCat {
		a.total += v
	}
	return a
}

// idleCategory blames GPU-idle time on what the launching thread was doing.
func (x *analyzer) idleCategory(c cpuSeg) Category {
	switch c.label {
	case lblMemcpy:
		switch x.callCopyDir[c.ev] {
		case trace.CopyH2D:
			return CatH2D
		case trace.CopyD2H:
			return CatD2H
		case trace.CopyD2D, trace.CopyP2P, trace.CopyH2H:
			return CatD2D
		}
		return CatFramework
	case lblSync:
		return CatSync
	case lblPre:
		return CatPreprocess
	case lblOp:
		if !x.hasGPU {
			return CatCPUCompute
		}
		return CatFramework
	case lblLaunch, lblModel, lblRoot:
		return CatFramework
	}
	return CatIdle
}
