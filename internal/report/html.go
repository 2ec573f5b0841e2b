package report

import (
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/inferscope/inferscope/internal/analyze"
)

func init() { register("html", HTML) }

// HTML writes the report as one self-contained page: the Markdown report's
// content plus an SVG timeline of the representative (median) iteration.
// Nothing is loaded from the network; every workload-provided string goes
// through html/template's contextual escaping.
func HTML(w io.Writer, in Input) error {
	if in.Result == nil {
		return errors.New("html report: no analysis result")
	}
	return htmlPage.Execute(w, newHTMLView(in.Result))
}

// Colours: one per category, shared by the breakdown bar, its table and the
// timeline lanes, so that a colour means the same thing everywhere. Lane
// categories that correspond (sync call / sync wait, preprocessing, copies)
// share a colour.
var palette = []struct{ cat, color string }{
	// attribution categories
	{"gpu_compute", "#4e79a7"},
	{"cpu_compute", "#59a14f"},
	{"h2d_copy", "#f28e2b"},
	{"d2h_copy", "#e15759"},
	{"d2d_copy", "#d4a017"},
	{"sync_wait", "#b07aa1"},
	{"framework_overhead", "#ff9da7"},
	{"cpu_preprocessing", "#9c755f"},
	{"idle", "#c9c3bf"},
	// CPU thread states
	{"scope", "#d9d9d9"},
	{"model", "#fbc8d0"},
	{"preprocessing", "#9c755f"},
	{"op", "#8cd17d"},
	{"launch", "#76b7b2"},
	{"sync", "#b07aa1"},
	{"memcpy", "#ffbe7d"},
	// GPU activity
	{"gemm", "#4e79a7"},
	{"attention", "#7b5ea7"},
	{"conv", "#2a9db5"},
	{"norm", "#86bcb6"},
	{"reduce", "#5778c9"},
	{"elementwise", "#a0cbe8"},
	{"memset", "#d4a6c8"},
	{"collective", "#8c6d4f"},
	{"other", "#8593a6"},
	{"h2d", "#f28e2b"},
	{"d2h", "#e15759"},
	{"d2d", "#d4a017"},
	{"unknown", "#9e9e9e"},
}

var paletteIndex = func() map[string]int {
	m := map[string]int{}
	for i, p := range palette {
		m[p.cat] = i
	}
	return m
}()

// catClass is the CSS class colouring a category; only palette names reach
// the page, so class names never carry anything from the trace.
func catClass(cat string) string {
	if _, ok := paletteIndex[cat]; ok {
		return "c-" + cat
	}
	return "c-unknown"
}

func paletteCSS() template.CSS {
	var b strings.Builder
	for _, p := range palette {
		fmt.Fprintf(&b, ".c-%s{fill:%s;background-color:%s}", p.cat, p.color, p.color)
	}
	return template.CSS(b.String())
}

// Lane labels for the legend and tooltips.
var cpuStateLabels = map[string]string{
	"scope": "scope (bare)", "model": "model code between ops", "preprocessing": "preprocessing",
	"op": "framework op", "launch": "runtime call (launch)", "sync": "sync call", "memcpy": "memcpy call",
}

var gpuLabels = map[string]string{"h2d": "H2D copy", "d2h": "D2H copy", "d2d": "D2D copy"}

func attrLabel(c string) string { return analyze.Category(c).Label() }

func cpuLabel(c string) string {
	if l, ok := cpuStateLabels[c]; ok {
		return l
	}
	return c
}

func gpuLabel(c string) string {
	if l, ok := gpuLabels[c]; ok {
		return l
	}
	return c
}

type htmlView struct {
	R           *analyze.Result
	Palette     template.CSS
	Latency     string
	Breakdown   []bdRow
	SumMs       float64
	GPULine     string
	Diagnosis   []findingView
	Suggestions []suggestionView
	Metrics     []string
	Kernels     []nameRow
	Ops         []nameRow
	Iterations  []analyze.Iteration
	Trace       []kv
	Warnings    []kv
	Timeline    *svgView
}

type bdRow struct {
	analyze.Slice
	Class string
}

type findingView struct {
	ID, Title string
	Evidence  []string
	Impact    float64
}

type suggestionView struct{ Text, Reason string }

