package probe

import (
	"fmt"
	"strings"
)

// Check statuses. fail is kept for what stops the CUPTI collector on a
// machine that has a GPU; the same gap on a CPU-only machine is a warn.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
)

// Check is one line of `inferscope doctor`.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

const fixDriver = "install the NVIDIA driver (e.g. apt-get install nvidia-driver-580), or in a container run with --gpus all (NVIDIA Container Toolkit)"

// Checklist turns the facts into doctor's lines, each problem with its fix.
func Checklist(f Facts) []Check {
	gpu := f.GPU()
	bad := Warn // a gap that matters only on a GPU machine
	if gpu {
		bad = Fail
	}
	var out []Check
	add := func(name, status, detail, fix string) {
		out = append(out, Check{Name: name, Status: status, Detail: detail, Fix: fix})
	}

	if f.Driver != "" {
		add("driver", OK, fmt.Sprintf("NVIDIA driver %s%s", f.Driver, supports(f.Driver)), "")
	} else {
		add("driver", Warn, "no NVIDIA driver loaded (/proc/driver/nvidia/version is missing)", fixDriver+"; not needed for CPU-only work")
	}
	switch {
	case len(f.GPUs) > 0:
		add("gpu", OK, fmt.Sprintf("%d: %s", len(f.GPUs), strings.Join(f.GPUs, ", ")), "")
	case f.Driver != "":
		add("gpu", Warn, "the driver lists no GPU and there is no /dev/nvidia0", "check nvidia-smi; in a container run with --gpus all")
	default:
		add("gpu", Warn, "no NVIDIA GPU found: CPU-only", "")
	}
	switch {
	case f.LibCUDA != "":
		add("libcuda", OK, f.LibCUDA, "")
	case !gpu:
		add("libcuda", Warn, "libcuda.so.1 not found; needed only with a GPU", "")
	default:
		add("libcuda", bad, "libcuda.so.1 not found (library dirs, LD_LIBRARY_PATH, ldconfig -p)",
			"install the driver's user-space libraries (e.g. apt-get install libnvidia-compute-580), or in a container run with --gpus all")
	}
	switch {
	case !gpu:
		add("profiling", OK, "no GPU, nothing to restrict", "")
	case f.ProfilingBlocked():
		add("profiling", Fail, "GPU profiling is restricted to admin users (RmProfilingAdminOnly: 1) and this process is not root",
			"run as root, or set `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/nvidia-profiling.conf and reload the driver (or reboot)")
	case f.ProfilingAdminOnly:
		add("profiling", OK, "restricted to admin users (RmProfilingAdminOnly: 1), and this process is root", "")
	default:
		add("profiling", OK, "open to all users (RmProfilingAdminOnly: 0)", "")
	}
	out = append(out, f.cuptiChecks(bad)...)
	switch {
	case f.GCC != "":
		add("gcc", OK, f.GCC, "")
	case f.Prebuilt != "" || f.CachedLib != "":
		add("gcc", Warn, "gcc not found; not needed while the built collector is there", "apt-get install gcc (dnf install gcc) to rebuild it")
	default:
		add("gcc", bad, "gcc not found: the CUPTI collector is built with it on first use", "apt-get install gcc (dnf install gcc), or use --collector torch")
	}
	if f.Prebuilt != "" {
		add("prebuilt", OK, "INFERSCOPE_CUPTI_LIB="+f.Prebuilt, "")
	} else if f.PrebuiltMissing != "" {
		add("prebuilt", Fail, "INFERSCOPE_CUPTI_LIB="+f.PrebuiltMissing+" does not exist", "unset INFERSCOPE_CUPTI_LIB, or point it at a built libinferscope_cupti.so")
	}
	if f.Python != nil {
		out = append(out, f.pythonChecks()...)
	}
	return out
}

func supports(driver string) string {
	if c := DriverCUDA(driver); c != "" {
		return " (CUDA ≤ " + c + ")"
	}
	return ""
}

