package driver

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/inferscope/inferscope/internal/probe"
	"github.com/inferscope/inferscope/internal/run"
)

// Collectors are the --collector values; auto is the default.
var Collectors = []string{"auto", "cupti", "torch", "none"}

// resolveCollector turns --collector into the collector to launch with
// and, for cupti, its built library. auto probes the host without
// running Python (run must not pay a torch import).
func resolveCollector(name string, command []string, stderr io.Writer) (collector, lib string, err error) {
	if name != "auto" && name != "cupti" {
		return name, "", nil
	}
	f := probe.Collect(probe.Local(), interpreters(command)...)
	return pickCollector(name, f, cuptiBuild{run.CUPTILibrary, run.CachedCUPTILibrary}, stderr)
}

// cuptiBuild is how the collector library is had; tests replace it.
type cuptiBuild struct {
	build  func(probe.Toolkit) (string, error)
	cached func(probe.Toolkit) string
}

// pickCollector applies probe.Choose for auto and falls back to
// torch.profiler when the CUPTI collector does not build; an explicit
// cupti fails instead. The choice and its reason go to stderr as one line.
func pickCollector(name string, f probe.Facts, b cuptiBuild, stderr io.Writer) (collector, lib string, err error) {
	tk, haveTK := f.BestCUPTI()
	if name == "cupti" {
		if f.ProfilingBlocked() {
			fmt.Fprintln(stderr, "inferscope: warning: GPU profiling is restricted to admin users (NVreg_RestrictProfilingToAdminUsers=1) and this is not root: CUPTI will record no kernels; see inferscope doctor")
		}
		lib, err := b.build(tk)
		if err != nil {
			return "", "", err
		}
		src := lib
		if haveTK && f.Prebuilt == "" {
			src = probe.Describe(tk)
		}
		fmt.Fprintf(stderr, "inferscope: collector cupti (--collector cupti, %s)\n", src)
		return "cupti", lib, nil
	}
	if haveTK {
		f.CachedLib = b.cached(tk)
	}
	collector, why := probe.Choose(f)
	if collector == "cupti" {
		if lib, err = b.build(tk); err != nil {
			fmt.Fprintf(stderr, "inferscope: warning: %v; falling back to torch.profiler (inferscope doctor --build says more)\n", err)
			collector, why = "torch", "the CUPTI collector did not build"
		}
	}
	fmt.Fprintf(stderr, "inferscope: collector %s (%s)\n", collector, why)
	return collector, lib, nil
}

// interpreters is the workload's Python when it is launched directly, so
// its site-packages are searched for CUPTI wheels.
func interpreters(command []string) []string {
	if len(command) > 0 && strings.HasPrefix(filepath.Base(command[0]), "python") {
		return []string{command[0]}
	}
	return nil
}
