package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/inferscope/inferscope/internal/analyze"
)

// Markdown writes the terminal-friendly report: conclusions first, details
// after, every claim with the numbers behind it.
func Markdown(w io.Writer, r *analyze.Result) error {
	b := &strings.Builder{}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("# InferScope report: `%s`\n\n", mdCode(r.Scope.Name))
	p("**End-to-end latency: %.2f ms**", r.E2EMs)
	if r.Latency.N > 1 {
		p(" (mean of %d iterations; median %.2f, p90 %.2f, min %.2f, max %.2f ms)", r.Latency.N, r.Latency.Median, r.Latency.P90, r.Latency.Min, r.Latency.Max)
	}
	p("  \n**Classification: %s** — %s\n\n", r.Classification, r.ClassReason)
	p("## Breakdown\n\n```\n")
	width := 0
	for _, s := range r.Breakdown {
		width = max(width, len(s.Label)+1)
	}
	var sum float64
	for _, s := range r.Breakdown {
		p("%-*s %9.3f ms  %5.1f%%  %s\n", width, s.Label+":", s.Ms, s.Pct, bar(s.Pct))
		sum += s.Ms
	}
	p("%-*s %9.3f ms  (end-to-end %.3f ms)\n```\n\n", width, "Sum:", sum, r.E2EMs)
	if r.GPUBusyPct > 0 || r.Classification != analyze.ClassCPUOnly {
		p("GPU busy %.1f%%, idle %.1f%% of the timeline.", r.GPUBusyPct, r.GPUIdlePct)
		if len(r.GPUClasses) > 0 {
			var parts []string
			for _, c := range r.GPUClasses {
				parts = append(parts, fmt.Sprintf("%s %.2f ms", c.Label, c.Ms))
			}
			p(" GPU compute by kernel class: %s.", strings.Join(parts, ", "))
		}
		p("\n\n")
	}
	p("## Diagnosis\n\n")
	for _, d := range r.Diagnosis {
		p("- **%s** `[%s]`\n", mdEscape(d.Title), d.ID)
		for _, e := range d.Evidence {
			p("  - %s\n", mdEscape(e))
		}
	}
	p("\n## Suggestions\n\n")
	for i, s := range r.Suggestions {
		p("%d. %s _(because: %s)_\n", i+1, s.Text, s.Reason)
	}
	p("\n## Details\n\n")
	m := r.Metrics
	if m.Kernels > 0 {
		p("- Kernels: %d per iteration, median %.1f µs, p90 %.1f µs, %.0f%% under 10 µs; %.0f kernels/s\n", m.Kernels, m.KernelMedianUs, m.KernelP90Us, m.SmallKernelPct, m.LaunchRatePerS)
		p("- %s\n", launchLine(m))
	}
	if m.SyncCalls > 0 || m.ItemCalls > 0 {
		p("- Sync: %d calls per iteration (%d from `.item()`), %.3f ms waiting; GPU idle after syncs %.3f ms\n", m.SyncCalls, m.ItemCalls, m.SyncMs, m.PostSyncIdleMs)
	}
	if len(m.Preprocessing) > 0 {
		var parts []string
		for _, p := range m.Preprocessing {
			parts = append(parts, fmt.Sprintf("%s %.3f ms", p.Name, p.SelfMs))
		}
		p("- CPU preprocessing: %s\n", mdEscape(strings.Join(parts, "; ")))
	}
	for _, c := range m.Copies {
		p("- %s copies: %d per iteration, %s, %.3f ms on the copy engine (%.2f GB/s), CPU blocked %.3f ms, pageable %d (%s)\n",
			c.Dir, c.Count, humanize.IBytes(uint64(c.Bytes)), c.DMAms, c.GBps, c.BlockedMs, c.PageableCount, humanize.IBytes(uint64(c.PageableBytes)))
	}
	if len(r.TopKernels) > 0 {
		p("\n### Top kernels (per iteration)\n\n| kernel | class | count | total ms | mean µs | %% GPU |\n|---|---|---:|---:|---:|---:|\n")
		for _, k := range r.TopKernels {
			p("| `%s` | %s | %d | %.3f | %.1f | %.1f |\n", mdCode(k.Name), k.Class, k.Count, k.TotalMs, k.MeanUs, k.Pct)
		}
	}
	if len(r.TopCPUOps) > 0 {
		p("\n### Top CPU ops by self time (per iteration)\n\n| op | count | self ms | %% of e2e |\n|---|---:|---:|---:|\n")
		for _, o := range r.TopCPUOps {
			p("| `%s` | %d | %.3f | %.1f |\n", mdCode(o.Name), o.Count, o.SelfMs, o.Pct)
		}
	}
	if len(r.Iterations) > 1 {
		p("\n### Iterations\n\n| # | start ms | wall ms | GPU busy %% | |\n|---:|---:|---:|---:|---|\n")
		for _, it := range r.Iterations {
			note := ""
			if it.Excluded {
				note = "excluded (warm-up)"
			}
			p("| %d | %.2f | %.3f | %.1f | %s |\n", it.Index, it.StartMs, it.Ms, it.GPUBusyPct, note)
		}
	}
	writeMeta(p, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMeta(p func(string, ...any), r *analyze.Result) {
	t := r.Metadata.Trace
	p("\n### Trace\n\n")
	p("- Scope `%s` on %s: %d iterations, %d analysed", mdCode(r.Scope.Name), r.Scope.Thread, r.Scope.Iterations, r.Scope.Analyzed)
	if r.Scope.Implicit {
		p(" (no annotated region: the whole trace)")
	}
	if len(r.Scope.Others) > 0 {
		p("; other scopes: %s", mdEscape(strings.Join(r.Scope.Others, ", ")))
	}
	p("\n- Source: %s", t.Source)
	if t.Path != "" {
		p(" `%s`", mdCode(t.Path))
	}
	p(" (%s form, schema %d), %d events, platform %s", t.Format, t.SchemaVersion, r.Metadata.Events, t.Platform)
	for _, d := range t.Devices {
		p("; GPU %d: %s (sm_%d%d, %d SMs)", d.ID, d.Name, d.ComputeMajor, d.ComputeMinor, d.NumSMs)
	}
	p("\n- Duplicates dropped: %d; dropped records: %d; skipped (metadata/flows): %d", t.Duplicates, t.Dropped, t.Skipped)
	if len(t.Unknown) > 0 {
		var parts []string
		for k, v := range t.Unknown {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, v))
		}
		sort.Strings(parts)
		p("; unknown categories kept: %s", mdEscape(strings.Join(parts, ", ")))
	}
	p("\n")
	if t.ClockSync != "" {
		p("- Clock sync: %s, error ±%d ns (%.3f%% of e2e)\n", t.ClockSync, t.ClockErrorNs, t.ClockErrorPct)
	}
	if t.Incomplete != "" {
		p("- **Incomplete run:** %s\n", mdEscape(t.Incomplete))
	}
	for _, e := range t.Errors {
		p("- **Workload error:** %s\n", mdEscape(e))
	}
	for _, a := range r.Metadata.Assumptions {
		p("- Assumption: %s\n", mdEscape(a))
	}
	p("- InferScope %s\n", r.Metadata.ToolVersion)
}

func bar(pct float64) string {
	n := int(pct/2.5 + 0.5)
	return strings.Repeat("█", n)
}

// mdEscape keeps workload-provided strings from being read as Markdown or HTML.
func mdEscape(s string) string {
	r := strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", "\\|", "`", "'", "\n", " ")
	return r.Replace(s)
}

// mdCode prepares a string for an inline code span inside a table.
func mdCode(s string) string {
	s = strings.NewReplacer("`", "'", "|", "\\|", "\n", " ").Replace(s)
	if len(s) > 100 {
		s = s[:97] + "…"
	}
	return s
}