// nameRow is one row of the kernel or operator table.
type nameRow struct {
	Name, Short     string
	Class           string
	Count           int
	Ms, MeanUs, Pct float64
}

type kv struct{ K, V string }

func newHTMLView(r *analyze.Result) *htmlView {
	v := &htmlView{R: r, Palette: paletteCSS(), Iterations: r.Iterations}
	if r.Latency.N > 1 {
		v.Latency = fmt.Sprintf("mean of %d iterations · median %.2f · p90 %.2f · min %.2f · max %.2f ms",
			r.Latency.N, r.Latency.Median, r.Latency.P90, r.Latency.Min, r.Latency.Max)
	}
	for _, s := range r.Breakdown {
		v.Breakdown = append(v.Breakdown, bdRow{Slice: s, Class: catClass(s.Category)})
		v.SumMs += s.Ms
	}
	if r.GPUBusyPct > 0 || r.Classification != analyze.ClassCPUOnly {
		v.GPULine = fmt.Sprintf("GPU busy %.1f%%, idle %.1f%% of the timeline.", r.GPUBusyPct, r.GPUIdlePct)
		if len(r.GPUClasses) > 0 {
			var parts []string
			for _, c := range r.GPUClasses {
				parts = append(parts, fmt.Sprintf("%s %.2f ms", c.Label, c.Ms))
			}
			v.GPULine += " GPU compute by kernel class: " + strings.Join(parts, ", ") + "."
		}
	}
	for _, d := range r.Diagnosis {
		v.Diagnosis = append(v.Diagnosis, findingView{ID: d.ID, Title: d.Title, Evidence: d.Evidence, Impact: 100 * d.Impact})
	}
	for _, s := range r.Suggestions {
		v.Suggestions = append(v.Suggestions, suggestionView{Text: s.Text, Reason: s.Reason})
	}
	v.Metrics = metricLines(r)
	for _, k := range r.TopKernels {
		v.Kernels = append(v.Kernels, nameRow{Name: k.Name, Short: shorten(k.Name, 110), Class: k.Class, Count: k.Count,
			Ms: k.TotalMs, MeanUs: k.MeanUs, Pct: k.Pct})
	}
	for _, o := range r.TopCPUOps {
		v.Ops = append(v.Ops, nameRow{Name: o.Name, Short: shorten(o.Name, 110), Count: o.Count, Ms: o.SelfMs, Pct: o.Pct})
	}
	v.Trace, v.Warnings = traceItems(r)
	v.Timeline = newSVGView(r)
	return v
}

func metricLines(r *analyze.Result) []string {
	var out []string
	m := r.Metrics
	if m.Kernels > 0 {
		out = append(out,
			fmt.Sprintf("Kernels: %d per iteration, median %.1f µs, p90 %.1f µs, %.0f%% under 10 µs; %.0f kernels/s",
				m.Kernels, m.KernelMedianUs, m.KernelP90Us, m.SmallKernelPct, m.LaunchRatePerS),
			launchLine(m))
	}
	if m.SyncCalls > 0 || m.ItemCalls > 0 {
		out = append(out, fmt.Sprintf("Sync: %d calls per iteration (%d from `.item()`), %.3f ms waiting; GPU idle after syncs %.3f ms",
			m.SyncCalls, m.ItemCalls, m.SyncMs, m.PostSyncIdleMs))
	}
	for _, c := range m.Copies {
		out = append(out, fmt.Sprintf("%s copies: %d per iteration, %s, %.3f ms on the copy engine (%.2f GB/s), CPU blocked %.3f ms, pageable %d (%s)",
			c.Dir, c.Count, humanize.IBytes(uint64(c.Bytes)), c.DMAms, c.GBps, c.BlockedMs, c.PageableCount, humanize.IBytes(uint64(c.PageableBytes))))
	}
	if m.GEMMMs > 0 {
		line := fmt.Sprintf("GEMM: %.3f ms per iteration, %.3f ms of it in full fp32", m.GEMMMs, m.FP32GEMMMs)
		if m.ComputeCapab != "" {
			line += " (compute capability " + m.ComputeCapab + ")"
		}
		out = append(out, line)
	}
	return out
}

