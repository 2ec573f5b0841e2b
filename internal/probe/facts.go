package probe

import (
	"os"
	"path/filepath"
	"slices"
)

// Facts is what a probe found. Paths are the host's own (never under a
// test Root), so messages can be copied into a shell.
type Facts struct {
	Driver             string   `json:"driver,omitempty"` // NVIDIA kernel module version; "" when none is loaded
	GPUs               []string `json:"gpus,omitempty"`   // models, or device nodes when the driver does not list models
	LibCUDA            string   `json:"libcuda,omitempty"`
	ProfilingAdminOnly bool     `json:"profiling_admin_only"` // NVreg_RestrictProfilingToAdminUsers=1
	Superuser          bool     `json:"superuser"`
	// CUDA toolkits and CUPTI wheels found, usable ones first. One without
	// headers or libcupti is kept so doctor can say what it lacks.
	Toolkits []Toolkit `json:"toolkits,omitempty"`
	GCC      string    `json:"gcc,omitempty"`
	// Prebuilt is INFERSCOPE_CUPTI_LIB when it names an existing file.
	Prebuilt string `json:"prebuilt,omitempty"`
	// PrebuiltMissing is INFERSCOPE_CUPTI_LIB when it names nothing.
	PrebuiltMissing string `json:"prebuilt_missing,omitempty"`
	// CachedLib is a collector already built for the best toolkit; the
	// caller, who owns the build cache, sets it.
	CachedLib string  `json:"cached_lib,omitempty"`
	Python    *Python `json:"python,omitempty"` // nil unless AddPython ran
}

// Toolkit is one place CUPTI can be built against: a CUDA toolkit
// directory or a pip wheel's package directory.
type Toolkit struct {
	Dir     string `json:"dir"`
	Kind    string `json:"kind"`              // "toolkit", "wheel" or "system" (/usr)
	Version string `json:"version,omitempty"` // CUDA version, "12.4" or "13.0.85"; "" when unknown
	Include string `json:"include,omitempty"` // directory holding cupti.h
	// cupti.h includes cuda.h and, through the runtime API header,
	// crt/host_defines.h; pip ships those in other wheels than CUPTI's
	// (runtime, and nvcc for CUDA 12 or crt for CUDA 13).
	CUDAInclude string `json:"cuda_include,omitempty"` // directory holding cuda.h
	CRTInclude  string `json:"crt_include,omitempty"`  // directory holding crt/host_defines.h
	Lib         string `json:"lib,omitempty"`          // directory holding libcupti.so*
}

// Usable says whether the collector can be built against tk.
func (tk Toolkit) Usable() bool {
	return tk.Include != "" && tk.CUDAInclude != "" && tk.CRTInclude != "" && tk.Lib != ""
}

// Missing names the files tk lacks for a build.
func (tk Toolkit) Missing() []string {
	var out []string
	for _, m := range []struct{ dir, file string }{{tk.Include, "cupti.h"}, {tk.CUDAInclude, "cuda.h"}, {tk.CRTInclude, "crt/host_defines.h"}, {tk.Lib, "libcupti.so"}} {
		if m.dir == "" {
			out = append(out, m.file)
		}
	}
	return out
}

// GPU says whether an NVIDIA GPU and its driver are visible.
func (f Facts) GPU() bool { return f.Driver != "" || len(f.GPUs) > 0 }

// ProfilingBlocked says whether CUPTI will refuse to trace kernels for us.
func (f Facts) ProfilingBlocked() bool { return f.ProfilingAdminOnly && !f.Superuser }

// Collect probes h without running Python (importing torch takes
// seconds, and `inferscope run` must not pay it); AddPython does that.
// interpreters are the workload's Python, whose site-packages are looked
// at for CUPTI wheels.
func Collect(h Host, interpreters ...string) Facts {
	f := Facts{Superuser: h.Superuser}
	f.Driver = driverVersion(h)
	f.GPUs = gpus(h)
	f.LibCUDA = libCUDA(h)
	f.ProfilingAdminOnly = profilingAdminOnly(h)
	f.Toolkits = toolkits(h)
	f.addWheels(h, staticSitePackages(h, interpreters...))
	f.GCC = h.lookPath("gcc")
	if p := h.env("INFERSCOPE_CUPTI_LIB"); p != "" {
		// The override names a real path even in tests: it is what
		// CUDA_INJECTION64_PATH will be set to.
		if _, err := os.Stat(p); err == nil {
			f.Prebuilt = p
		} else {
			f.PrebuiltMissing = p
		}
	}
	return f
}

// addWheels appends the CUPTI wheels found in the given site-packages
// directories that are not already listed.
func (f *Facts) addWheels(h Host, sitePackages []string) {
	seen := map[string]bool{}
	for _, tk := range f.Toolkits {
		seen[filepath.Clean(tk.Dir)] = true
	}
	for _, tk := range wheels(h, sitePackages) {
		if !seen[tk.Dir] {
			seen[tk.Dir] = true
			f.Toolkits = append(f.Toolkits, tk)
		}
	}
	// Usable ones first, otherwise in the order found.
	slices.SortStableFunc(f.Toolkits, func(a, b Toolkit) int { return boolInt(b.Usable()) - boolInt(a.Usable()) })
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
