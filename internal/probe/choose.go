package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// driverCUDA maps a driver branch to the newest CUDA it runs (Linux, from
// the CUDA release notes' driver table), newest branch first.
var driverCUDA = []struct {
	branch int
	cuda   string
}{
	{590, "13.1"}, {580, "13.0"}, {575, "12.9"}, {570, "12.8"}, {565, "12.7"}, {560, "12.6"}, {555, "12.5"},
	{550, "12.4"}, {545, "12.3"}, {535, "12.2"}, {530, "12.1"}, {525, "12.0"}, {520, "11.8"}, {515, "11.7"},
	{510, "11.6"}, {495, "11.5"}, {470, "11.4"}, {465, "11.3"}, {460, "11.2"}, {455, "11.1"}, {450, "11.0"},
}

// DriverCUDA is the newest CUDA version the driver supports; "" when the
// driver is unknown or newer than this table (then anything goes).
func DriverCUDA(driver string) string {
	b, err := strconv.Atoi(strings.SplitN(driver, ".", 2)[0])
	if err != nil || b > driverCUDA[0].branch {
		return ""
	}
	for _, d := range driverCUDA {
		if b >= d.branch {
			return d.cuda
		}
	}
	return "10.2" // older than any CUPTI we build against
}

// Runs says whether the driver can load tk's CUPTI at all: a CUDA major
// newer than the driver's is refused outright.
func (f Facts) Runs(tk Toolkit) bool {
	top := DriverCUDA(f.Driver)
	return top == "" || tk.Version == "" || major(tk.Version) <= major(top)
}

// Newer says whether tk is a newer minor than the driver's CUDA: CUDA's
// minor-version compatibility covers the runtime, but profiling tools may
// lack features, so such a CUPTI is taken only when nothing else fits.
func (f Facts) Newer(tk Toolkit) bool {
	top := DriverCUDA(f.Driver)
	return top != "" && tk.Version != "" && compareVersions(majorMinor(tk.Version), top) > 0
}

// BestCUPTI is the toolkit to build the collector against: the first
// usable one the driver runs, one within the driver's CUDA version first.
func (f Facts) BestCUPTI() (Toolkit, bool) {
	var fallback *Toolkit
	for i, tk := range f.Toolkits {
		if !tk.Usable() || !f.Runs(tk) {
			continue
		}
		if !f.Newer(tk) {
			return tk, true
		}
		if fallback == nil {
			fallback = &f.Toolkits[i]
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return Toolkit{}, false
}

// Choose picks the collector for `inferscope run --collector auto`: the
// native CUPTI one when it can work here, else torch.profiler, with the
// reason in words a user can act on.
func Choose(f Facts) (collector, reason string) {
	const fallback = "falling back to torch.profiler"
	switch {
	case !f.GPU():
		return "torch", "no NVIDIA GPU: CPU-only, torch.profiler gives CPU op detail"
	case f.LibCUDA == "":
		return "torch", fmt.Sprintf("NVIDIA driver %s is loaded but libcuda.so.1 was not found, so CUDA programs cannot start; %s", f.Driver, fallback)
	case f.ProfilingBlocked():
		return "torch", "GPU profiling is restricted to admin users (NVreg_RestrictProfilingToAdminUsers=1) and this is not root: CUPTI cannot trace kernels; torch.profiler records CPU ops only"
	case f.Prebuilt != "":
		return "cupti", fmt.Sprintf("NVIDIA driver %s, prebuilt library %s (INFERSCOPE_CUPTI_LIB)", f.Driver, f.Prebuilt)
	}
	tk, ok := f.BestCUPTI()
	if !ok {
		return "torch", f.whyNoCUPTI() + "; " + fallback
	}
	if f.CachedLib != "" {
		return "cupti", fmt.Sprintf("NVIDIA driver %s, %s (built collector cached)", f.Driver, Describe(tk))
	}
	if f.GCC == "" {
		return "torch", fmt.Sprintf("gcc not found, so the CUPTI collector cannot be built against %s; %s", Describe(tk), fallback)
	}
	return "cupti", fmt.Sprintf("NVIDIA driver %s, %s", f.Driver, Describe(tk))
}

// whyNoCUPTI names what is missing from the closest candidate.
func (f Facts) whyNoCUPTI() string {
	for _, tk := range f.Toolkits {
		switch {
		case tk.Usable() && !f.Runs(tk):
			return fmt.Sprintf("%s needs a driver for CUDA %d (NVIDIA driver %s supports CUDA %s)", Describe(tk), major(tk.Version), f.Driver, DriverCUDA(f.Driver))
		case tk.Include != "" && !tk.Usable():
			return fmt.Sprintf("CUPTI headers in %s but no %s to go with them", tk.Include, strings.Join(tk.Missing(), ", "))
		}
	}
	if len(f.Toolkits) > 0 {
		return fmt.Sprintf("CUPTI headers not found: the %s at %s has none", f.Toolkits[0].Kind, f.Toolkits[0].Dir)
	}
	return "CUPTI headers not found (CUDA_HOME, /usr/local/cuda*, pip's nvidia-cuda-cupti)"
}

// Describe is "CUPTI 13.0 headers in /usr/local/cuda".
func Describe(tk Toolkit) string {
	v := ""
	if tk.Version != "" {
		v = " " + majorMinor(tk.Version)
	}
	where := tk.Dir
	if tk.Kind == "wheel" {
		where += " (pip wheel)"
	}
	return fmt.Sprintf("CUPTI%s headers in %s", v, where)
}

// majorMinor is "12.4" of "12.4.127".
func majorMinor(v string) string {
	p := strings.SplitN(v, ".", 3)
	return strings.Join(p[:min(2, len(p))], ".")
}