// traceItems is the provenance block, and the warnings (incomplete run,
// workload errors) that belong at the top of the page as well.
func traceItems(r *analyze.Result) (items, warnings []kv) {
	t := r.Metadata.Trace
	add := func(k, format string, a ...any) { items = append(items, kv{k, fmt.Sprintf(format, a...)}) }
	sc := fmt.Sprintf("%s on %s: %d iterations, %d analysed", r.Scope.Name, r.Scope.Thread, r.Scope.Iterations, r.Scope.Analyzed)
	if r.Scope.Implicit {
		sc += " (no annotated region: the whole trace)"
	}
	if len(r.Scope.Excluded) > 0 {
		sc += fmt.Sprintf("; excluded as warm-up: %v", r.Scope.Excluded)
	}
	add("Scope", "%s", sc)
	if len(r.Scope.Others) > 0 {
		add("Other scopes", "%s", strings.Join(r.Scope.Others, ", "))
	}
	src := t.Source
	if t.Path != "" {
		src += " " + t.Path
	}
	add("Source", "%s (%s form, schema %d), %d events, platform %s", src, t.Format, t.SchemaVersion, r.Metadata.Events, t.Platform)
	for _, d := range t.Devices {
		add(fmt.Sprintf("GPU %d", d.ID), "%s (sm_%d%d, %d SMs%s)", d.Name, d.ComputeMajor, d.ComputeMinor, d.NumSMs, memSuffix(d.MemoryBytes))
	}
	if t.CUDARuntime > 0 || t.CUDADriver > 0 {
		add("CUDA", "runtime %d, driver %d, CUPTI %d", t.CUDARuntime, t.CUDADriver, t.CUPTI)
	}
	if t.Collector != "" {
		add("Collector", "%s", t.Collector)
	}
	if len(t.Command) > 0 {
		add("Command", "%s", strings.Join(t.Command, " "))
	}
	rec := fmt.Sprintf("duplicates dropped %d; dropped records %d; skipped (metadata/flows) %d", t.Duplicates, t.Dropped, t.Skipped)
	if len(t.Unknown) > 0 {
		keys := make([]string, 0, len(t.Unknown))
		for k := range t.Unknown {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, t.Unknown[k]))
		}
		rec += "; unknown categories kept: " + strings.Join(parts, ", ")
	}
	add("Records", "%s", rec)
	if t.ClockSync != "" {
		add("Clock sync", "%s, error ±%d ns", t.ClockSync, t.ClockErrorNs)
	}
	for _, a := range r.Metadata.Assumptions {
		add("Assumption", "%s", a)
	}
	add("InferScope", "%s", r.Metadata.ToolVersion)
	if t.Incomplete != "" {
		warnings = append(warnings, kv{"Incomplete run", t.Incomplete})
	}
	for _, e := range t.Errors {
		warnings = append(warnings, kv{"Workload error", e})
	}
	return items, warnings
}

func memSuffix(b int64) string {
	if b <= 0 {
		return ""
	}
	return ", " + humanize.IBytes(uint64(b))
}

// shorten cuts long (templated C++) names for table cells; the full name
// stays in the cell's tooltip.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// sentence capitalises the first letter of s.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// codeSpans escapes s and turns `quoted` parts into <code> elements.
func codeSpans(s string) template.HTML {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // unbalanced: show the backticks as they are
		return template.HTML(html.EscapeString(s))
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + html.EscapeString(p) + "</code>")
		} else {
			b.WriteString(html.EscapeString(p))
		}
	}
	return template.HTML(b.String())
}

// --- timeline -------------------------------------------------------------

// SVG geometry, in user units (the SVG scales to the page width).
const (
	svgWidth     = 1200.0
	svgGutter    = 112.0 // lane labels
	svgPadRight  = 24.0
	svgLaneH     = 30.0
	svgLaneGap   = 10.0
	svgTop       = 8.0
	svgMinPx     = 0.5 // narrower segments are merged into clusters
	svgClusterPx = 2.0 // a cluster of narrow segments spans at most this
)

type svgView struct {
	Iter, Of int
	WallMs   float64
	W, H     float64
	X0, X1   float64
	PlotW    float64
	AxisY    float64
	Lanes    []laneView
	Ticks    []tickView
	Legend   []legendGroup
	Scale    string // "0.772 ms per pixel at full width"
}

