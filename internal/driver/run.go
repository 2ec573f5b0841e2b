package driver

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/collect"
	"github.com/inferscope/inferscope/internal/report"
	"github.com/inferscope/inferscope/internal/run"
	"github.com/inferscope/inferscope/internal/timeline"
)

// RunRequest is one `inferscope run` invocation.
type RunRequest struct {
	Command     []string
	OutputDir   string
	Report      string // "" → OutputDir/report_<scope>_<time>.<format>
	Format      string
	Collector   string // one of Collectors
	TraceSizeMB int
	AutoSpans   bool
	KeepRaw     bool
	Options     analyze.Options
}

// SplitTrailingReport takes a trailing `--report FILE` / `--format F` off
// the workload's command line, as the seed README writes it
// (`inferscope run python infer.py --report report.md`).
func SplitTrailingReport(cmd []string) (rest []string, reportPath, format string) {
	rest = cmd
	for len(rest) >= 3 {
		n := len(rest)
		switch rest[n-2] {
		case "--report":
			reportPath = rest[n-1]
		case "--format":
			format = rest[n-1]
		default:
			return rest, reportPath, format
		}
		rest = rest[:n-2]
	}
	return rest, reportPath, format
}

// Run launches the workload with collection on, then writes the trace and
// the report. It returns the workload's exit code; err is for InferScope's
// own failures, which never change that code's meaning silently.
func Run(req RunRequest, stderr io.Writer) (int, error) {
	stamp := time.Now().Format("20060102-150405")
	raw := filepath.Join(req.OutputDir, ".raw", fmt.Sprintf("%s-%d", stamp, os.Getpid()))
	collector, lib, err := resolveCollector(req.Collector, req.Command, stderr)
	if err != nil {
		return 1, err
	}
	out, err := run.Launch(run.Options{Command: req.Command, RawDir: raw, Collector: collector, CUPTILib: lib, TraceSizeMB: req.TraceSizeMB, AutoSpans: req.AutoSpans})
	if err != nil {
		return 127, &InputError{err}
	}
	t0 := time.Now()
	t, err := collect.ReadDir(raw)
	if err != nil {
		return out.ExitCode, fmt.Errorf("no report: %w", err)
	}
	t.Meta.Command = req.Command
	if out.Signal != "" && !strings.Contains(t.Meta.Incomplete, out.Signal) {
		t.Meta.Incomplete = strings.TrimPrefix(t.Meta.Incomplete+"; workload killed by "+out.Signal, "; ")
	}
	tl := timeline.Build(t)
	r, err := analyze.Analyze(tl, req.Options)
	if err != nil {
		return out.ExitCode, fmt.Errorf("no report: %w", err)
	}
	in := report.Input{Result: r, Timeline: tl}
	name := fileName(r.Scope.Name)
	format := req.Format
	if format == "" {
		format = "md"
		if req.Report != "" {
			format = report.FormatFor(req.Report)
		}
	}
	repPath := req.Report
	if repPath == "" {
		repPath = filepath.Join(req.OutputDir, fmt.Sprintf("report_%s_%s.%s", name, stamp, format))
	}
	if err := WriteReport(in, repPath, format, nil); err != nil {
		return out.ExitCode, err
	}
	took := time.Since(t0) // the report is on disk; the trace file follows
	tracePath := filepath.Join(req.OutputDir, fmt.Sprintf("trace_%s_%s.json", name, stamp))
	if err := WriteReport(in, tracePath, "perfetto", nil); err != nil {
		return out.ExitCode, err
	}
	if !req.KeepRaw {
		os.RemoveAll(raw)
		os.Remove(filepath.Dir(raw)) // only if no other run's raw files are there
	}
	fmt.Fprintln(stderr, Summary(r, took))
	fmt.Fprintf(stderr, "inferscope: report %s, trace %s\n", repPath, tracePath)
	return out.ExitCode, nil
}

// Summary is the one-paragraph verdict printed after a run.
func Summary(r *analyze.Result, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "inferscope: %s — %.2f ms per iteration", r.Scope.Name, r.E2EMs)
	if r.Scope.Analyzed > 1 {
		fmt.Fprintf(&b, " (%d iterations)", r.Scope.Analyzed)
	}
	fmt.Fprintf(&b, ", %s: %s.", r.Classification, r.ClassReason)
	if len(r.Diagnosis) > 0 {
		fmt.Fprintf(&b, " %s.", strings.TrimSuffix(r.Diagnosis[0].Title, "."))
	}
	if len(r.Suggestions) > 0 {
		fmt.Fprintf(&b, " First fix: %s", r.Suggestions[0].Text)
	}
	if inc := r.Metadata.Trace.Incomplete; inc != "" {
		fmt.Fprintf(&b, " Run incomplete: %s.", inc)
	}
	for _, e := range r.Metadata.Trace.Errors {
		fmt.Fprintf(&b, " Workload error: %s.", e)
	}
	fmt.Fprintf(&b, " (report ready %.2f s after exit)", took.Seconds())
	return b.String()
}

func fileName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	s = strings.Trim(s, "._")
	if s == "" {
		return "run"
	}
	return s[:min(len(s), 60)]
}
