// Package probe finds the facts about this host's NVIDIA driver, CUDA
// toolkits, CUPTI and compilers that decide which collector `inferscope
// run` can use. It reads files and runs a few short commands; it never
// loads CUDA itself (the binary is built without cgo).
package probe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// Host is the machine being probed. Every absolute path is read under
// Root, so tests build fake hosts in a temporary directory; the function
// fields stand in for the process environment and subprocesses, and a nil
// one means "not there" (no such variable, no such program).
type Host struct {
	Root      string // "" or "/": the real filesystem
	Getenv    func(string) string
	LookPath  func(string) (string, error)
	Output    func(ctx context.Context, name string, args ...string) ([]byte, error) // a command's stdout
	Superuser bool                                                                   // euid 0: profiling restrictions do not apply
}

// Local is this machine as the running process sees it.
func Local() Host {
	return Host{
		Getenv:   os.Getenv,
		LookPath: exec.LookPath,
		Output: func(ctx context.Context, name string, args ...string) ([]byte, error) {
			cmd := exec.CommandContext(ctx, name, args...)
			// A child that keeps the pipe open must not outlive the deadline.
			cmd.WaitDelay = time.Second
			out, err := cmd.Output()
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return out, err
		},
		Superuser: os.Geteuid() == 0,
	}
}

func (h Host) path(p string) string {
	if h.Root == "" {
		return p
	}
	return filepath.Join(h.Root, p)
}

func (h Host) env(k string) string {
	if h.Getenv == nil {
		return ""
	}
	return h.Getenv(k)
}

func (h Host) lookPath(name string) string {
	if h.LookPath == nil {
		return ""
	}
	p, err := h.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// output runs a command with a deadline; a missing program, a failure or a
// timeout all read as "no answer", which every caller treats as unknown.
func (h Host) output(timeout time.Duration, name string, args ...string) ([]byte, error) {
	if h.Output == nil {
		return nil, exec.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return h.Output(ctx, name, args...)
}

func (h Host) readFile(p string) (string, bool) {
	b, err := os.ReadFile(h.path(p))
	if err != nil {
		return "", false
	}
	return string(b), true
}

func (h Host) exists(p string) bool {
	_, err := os.Stat(h.path(p))
	return err == nil
}

func (h Host) isDir(p string) bool {
	st, err := os.Stat(h.path(p))
	return err == nil && st.IsDir()
}

// glob returns host paths (without Root), sorted.
func (h Host) glob(pattern string) []string {
	m, _ := filepath.Glob(h.path(pattern)) // the only error is a bad pattern, and ours are constants
	out := make([]string, 0, len(m))
	for _, p := range m {
		if h.Root != "" && h.Root != "/" {
			rel, err := filepath.Rel(h.Root, p)
			if err != nil {
				continue
			}
			p = "/" + rel
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