type laneView struct {
	Name, Sub string
	Y, H      float64
	LabelY    float64
	Marks     []markView
}

// markView is one hoverable mark: a segment, or a cluster of short ones
// drawn as a stacked column.
type markView struct {
	Tip   string
	Rects []rectView
}

type rectView struct{ X, Y, W, H, Class string }

type tickView struct {
	X     float64
	Label string
}

type legendGroup struct {
	Lane  string
	Items []legendItem
}

type legendItem struct{ Class, Label string }

// representative picks the analysed iteration whose wall time is the
// median (the lower one of an even count; ties by order).
func representative(tls []analyze.IterTimeline) int {
	if len(tls) == 0 {
		return -1
	}
	idx := make([]int, len(tls))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return tls[idx[a]].End-tls[idx[a]].Start < tls[idx[b]].End-tls[idx[b]].Start
	})
	return idx[(len(idx)-1)/2]
}

func newSVGView(r *analyze.Result) *svgView {
	k := representative(r.Timelines)
	if k < 0 {
		return nil
	}
	it := r.Timelines[k]
	span := it.End - it.Start
	if span <= 0 {
		return nil
	}
	v := &svgView{Iter: it.Index, Of: len(r.Timelines), WallMs: float64(span) / 1e6, W: svgWidth, X0: svgGutter, X1: svgWidth - svgPadRight, PlotW: svgWidth - svgPadRight - svgGutter}
	nsPerPx := float64(span) / (v.X1 - v.X0)
	type lane struct {
		name, sub string
		segs      []analyze.Seg
		label     func(string) string
		gaps      bool
	}
	lanes := []lane{
		{"Attribution", "wall time", it.Attr, attrLabel, false},
		{"CPU thread", "scope thread", it.CPU, cpuLabel, false},
		{"GPU", "all streams", it.GPU, gpuLabel, true},
	}
	y := svgTop
	for _, l := range lanes {
		lv := laneView{Name: l.name, Sub: l.sub, Y: y, H: svgLaneH, LabelY: y + svgLaneH/2}
		lv.Marks = layoutLane(l.segs, it.Start, nsPerPx, v.X0, l.label, l.gaps)
		v.Lanes = append(v.Lanes, lv)
		v.Legend = append(v.Legend, legendFor(l.name, l.segs, l.label, l.gaps))
		y += svgLaneH + svgLaneGap
	}
	v.AxisY = y - svgLaneGap + 4
	v.H = v.AxisY + 22
	step := niceStep(v.WallMs / 8)
	for t := 0.0; t <= v.WallMs+1e-9; t += step {
		label := trimFloat(t) + " ms"
		if t == 0 {
			label = "0"
		}
		v.Ticks = append(v.Ticks, tickView{X: v.X0 + t*1e6/nsPerPx, Label: label})
	}
	v.Scale = fmt.Sprintf("%.3f ms per pixel at full width", nsPerPx/1e6)
	return v
}

