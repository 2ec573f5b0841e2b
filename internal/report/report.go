// Package report renders an analysis result. Every format is registered in
// one table, so adding one is adding a function and a line.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/timeline"
)

// Input is what a renderer may use: the result, and the timeline for
// formats that re-emit events (Perfetto).
type Input struct {
	Result   *analyze.Result
	Timeline *timeline.Timeline
}

// Renderer writes one format.
type Renderer func(w io.Writer, in Input) error

var formats = map[string]Renderer{
	"md":   func(w io.Writer, in Input) error { return Markdown(w, in.Result) },
	"json": func(w io.Writer, in Input) error { return JSON(w, in.Result) },
}

// register adds a format; called from the init of the file that implements it.
func register(name string, r Renderer) { formats[name] = r }

// Formats lists the known format names.
func Formats() []string {
	var out []string
	for k := range formats {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Render writes in as format.
func Render(w io.Writer, format string, in Input) error {
	r, ok := formats[format]
	if !ok {
		return fmt.Errorf("unknown report format %q (known: %s)", format, strings.Join(Formats(), ", "))
	}
	return r(w, in)
}

// FormatFor guesses a format from an output file name.
func FormatFor(path string) string {
	switch {
	case strings.HasSuffix(path, ".html"), strings.HasSuffix(path, ".htm"):
		return "html"
	case strings.HasSuffix(path, ".json"):
		if strings.Contains(path, "trace") || strings.Contains(path, "perfetto") {
			return "perfetto"
		}
		return "json"
	}
	return "md"
}

// launchLine is the Details line on launches, shared by the formats.
func launchLine(m analyze.Metrics) string {
	if m.LaunchCallsSampled && m.LaunchCallsSeen == 0 {
		return fmt.Sprintf("Launches: ~%d per iteration (one per kernel); launch calls sampled, none in the analysed iterations (run more iterations for per-call cost); median GPU idle gap %.1f µs",
			m.LaunchCalls, m.GapMedianUs)
	}
	if m.LaunchCallsSampled {
		return fmt.Sprintf("Launches: ~%d per iteration (one per kernel); launch calls sampled (%d seen): %.1f µs each on the CPU, launch → kernel start median %.1f µs; median GPU idle gap %.1f µs",
			m.LaunchCalls, m.LaunchCallsSeen, m.LaunchCallMeanUs, m.LaunchDelayUs, m.GapMedianUs)
	}
	return fmt.Sprintf("Launches: %d calls per iteration, %.1f µs each on the CPU; launch → kernel start median %.1f µs; median GPU idle gap %.1f µs",
		m.LaunchCalls, m.LaunchCallMeanUs, m.LaunchDelayUs, m.GapMedianUs)
}
