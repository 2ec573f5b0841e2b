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
	"slices"
	"strings"
	"time"

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
	root.AddCommand(analyzeCmd(), runCmd(), doctorCmd(), versionCmd())
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
	var ee *driver.ExitError
	if !errors.As(err, &ee) {
		fmt.Fprintln(stderr, "inferscope: "+msg)
	}
	var ie *driver.InputError
	switch {
	case errors.As(err, &ee):
		return ee.Code // the workload's own status, already reported
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

func runCmd() *cobra.Command {
	req := driver.RunRequest{Options: analyze.DefaultOptions(), OutputDir: "outputs", Collector: "auto", AutoSpans: true}
	noAuto := false
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Run a workload with collection on, then write its trace and report",
		Long: `Launches CMD with the inferscope Python package active (no install or code change
needed: scope() regions and automatic spans for tokenizers, generate, forward and
host<->device copies) and a GPU/op collector, and writes
outputs/trace_<scope>_<time>.json (opens in Perfetto) and the report. The exit code
is the workload's. Ctrl+C, SIGTERM, exceptions and kills still leave a report.

--collector auto (the default) uses the native CUPTI collector when this machine
has an NVIDIA GPU, GPU profiling is allowed, CUPTI headers and libcupti are found
(CUDA toolkit or pip's nvidia-cuda-cupti) and gcc can build it (cached after the
first run); otherwise torch.profiler. One stderr line says which and why;
"inferscope doctor" explains the choice and how to fix what is missing.

A trailing "--report FILE" (and "--format F") after the command is taken by
InferScope, as in "inferscope run python infer.py --report report.md"; put the
flags before "--" if your program has its own --report.`,
		Example: `  inferscope run -- python3 infer.py
  inferscope run --report report.html -- python3 infer.py --batch-size 8
  inferscope run python3 infer.py --report report.md`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("run needs a command: inferscope run [flags] -- CMD [ARGS...]")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			rest, rep, format := driver.SplitTrailingReport(args)
			if rep != "" {
				req.Report = rep
			}
			if format != "" {
				req.Format = format
			}
			req.Command = rest
			req.AutoSpans = !noAuto
			req.Options.ToolVersion = toolVersion()
			if !slices.Contains(driver.Collectors, req.Collector) {
				return usageError{fmt.Errorf("unknown --collector %q (known: %s)", req.Collector, strings.Join(driver.Collectors, ", "))}
			}
			code, err := driver.Run(req, cmd.ErrOrStderr())
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "inferscope: "+err.Error())
			}
			if code != 0 || err != nil {
				return &driver.ExitError{Code: max(code, boolInt(err != nil))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // everything after the command is the command's
	f.StringVar(&req.Report, "report", "", "report file (default: <output-dir>/report_<scope>_<time>.md)")
	f.StringVarP(&req.Format, "format", "f", "", fmt.Sprintf("report format: %v (default: from --report's extension, else md)", report.Formats()))
	f.StringVar(&req.OutputDir, "output-dir", req.OutputDir, "directory for the trace and default report")
	f.StringVar(&req.Collector, "collector", req.Collector, "GPU/op collector: auto (cupti where it can work, else torch; see inferscope doctor), cupti (native CUPTI library, built on first use), torch (torch.profiler) or none (Python spans only)")
	f.IntVar(&req.TraceSizeMB, "trace-size-mb", 0, "memory bound for buffered spans (INFERSCOPE_TRACE_SIZE_MB; default 64)")
	f.BoolVar(&noAuto, "no-auto-spans", false, "do not patch tokenizers / generate / forward / .to() for automatic spans")
	f.BoolVar(&req.KeepRaw, "keep-raw", false, "keep the raw collector files under <output-dir>/.raw")
	f.StringVar(&req.Options.Scope, "scope", "", "scope to analyze (default: the outermost one with the most time)")
	return cmd
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func doctorCmd() *cobra.Command {
	req := driver.DoctorRequest{Python: "python3", Timeout: 20 * time.Second}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say which collector `run` will use on this machine, and why",
		Long: `Checks what this machine can collect: NVIDIA driver and GPUs, libcuda, the
driver's profiling permission (NVreg_RestrictProfilingToAdminUsers), CUDA toolkits
and pip wheels with CUPTI headers, gcc, and the workload's Python and torch. Prints
one line per check (ok, warn, fail) with the fix for each problem, then the
collector "inferscope run --collector auto" picks. Exits 0 whatever it finds.`,
		Example: `  inferscope doctor
  inferscope doctor --build
  inferscope doctor --python .venv/bin/python --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return driver.Doctor(req, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Python, "python", req.Python, "the workload's Python interpreter (asked for its sys.path and whether torch sees the GPU)")
	f.DurationVar(&req.Timeout, "python-timeout", req.Timeout, "how long that interpreter may take (importing torch is slow)")
	f.BoolVar(&req.Build, "build", false, "build the CUPTI collector now and report its cached path")
	f.BoolVar(&req.JSON, "json", false, "machine-readable output")
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