// layoutLane turns a lane's segments into marks. Segments at least
// svgMinPx wide are drawn as they are. Runs of narrower ones are merged into
// clusters of at most svgClusterPx, drawn as a stacked column: each category
// gets a height proportional to its share of the cluster's time, so on the
// GPU lane (which has gaps) the column's height is how busy the GPU was.
func layoutLane(segs []analyze.Seg, t0 int64, nsPerPx, x0 float64, label func(string) string, gaps bool) []markView {
	minNs := int64(math.Ceil(svgMinPx * nsPerPx))
	maxNs := int64(svgClusterPx * nsPerPx)
	px := func(t int64) float64 { return x0 + float64(t-t0)/nsPerPx }
	width := func(start, end int64) string {
		// a little overlap hides anti-aliasing seams between adjacent marks
		return fmtPx(math.Max(float64(end-start)/nsPerPx, svgMinPx) + 0.2)
	}
	var out []markView
	single := func(start, end int64, cat string) {
		h := svgLaneH
		if gaps && end-start < minNs {
			// a lone short kernel in idle time: a tick, not a full-height
			// bar that would read as a busy GPU
			h = math.Max(svgLaneH*float64(end-start)/float64(minNs), svgLaneH*0.3)
		}
		out = append(out, markView{Tip: segTip(label(cat), start-t0, end-start),
			Rects: []rectView{{X: fmtPx(px(start)), W: width(start, end), Y: fmtPx(svgLaneH - h), H: fmtPx(h), Class: catClass(cat)}}})
	}
	type part struct {
		cat string
		ns  int64
	}
	var cl struct {
		start, end, busy int64
		n                int
		parts            []part
	}
	flush := func() {
		if cl.n == 0 {
			return
		}
		defer func() { cl.n, cl.busy, cl.parts = 0, 0, cl.parts[:0] }()
		if cl.n == 1 {
			single(cl.start, cl.end, cl.parts[0].cat)
			return
		}
		span := cl.end - cl.start
		// stack in palette order so that the same category sits at the
		// same height in neighbouring columns
		sort.SliceStable(cl.parts, func(a, b int) bool { return paletteRank(cl.parts[a].cat) < paletteRank(cl.parts[b].cat) })
		m := markView{}
		x, w := fmtPx(px(cl.start)), width(cl.start, cl.end)
		y := svgLaneH
		for _, p := range cl.parts {
			h := svgLaneH * float64(p.ns) / float64(span)
			y -= h
			if h < 0.3 {
				continue
			}
			m.Rects = append(m.Rects, rectView{X: x, W: w, Y: fmtPx(y), H: fmtPx(h + 0.1), Class: catClass(p.cat)})
		}
		sort.SliceStable(cl.parts, func(a, b int) bool { return cl.parts[a].ns > cl.parts[b].ns })
		var mix []string
		for i, p := range cl.parts {
			if i == 4 {
				mix = append(mix, "…")
				break
			}
			mix = append(mix, fmt.Sprintf("%s %s", label(p.cat), sharePct(p.ns, span)))
		}
		if gaps && cl.busy < span {
			mix = append(mix, "idle "+sharePct(span-cl.busy, span))
		}
		m.Tip = fmt.Sprintf("%d short segments, %s–%s ms: %s", cl.n, fmtMs(cl.start-t0), fmtMs(cl.end-t0), strings.Join(mix, ", "))
		out = append(out, m)
	}
	for _, s := range segs {
		d := s.End - s.Start
		if d <= 0 {
			continue
		}
		if d >= minNs {
			flush()
			single(s.Start, s.End, s.Cat)
			continue
		}
		if cl.n > 0 && (s.Start-cl.end > minNs || s.End-cl.start > maxNs) {
			flush()
		}
		if cl.n == 0 {
			cl.start = s.Start
		}
		cl.end = s.End
		cl.busy += d
		cl.n++
		found := false
		for i := range cl.parts {
			if cl.parts[i].cat == s.Cat {
				cl.parts[i].ns += d
				found = true
				break
			}
		}
		if !found {
			cl.parts = append(cl.parts, part{s.Cat, d})
		}
	}
	flush()
	return out
}

func paletteRank(cat string) int {
	if i, ok := paletteIndex[cat]; ok {
		return i
	}
	return len(palette)
}

