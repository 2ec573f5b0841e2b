// Package run launches a workload with collection enabled: the environment
// that turns the Python package on, signal forwarding, and the exit status.
package run

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options configure one launch.
type Options struct {
	Command     []string
	RawDir      string // where the collectors write; created
	Collector   string // torch | cupti | none, already resolved from auto
	CUPTILib    string // the built collector, for cupti (CUPTILibrary)
	TraceSizeMB int
	AutoSpans   bool
}

// Outcome is how the workload ended.
type Outcome struct {
	ExitCode int
	Signal   string // set when the workload died of a signal
	Wall     time.Duration
}

// Launch runs the workload to completion with the workload's own stdin,
// stdout and stderr. SIGINT and SIGTERM received by InferScope are passed
// on to the workload's process group, and InferScope keeps running to
// write the report.
func Launch(opt Options) (Outcome, error) {
	if len(opt.Command) == 0 {
		return Outcome{}, errors.New("no command to run: usage is inferscope run [flags] -- CMD [ARGS...]")
	}
	if err := os.MkdirAll(opt.RawDir, 0o755); err != nil {
		return Outcome{}, fmt.Errorf("create %s: %w", opt.RawDir, err)
	}
	pyDir, err := extractPython()
	if err != nil {
		return Outcome{}, err
	}
	path, err := exec.LookPath(opt.Command[0])
	if err != nil {
		return Outcome{}, fmt.Errorf("cannot run %q: %w", opt.Command[0], err)
	}
	if opt.Collector == "cupti" && opt.CUPTILib == "" {
		return Outcome{}, errors.New("collector cupti: no library given (CUPTILibrary builds it)")
	}
	cmd := exec.Command(path, opt.Command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = Environ(os.Environ(), opt, pyDir)
	// Own process group: a terminal's Ctrl+C reaches InferScope, which
	// forwards it once, instead of the workload getting it twice.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Outcome{}, fmt.Errorf("start %s: %w", opt.Command[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal))
		case err := <-done:
			return outcome(cmd, err, time.Since(start))
		}
	}
}

func outcome(cmd *exec.Cmd, err error, wall time.Duration) (Outcome, error) {
	o := Outcome{Wall: wall}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return o, err
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		o.Signal = signalName(ws.Signal())
		o.ExitCode = 128 + int(ws.Signal())
	default:
		o.ExitCode = cmd.ProcessState.ExitCode()
	}
	return o, nil
}

// Environ is the workload's environment: the user's, plus the variables of
// docs/raw-stream.md and the package dir first on PYTHONPATH.
func Environ(base []string, opt Options, pyDir string) []string {
	set := map[string]string{
		"INFERSCOPE_RAW_DIR":    opt.RawDir,
		"INFERSCOPE_COLLECTOR":  opt.Collector,
		"INFERSCOPE_AUTO_SPANS": map[bool]string{true: "1", false: "0"}[opt.AutoSpans],
	}
	if opt.TraceSizeMB > 0 {
		set["INFERSCOPE_TRACE_SIZE_MB"] = strconv.Itoa(opt.TraceSizeMB)
	}
	if opt.Collector == "cupti" && opt.CUPTILib != "" {
		// Any CUDA program, Python or not, loads the collector at cuInit;
		// the Python package loads the same library at its first scope.
		set["CUDA_INJECTION64_PATH"] = opt.CUPTILib
		set["INFERSCOPE_CUPTI_LIB"] = opt.CUPTILib
	}
	pp := filepath.Join(pyDir, "inferscope_boot") + string(os.PathListSeparator) + pyDir
	var out []string
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if _, ours := set[k]; ours {
			continue
		}
		if k == "PYTHONPATH" {
			if v != "" {
				pp += string(os.PathListSeparator) + v
			}
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return append(out, "PYTHONPATH="+pp)
}

var signalNames = map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGHUP: "SIGHUP", syscall.SIGBUS: "SIGBUS", syscall.SIGQUIT: "SIGQUIT"}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}
