// Command inferscope explains where an inference workload's end-to-end time
// goes and what to change. This file only parses flags; the work is done by
// internal/driver and the packages below it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferscope/inferscope/internal/analyze"
	"github.com/inferscope/inferscope/internal/driver"
	"github.com/inferscope/inferscope/internal/report"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func toolVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}

func main() {
	// The event model dominates the heap and is live until the report is
	// written; collecting at 50% growth instead of 100% keeps peak RSS near
	// the live size on large traces for a few percent more CPU.
	debug.SetGCPercent(50)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line; separate from main so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "inferscope",
		Short:         "Explain where inference time goes and what to change",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(analyzeCmd(), versionCmd())
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return exitCode(root.Execute(), stderr)
}

// exitCode prints err as one line and maps it to the exit status: 2 for
// bad input or usage, 1 for everything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintln(stderr, "inferscope: "+msg)
	var ie *driver.InputError
	var ee *driver.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ie), isUsage(err), strings.Contains(msg, "unknown flag"), strings.Contains(msg, "unknown command"),
		strings.Contains(msg, "flag needs an argument"), strings.Contains(msg, "invalid argument"):
		return 2
	}
	return 1
}

func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

type usageError struct{ error }

func analyzeCmd() *cobra.Command {
	req := driver.AnalyzeRequest{Options: analyze.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "analyze TRACE",
		Short: "Analyze a PyTorch profiler (Kineto) or InferScope trace and write a report",
		Long: `Reads a torch.profiler / Kineto JSON trace (plain or .gz; torch 1.13–2.x, object or
list form) or an InferScope trace, attributes the scope's wall time to causes and
writes a report. With no --output the Markdown report goes to stdout.`,
		Example: `  inferscope analyze trace.json.gz
  inferscope analyze trace.json --output report.html
  inferscope analyze trace.json --format json --scope llm_inference
  inferscope analyze trace.json --format perfetto --output trace_perfetto.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("analyze takes one trace file (got %d arguments); see inferscope analyze --help", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Trace = args[0]
			req.Options.ToolVersion = toolVersion()
			return driver.Analyze(req, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&req.Output, "output", "o", "", "report file (default: stdout)")
	f.StringVarP(&req.Format, "format", "f", "", fmt.Sprintf("report format: %v (default: from --output's extension, else md)", report.Formats()))
	f.StringVar(&req.Options.Scope, "scope", "", "scope (record_function / inferscope.scope name) to analyze (default: the outermost one with the most time)")
	f.DurationVar(&req.Options.GapThreshold, "gap-threshold", req.Options.GapThreshold, "bare host-code stretches at least this long count as CPU preprocessing")
	f.IntVar(&req.Options.Warmup, "warmup", -1, "iterations to exclude as warm-up (-1: exclude the first when it is an outlier)")
	return cmd
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "inferscope", toolVersion())
		},
	}
}