func sharePct(part, whole int64) string {
	p := 100 * float64(part) / float64(whole)
	if p > 0 && p < 1 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

func legendFor(lane string, segs []analyze.Seg, label func(string) string, gaps bool) legendGroup {
	seen := map[string]bool{}
	for _, s := range segs {
		seen[s.Cat] = true
	}
	g := legendGroup{Lane: lane}
	for _, p := range palette { // palette order is the display order
		if seen[p.cat] {
			g.Items = append(g.Items, legendItem{Class: catClass(p.cat), Label: label(p.cat)})
			delete(seen, p.cat)
		}
	}
	var rest []string
	for c := range seen {
		rest = append(rest, c)
	}
	sort.Strings(rest)
	for _, c := range rest {
		g.Items = append(g.Items, legendItem{Class: catClass(c), Label: label(c)})
	}
	if gaps {
		g.Items = append(g.Items, legendItem{Class: "lane-bg", Label: "idle (no GPU work)"})
	}
	return g
}

func segTip(label string, start, dur int64) string {
	return fmt.Sprintf("%s: at %s ms, %s", label, fmtMs(start), fmtDur(dur))
}

func fmtMs(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

func fmtDur(ns int64) string {
	if ns < 1e6 {
		return fmt.Sprintf("%.1f µs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%.3f ms", float64(ns)/1e6)
}

func fmtPx(x float64) string { return trimFloat(math.Round(x*10) / 10) }

func trimFloat(x float64) string {
	s := fmt.Sprintf("%.3f", x)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// niceStep rounds a raw tick step up to 1, 2 or 5 × 10^k.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"code":     codeSpans,
	"f1":       func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"f2":       func(x float64) string { return fmt.Sprintf("%.2f", x) },
	"f3":       func(x float64) string { return fmt.Sprintf("%.3f", x) },
	"bar":      func(pct float64) string { return fmt.Sprintf("%.3f", math.Max(0, math.Min(pct, 100))) },
	"impact":   func(pct float64) string { return sharePct(int64(pct*1e3), 100e3) },
	"lower":    strings.ToLower,
	"sentence": sentence,
	"inside":   func(pct float64) bool { return pct >= 7 },
}).Parse(htmlTemplate))

const htmlTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>InferScope report: {{.R.Scope.Name}}</title>
<style>
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--accent:#0969da}
*{box-sizing:border-box}
body{margin:0;background:#fff;color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 32px 48px}
h1{font-size:22px;margin:0 0 4px;font-weight:600}
h1 .scope{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-weight:600}
h2{font-size:18px;margin:34px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line);font-weight:600}
h3{font-size:15px;margin:24px 0 8px;font-weight:600}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
code{background:var(--soft);border:1px solid #e6eaef;border-radius:4px;padding:0 4px}
.muted{color:var(--muted)}
.headline{display:flex;gap:28px;align-items:flex-start;flex-wrap:wrap;margin-top:18px;padding:18px 22px;border:1px solid var(--line);border-radius:10px;background:var(--soft)}
.kpi .num{font-size:34px;font-weight:650;line-height:1.1;font-variant-numeric:tabular-nums}
.kpi .lbl{font-size:13px;color:var(--muted)}
.verdict{flex:1;min-width:320px}
.badge{display:inline-block;padding:2px 10px;border-radius:999px;font-weight:600;font-size:14px;color:#fff;background:#57606a}
.b-gpu-bound{background:#1a7f37}.b-copy-bound{background:#bc4c00}.b-launch-bound{background:#8250df}
.b-sync-bound{background:#8a4baf}.b-cpu-bound{background:#9a6700}.b-cpu-only{background:#0969da}.b-balanced{background:#57606a}
.reason{margin-top:6px}
.warn{margin:16px 0 0;padding:10px 14px;border:1px solid #d4a72c;background:#fff8c5;border-radius:8px}
.stack{display:flex;height:34px;border-radius:6px;overflow:hidden;border:1px solid var(--line);margin:4px 0 14px}
.stack div{height:100%;min-width:1px;color:#fff;font-size:12px;font-weight:600;line-height:34px;text-align:center;white-space:nowrap;overflow:hidden;text-shadow:0 0 2px rgba(0,0,0,.45)}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{padding:6px 10px;border-bottom:1px solid #e6eaef;text-align:left;vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:12.5px;text-transform:uppercase;letter-spacing:.03em;background:var(--soft)}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.total td{font-weight:600;border-top:2px solid var(--line)}
tr.excluded td{color:var(--muted)}
.bd,.narrow{max-width:760px}.ops{max-width:900px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:8px;vertical-align:-1px}
.minibar{background:#eef1f4;border-radius:3px;height:8px;width:140px;display:inline-block;vertical-align:middle}
.minibar span{display:block;height:8px;border-radius:3px}
.finding{border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:8px;padding:10px 16px;margin:0 0 12px}
.finding .t{font-weight:600}
.finding .id{font-size:12px;color:var(--muted);margin-left:6px}
.finding ul{margin:6px 0 0;padding-left:20px}
.finding li{margin:2px 0;overflow-wrap:anywhere}
ol.sugg li{margin:6px 0}
.because{font-size:12.5px;color:var(--muted)}
ul.facts{padding-left:20px}ul.facts li{margin:3px 0}
td.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;overflow-wrap:anywhere}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0;font-size:14px}
dl.meta dt{color:var(--muted)}dl.meta dd{margin:0;overflow-wrap:anywhere}
.tl{border:1px solid var(--line);border-radius:8px;padding:10px 10px 4px}
.tl svg{width:100%;height:auto;display:block}
.tl text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:#1f2328}
.tl text.sub{fill:#59636e;font-size:10.5px}
.tl text.tick{fill:#59636e;font-size:11px}
.tl line.grid{stroke:#e6eaef;stroke-width:1}
.tl line.axis{stroke:#8c959f;stroke-width:1}
.lane-bg{fill:#f3f4f6;background-color:#f3f4f6;border:1px solid #d1d9e0}
.legend{display:flex;flex-direction:column;gap:4px;margin:10px 4px 6px;font-size:12.5px}
.legend .g{display:flex;flex-wrap:wrap;gap:2px 12px;align-items:center}
.legend .lane{font-weight:600;margin-right:2px}
footer{margin-top:40px;font-size:12.5px;color:var(--muted)}
{{.Palette}}
</style>
</head>
<body>
<main>
<h1>InferScope report: <span class="scope">{{.R.Scope.Name}}</span></h1>
<div class="muted">{{.R.Scope.Thread}} · {{.R.Scope.Analyzed}} of {{.R.Scope.Iterations}} iterations analysed</div>
{{range .Warnings}}<div class="warn"><strong>{{.K}}:</strong> {{.V}}</div>
{{end}}
<section class="headline">
<div class="kpi"><div class="num">{{f2 .R.E2EMs}} ms</div><div class="lbl">end-to-end latency{{if .Latency}}<br>{{.Latency}}{{end}}</div></div>
<div class="verdict"><span class="badge b-{{lower .R.Classification}}">{{.R.Classification}}</span>
<div class="reason">{{code (sentence .R.ClassReason)}}</div></div>
</section>

<h2>Breakdown</h2>
<div class="stack" role="img" aria-label="breakdown of the end-to-end latency">
{{- range .Breakdown}}{{if gt .Pct 0.0}}<div class="{{.Class}}" style="width:{{bar .Pct}}%" title="{{.Label}}: {{f3 .Ms}} ms ({{f1 .Pct}}%)">{{if inside .Pct}}{{.Label}} {{printf "%.0f" .Pct}}%{{end}}</div>{{end}}{{end -}}
</div>
<table class="bd">
<thead><tr><th>category</th><th class="n">ms / iteration</th><th class="n">%</th><th></th></tr></thead>
<tbody>
{{range .Breakdown}}<tr><td><span class="sw {{.Class}}"></span>{{.Label}}</td><td class="n">{{f3 .Ms}}</td><td class="n">{{f1 .Pct}}</td><td><span class="minibar"><span class="{{.Class}}" style="width:{{bar .Pct}}%"></span></span></td></tr>
{{end}}<tr class="total"><td>Sum</td><td class="n">{{f3 .SumMs}}</td><td class="n"></td><td class="muted">end-to-end {{f3 .R.E2EMs}} ms</td></tr>
</tbody>
</table>
{{if .GPULine}}<p>{{.GPULine}}</p>{{end}}

{{with .Timeline}}
<h2>Timeline of iteration {{.Iter}}</h2>
<p class="muted">{{if gt .Of 1}}The analysed iteration of median wall time ({{f3 .WallMs}} ms; {{.Of}} analysed).{{else}}The analysed iteration ({{f3 .WallMs}} ms).{{end}} Hover a segment for its category, start and duration. Runs of segments narrower than half a pixel ({{.Scale}}) are drawn as stacked columns: each category's height is its share of the column's time, and on the GPU lane the empty part is idle time.</p>
<div class="tl">
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="timeline of iteration {{.Iter}}">
{{range .Ticks}}<line class="grid" x1="{{.X}}" x2="{{.X}}" y1="4" y2="{{$.Timeline.AxisY}}"/>
{{end -}}
{{range .Lanes}}<text x="4" y="{{.LabelY}}" dy="-1">{{.Name}}</text><text class="sub" x="4" y="{{.LabelY}}" dy="12">{{.Sub}}</text>
<rect class="lane-bg" x="{{$.Timeline.X0}}" y="{{.Y}}" width="{{$.Timeline.PlotW}}" height="{{.H}}"/>
<g transform="translate(0 {{.Y}})">
{{range .Marks}}{{if eq (len .Rects) 1}}{{$r := index .Rects 0}}<rect x="{{$r.X}}" y="{{$r.Y}}" width="{{$r.W}}" height="{{$r.H}}" class="{{$r.Class}}"><title>{{.Tip}}</title></rect>
{{else}}<g><title>{{.Tip}}</title>{{range .Rects}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" class="{{.Class}}"/>{{end}}</g>
{{end}}{{end}}</g>
{{end -}}
<line class="axis" x1="{{.X0}}" x2="{{.X1}}" y1="{{.AxisY}}" y2="{{.AxisY}}"/>
{{range .Ticks}}<text class="tick" x="{{.X}}" y="{{$.Timeline.AxisY}}" dy="15" text-anchor="middle">{{.Label}}</text>
{{end -}}
</svg>
<div class="legend">{{range .Legend}}<div class="g"><span class="lane">{{.Lane}}</span>{{range .Items}}<span><span class="sw {{.Class}}"></span>{{.Label}}</span>{{end}}</div>{{end}}</div>
</div>
{{end}}

<h2>Diagnosis</h2>
{{range .Diagnosis}}<div class="finding"><div><span class="t">{{code .Title}}</span><span class="id">[{{.ID}}]{{if gt .Impact 0.0}} · explains {{impact .Impact}} of wall time{{end}}</span></div>
{{if .Evidence}}<ul>{{range .Evidence}}<li>{{.}}</li>{{end}}</ul>{{end}}</div>
{{else}}<p class="muted">No findings.</p>
{{end}}
<h2>Suggestions</h2>
{{if .Suggestions}}<ol class="sugg">
{{range .Suggestions}}<li>{{code .Text}} <span class="because">(because: {{.Reason}})</span></li>
{{end}}</ol>{{else}}<p class="muted">No suggestions.</p>{{end}}

<h2>Details</h2>
{{if .Metrics}}<ul class="facts">
{{range .Metrics}}<li>{{code .}}</li>
{{end}}</ul>{{end}}
{{if .Kernels}}<h3>Top kernels (per iteration)</h3>
<table>
<thead><tr><th>kernel</th><th>class</th><th class="n">count</th><th class="n">total ms</th><th class="n">mean µs</th><th class="n">% GPU</th></tr></thead>
<tbody>
{{range .Kernels}}<tr><td class="name" title="{{.Name}}">{{.Short}}</td><td>{{.Class}}</td><td class="n">{{.Count}}</td><td class="n">{{f3 .Ms}}</td><td class="n">{{f1 .MeanUs}}</td><td class="n">{{f1 .Pct}}</td></tr>
{{end}}</tbody>
</table>{{end}}
{{if .Ops}}<h3>Top CPU ops by self time (per iteration)</h3>
<table class="ops">
<thead><tr><th>op</th><th class="n">count</th><th class="n">self ms</th><th class="n">% of e2e</th></tr></thead>
<tbody>
{{range .Ops}}<tr><td class="name" title="{{.Name}}">{{.Short}}</td><td class="n">{{.Count}}</td><td class="n">{{f3 .Ms}}</td><td class="n">{{f1 .Pct}}</td></tr>
{{end}}</tbody>
</table>{{end}}
{{if gt (len .Iterations) 1}}<h3>Iterations</h3>
<table class="narrow">
<thead><tr><th class="n">#</th><th class="n">start ms</th><th class="n">wall ms</th><th class="n">GPU busy %</th><th></th></tr></thead>
<tbody>
{{range .Iterations}}<tr{{if .Excluded}} class="excluded"{{end}}><td class="n">{{.Index}}</td><td class="n">{{f2 .StartMs}}</td><td class="n">{{f3 .Ms}}</td><td class="n">{{f1 .GPUBusyPct}}</td><td>{{if .Excluded}}excluded (warm-up){{end}}</td></tr>
{{end}}</tbody>
</table>{{end}}
<h3>Trace</h3>
<dl class="meta">
{{range .Trace}}<dt>{{.K}}</dt><dd>{{.V}}</dd>
{{end}}</dl>
<footer>Generated by InferScope {{.R.Metadata.ToolVersion}} · report schema {{.R.Schema}}</footer>
</main>
</body>
</html>
`
