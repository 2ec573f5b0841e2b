// Package driver wires the one-way pipeline — import → timeline → analyze →
// report — for the commands. The CLI only parses flags and calls it.
package driver

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/collect"
	"github.com/inferscope/inferscope/internal/report"
	"github.com/inferscope/inferscope/internal/timeline"
	"github.com/inferscope/inferscope/internal/trace"
	"github.com/inferscope/inferscope/internal/trace/kineto"
)

// InputError marks a problem with what the user gave us (exit code 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// AnalyzeRequest is one `inferscope analyze` invocation.
type AnalyzeRequest struct {
	Trace   string
	Output  string // "" or "-": stdout
	Format  string // "" guesses from Output, else md
	Options analyze.Options
}

// Load imports and analyses a trace file.
func Load(path string, opt analyze.Options) (report.Input, error) {
	var t *trace.Trace
	var err error
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		// a raw directory kept by `inferscope run --keep-raw`
		t, err = collect.ReadDir(path)
	} else {
		t, err = kineto.ReadFile(path)
	}
	if err != nil {
		return report.Input{}, &InputError{fmt.Errorf("read trace: %w", err)}
	}
	tl := timeline.Build(t)
	r, err := analyze.Analyze(tl, opt)
	if err != nil {
		return report.Input{}, &InputError{fmt.Errorf("analyze %s: %w", path, err)}
	}
	return report.Input{Result: r, Timeline: tl}, nil
}

// Analyze runs the request and writes the report.
func Analyze(req AnalyzeRequest, stdout io.Writer) error {
	format := req.Format
	if format == "" {
		format = report.FormatFor(req.Output)
	}
	if !slices.Contains(report.Formats(), format) {
		return &InputError{fmt.Errorf("unknown --format %q (known: %v)", format, report.Formats())}
	}
	in, err := Load(req.Trace, req.Options)
	if err != nil {
		return err
	}
	return WriteReport(in, req.Output, format, stdout)
}

// WriteReport renders in to path ("" or "-": stdout) atomically, so a
// reader never sees half a report.
func WriteReport(in report.Input, path, format string, stdout io.Writer) error {
	if path == "" || path == "-" {
		bw := bufio.NewWriter(stdout)
		if err := report.Render(bw, format, in); err != nil {
			return err
		}
		return bw.Flush()
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".inferscope-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := report.Render(bw, format, in); err != nil {
		tmp.Close()
		return fmt.Errorf("render %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes 0600; a report is meant to be shared
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
