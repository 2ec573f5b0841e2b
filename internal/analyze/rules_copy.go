package analyze

import (
	"fmt"

	"github.com/dustin/go-humanize"
)

func copyEvidence(m Metrics) []string {
	var ev []string
	for _, cp := range m.Copies {
		line := fmt.Sprintf("%s: %d copies, %s per iteration, %.2f ms on the copy engine (%.1f GB/s), CPU blocked %.2f ms in memcpy calls",
			cp.Dir, cp.Count, humanize.IBytes(uint64(cp.Bytes)), cp.DMAms, cp.GBps, cp.BlockedMs)
		if cp.PageableCount > 0 {
			line += fmt.Sprintf("; %d pageable (%s)", cp.PageableCount, humanize.IBytes(uint64(cp.PageableBytes)))
		}
		ev = append(ev, line)
	}
	return ev
}

func ruleCopyBound(c *ruleCtx) *verdict {
	if c.r.Classification != ClassCopyBound {
		return nil
	}
	s := []string{suggestKeepOnDevice, suggestOverlapCopies}
	if pageable(c.r.Metrics) > 0 {
		s = append([]string{suggestPinned}, s...)
	}
	return &verdict{
		finding: Finding{ID: "copy-bound", Title: "Copy-bound: host↔device copies take most of the time and nothing overlaps them",
			Evidence: append([]string{fmt.Sprintf("copies %.0f%% of wall time (H2D %.0f%%, D2H %.0f%%, D2D %.0f%%)", 100*c.share(CatH2D, CatD2H, CatD2D), 100*c.share(CatH2D), 100*c.share(CatD2H), 100*c.share(CatD2D))}, copyEvidence(c.r.Metrics)...),
			Impact:   c.share(CatH2D, CatD2H, CatD2D)},
		suggestions: s,
		primary:     true,
	}
}

func pageable(m Metrics) int64 {
	var b int64
	for _, cp := range m.Copies {
		b += cp.PageableBytes
	}
	return b
}

// rulePageable fires when pageable copies move enough data to matter
// (≥1 MiB per iteration or ≥5% of the time), whatever the classification.
func rulePageable(c *ruleCtx) *verdict {
	b := pageable(c.r.Metrics)
	if b == 0 {
		return nil
	}
	var pageMs float64
	for _, cp := range c.r.Metrics.Copies {
		if cp.PageableBytes > 0 && cp.Bytes > 0 {
			pageMs += (cp.DMAms + cp.BlockedMs) / 2 * float64(cp.PageableBytes) / float64(cp.Bytes)
		}
	}
	impact := pageMs / max(c.r.E2EMs, 1e-9)
	if b < 1<<20 && impact < 0.05 {
		return nil
	}
	return &verdict{
		finding: Finding{ID: "pageable-copies", Title: fmt.Sprintf("Copies from pageable host memory (%s per iteration): staged, synchronous and slow", humanize.IBytes(uint64(b))),
			Evidence: copyEvidence(c.r.Metrics), Impact: max(impact, 0.01)},
		suggestions: []string{suggestPinned},
	}
}