// cuptiChecks has one line per toolkit or wheel found, and a fail line
// with the install command when none can be built against.
func (f Facts) cuptiChecks(bad string) []Check {
	var out []Check
	best, ok := f.BestCUPTI()
	for _, tk := range f.Toolkits {
		c := Check{Name: "cupti", Status: OK, Detail: Describe(tk)}
		missing := tk.Missing()
		switch {
		case len(missing) > 0:
			c.Status, c.Detail = Warn, fmt.Sprintf("%s %s %s: no %s", tk.Kind, tk.Dir, versionWord(tk), strings.Join(missing, ", "))
			c.Fix = installCUPTI(f.Driver)
		case !f.Runs(tk):
			c.Status = Warn
			c.Detail += fmt.Sprintf(": CUDA %d is too new for NVIDIA driver %s", major(tk.Version), f.Driver)
			c.Fix = "update the NVIDIA driver, or install a CUPTI for CUDA " + DriverCUDA(f.Driver)
		case f.Newer(tk):
			c.Status = Warn
			c.Detail += fmt.Sprintf(": newer than the driver's CUDA %s (minor-version compatibility)", DriverCUDA(f.Driver))
			c.Fix = "if kernels are missing from the trace, update the driver or use a CUPTI for CUDA " + DriverCUDA(f.Driver)
		case ok && tk.Dir == best.Dir:
			c.Detail += " (libcupti in " + tk.Lib + "): the one used"
		default:
			c.Detail += " (libcupti in " + tk.Lib + ")"
		}
		out = append(out, c)
	}
	switch {
	case ok || f.Prebuilt != "":
	case bad == Fail:
		out = append(out, Check{Name: "cupti", Status: Fail, Detail: f.whyNoCUPTI(),
			Fix: installCUPTI(f.Driver) + "; or use --collector torch"})
	default: // no GPU: nothing to install
		out = append(out, Check{Name: "cupti", Status: Warn, Detail: f.whyNoCUPTI() + "; needed only with a GPU"})
	}
	if ok && f.CachedLib != "" {
		out = append(out, Check{Name: "library", Status: OK, Detail: "built: " + f.CachedLib})
	} else if ok && f.GCC != "" {
		out = append(out, Check{Name: "library", Status: OK, Detail: "not built yet: built on the first run (inferscope doctor --build builds it now)"})
	}
	return out
}

func versionWord(tk Toolkit) string {
	if tk.Version == "" {
		return "(version unknown)"
	}
	return "(CUDA " + tk.Version + ")"
}

// installCUPTI names the packages for the CUDA version the driver runs.
func installCUPTI(driver string) string {
	v := DriverCUDA(driver)
	if v == "" || major(v) >= 13 {
		v = "13.0"
	}
	// cupti.h needs cuda.h (runtime wheel) and crt/host_defines.h (crt
	// wheel for CUDA 13, nvcc's for older ones).
	pip := "pip install nvidia-cuda-cupti nvidia-cuda-runtime nvidia-cuda-crt"
	if m := major(v); m < 13 {
		pip = fmt.Sprintf("pip install nvidia-cuda-cupti-cu%d nvidia-cuda-runtime-cu%d nvidia-cuda-nvcc-cu%d", m, m, m)
	}
	return fmt.Sprintf("install the CUDA toolkit's CUPTI (apt-get install cuda-cupti-dev-%s) or `%s`; set CUDA_HOME if the toolkit is elsewhere",
		strings.ReplaceAll(v, ".", "-"), pip)
}

func (f Facts) pythonChecks() []Check {
	py := f.Python
	if py.Error != "" {
		return []Check{{Name: "python", Status: Warn, Detail: py.Error, Fix: "install python3, or name the workload's interpreter with --python"}}
	}
	out := []Check{{Name: "python", Status: OK, Detail: fmt.Sprintf("%s %s (%s)", py.Interpreter, py.Version, py.Executable)}}
	t := Check{Name: "torch", Status: OK}
	switch {
	case py.Torch == "":
		t.Status, t.Detail = Warn, "torch does not import: "+py.TorchError
		t.Fix = "pip install torch (the torch collector records Python spans only without it)"
	case !f.GPU():
		t.Detail = "torch " + py.Torch + " (CPU-only machine)"
	case py.TorchCUDA == "":
		t.Status, t.Detail = Warn, "torch "+py.Torch+" is a CPU-only build on a GPU machine"
		t.Fix = "install a CUDA build of torch (https://pytorch.org/get-started/locally/)"
	case !py.CUDAAvailable:
		t.Status, t.Detail = Warn, fmt.Sprintf("torch %s (CUDA %s) cannot use the GPU: torch.cuda.is_available() is False", py.Torch, py.TorchCUDA)
		t.Fix = fmt.Sprintf("torch's CUDA %s needs a driver that supports it (this one: CUDA %s); update the driver or pick a torch for an older CUDA", py.TorchCUDA, DriverCUDA(f.Driver))
	default:
		t.Detail = fmt.Sprintf("torch %s, CUDA %s, GPU available", py.Torch, py.TorchCUDA)
	}
	return append(out, t)
}
