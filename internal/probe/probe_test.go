package probe

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// host builds a fake machine under t.TempDir(): files maps host paths to
// contents (a trailing "/" makes a directory), env is the environment and
// tools the programs on PATH.
func host(t *testing.T, files, env map[string]string, tools ...string) Host {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Host{
		Root:   root,
		Getenv: func(k string) string { return env[k] },
		LookPath: func(name string) (string, error) {
			for _, tool := range tools {
				if tool == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", exec.ErrNotFound
		},
	}
}

// merge combines file sets; later ones win.
func merge(sets ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, s := range sets {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

func without(files map[string]string, paths ...string) map[string]string {
	out := merge(files)
	for _, p := range paths {
		delete(out, p)
	}
	return out
}

func gpuHost(driver string) map[string]string {
	return map[string]string{
		"/proc/driver/nvidia/version":                           "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + driver + "  Release Build  (dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\nGCC version:  gcc version 13.3.0\n",
		"/proc/driver/nvidia/gpus/0000:01:00.0/information":     "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 42\nGPU UUID: \t GPU-1\n",
		"/proc/driver/nvidia/params":                            "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 0\n",
		"/usr/lib/x86_64-linux-gnu/libcuda.so.1":                "",
		"/dev/nvidia0":                                          "",
		"/dev/nvidiactl":                                        "",
		"/proc/driver/nvidia/gpus/0000:01:00.0/registry":        "",
		"/proc/driver/nvidia/gpus/0000:02:00.0/information":     "Model: \t\t NVIDIA H100 80GB HBM3\n",
		"/proc/driver/nvidia/capabilities/mig/config":           "",
		"/proc/driver/nvidia/gpus/0000:02:00.0/power":           "",
		"/proc/driver/nvidia/gpus/0000:02:00.0/information.bak": "Model: stale\n",
	}
}

func toolkit(dir, version string) map[string]string {
	return map[string]string{
		dir + "/version.json":                             `{"cuda": {"name": "CUDA SDK", "version": "` + version + `"}}`,
		dir + "/include/cuda.h":                           "",
		dir + "/include/cupti.h":                          "",
		dir + "/include/crt/host_defines.h":               "",
		dir + "/include/cupti_version.h":                  "",
		dir + "/lib64/libcupti.so":                        "",
		dir + "/lib64/libcupti.so." + version[:2]:         "",
		dir + "/lib64/libcupti.so.2025.3.0":               "",
		dir + "/bin/nvcc":                                 "",
		dir + "/extras/CUPTI/samples/activity_trace/x.cu": "",
	}
}

func wheel13(sp string) map[string]string {
	return map[string]string{
		sp + "/nvidia/cu13/include/cupti.h":            "",
		sp + "/nvidia/cu13/include/cuda.h":             "",
		sp + "/nvidia/cu13/include/crt/host_defines.h": "",
		sp + "/nvidia/cu13/lib/libcupti.so.13":         "",
		sp + "/nvidia_cuda_cupti-13.0.85.dist-info/":   "",
		sp + "/nvidia_cuda_runtime-13.0.96.dist-info/": "",
	}
}

func wheel12(sp string) map[string]string {
	return map[string]string{
		sp + "/nvidia/cuda_cupti/include/cupti.h":            "",
		sp + "/nvidia/cuda_cupti/lib/libcupti.so.12":         "",
		sp + "/nvidia/cuda_runtime/include/cuda.h":           "",
		sp + "/nvidia/cuda_nvcc/include/crt/host_defines.h":  "",
		sp + "/nvidia_cuda_cupti_cu12-12.4.127.dist-info/":   "",
		sp + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info/": "",
	}
}

func TestChoose(t *testing.T) {
	venv := "/venv/lib/python3.12/site-packages"
	cases := []struct {
		name      string
		files     map[string]string
		env       map[string]string
		tools     []string
		superuser bool
		cached    bool // a built collector is in the cache
		want      string
		reason    []string          // substrings of Choose's reason
		checks    map[string]string // check name → status (the last line of that name)
		fix       map[string]string // check name → substring of its fix
	}{
		{name: "no GPU", tools: []string{"gcc"},
			want: "torch", reason: []string{"no NVIDIA GPU", "CPU op detail"},
			checks: map[string]string{"driver": Warn, "gpu": Warn, "libcuda": Warn, "cupti": Warn, "gcc": OK}},
		{name: "GPU and toolkit", files: merge(gpuHost("580.65.06"), toolkit("/usr/local/cuda", "13.0.1")), tools: []string{"gcc"},
			want: "cupti", reason: []string{"NVIDIA driver 580.65.06", "CUPTI 13.0 headers in /usr/local/cuda"},
			checks: map[string]string{"driver": OK, "gpu": OK, "libcuda": OK, "profiling": OK, "cupti": OK, "gcc": OK, "library": OK}},
		{name: "GPU without headers", files: merge(gpuHost("580.65.06"), map[string]string{
			"/usr/local/cuda/version.json": `{"cuda": {"version": "13.0.1"}}`, "/usr/local/cuda/include/cuda.h": "", "/usr/local/cuda/bin/nvcc": ""}),
			tools: []string{"gcc"},
			want:  "torch", reason: []string{"CUPTI headers not found: the toolkit at /usr/local/cuda has none", "falling back to torch.profiler"},
			checks: map[string]string{"cupti": Fail},
			fix:    map[string]string{"cupti": "apt-get install cuda-cupti-dev-13-0"}},
		{name: "GPU, nothing CUDA installed", files: gpuHost("570.86.15"), tools: []string{"gcc"},
			want: "torch", reason: []string{"CUPTI headers not found"},
			checks: map[string]string{"cupti": Fail},
			fix:    map[string]string{"cupti": "pip install nvidia-cuda-cupti-cu12 nvidia-cuda-runtime-cu12"}},
		{name: "GPU with CUDA 13 wheel only", files: merge(gpuHost("580.65.06"), wheel13(venv)),
			env: map[string]string{"VIRTUAL_ENV": "/venv"}, tools: []string{"gcc"},
			want: "cupti", reason: []string{"CUPTI 13.0 headers in " + venv + "/nvidia/cu13 (pip wheel)"}},
		{name: "GPU with CUDA 12 wheel in pyenv", files: merge(gpuHost("550.54.14"), wheel12("/home/u/.pyenv/versions/3.11.7/lib/python3.11/site-packages")),
			env: map[string]string{"HOME": "/home/u"}, tools: []string{"gcc"},
			want: "cupti", reason: []string{"NVIDIA driver 550.54.14", "CUPTI 12.4 headers in /home/u/.pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia/cuda_cupti (pip wheel)"}},
		{name: "CUDA 12 wheels without nvcc's crt headers", files: merge(gpuHost("550.54.14"), without(wheel12(venv), venv+"/nvidia/cuda_nvcc/include/crt/host_defines.h")),
			env: map[string]string{"VIRTUAL_ENV": "/venv"}, tools: []string{"gcc"},
			want: "torch", reason: []string{"no crt/host_defines.h"},
			checks: map[string]string{"cupti": Fail},
			fix:    map[string]string{"cupti": "pip install nvidia-cuda-cupti-cu12 nvidia-cuda-runtime-cu12 nvidia-cuda-nvcc-cu12"}},
		{name: "CUDA 13 wheel without the crt wheel", files: merge(gpuHost("580.65.06"), without(wheel13(venv), venv+"/nvidia/cu13/include/crt/host_defines.h")),
			env: map[string]string{"VIRTUAL_ENV": "/venv"}, tools: []string{"gcc"},
			want: "torch", reason: []string{"no crt/host_defines.h"},
			fix: map[string]string{"cupti": "nvidia-cuda-crt"}},
		{name: "profiling restricted, not root", files: merge(gpuHost("580.65.06"), toolkit("/usr/local/cuda", "13.0.1"),
			map[string]string{"/proc/driver/nvidia/params": "RmProfilingAdminOnly: 1\n"}), tools: []string{"gcc"},
			want: "torch", reason: []string{"restricted to admin users", "not root"},
			checks: map[string]string{"profiling": Fail},
			fix:    map[string]string{"profiling": "options nvidia NVreg_RestrictProfilingToAdminUsers=0"}},
		{name: "profiling restricted, root", files: merge(gpuHost("580.65.06"), toolkit("/usr/local/cuda", "13.0.1"),
			map[string]string{"/proc/driver/nvidia/params": "RmProfilingAdminOnly: 1\n"}), tools: []string{"gcc"}, superuser: true,
			want: "cupti", checks: map[string]string{"profiling": OK}},
		{name: "no gcc", files: merge(gpuHost("580.65.06"), toolkit("/usr/local/cuda", "13.0.1")),
			want: "torch", reason: []string{"gcc not found"},
			checks: map[string]string{"gcc": Fail}, fix: map[string]string{"gcc": "apt-get install gcc"}},
		{name: "no gcc, collector cached", files: merge(gpuHost("580.65.06"), toolkit("/usr/local/cuda", "13.0.1")), cached: true,
			want: "cupti", reason: []string{"cached"}, checks: map[string]string{"gcc": Warn}},
		{name: "no libcuda", files: without(merge(gpuHost("580.65.06"), toolkit("/usr/local/cuda", "13.0.1")), "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
			tools: []string{"gcc"}, want: "torch", reason: []string{"libcuda.so.1 was not found"},
			checks: map[string]string{"libcuda": Fail}},
		{name: "toolkit too new for the driver", files: merge(gpuHost("570.86.15"), toolkit("/usr/local/cuda", "13.0.1")), tools: []string{"gcc"},
			want: "torch", reason: []string{"needs a driver for CUDA 13", "supports CUDA 12.8"},
			checks: map[string]string{"cupti": Fail}},
		{name: "the toolkit the driver runs is preferred", files: merge(gpuHost("570.86.15"), toolkit("/usr/local/cuda-13.0", "13.0.1"), toolkit("/usr/local/cuda-12.8", "12.8.1")),
			tools: []string{"gcc"}, want: "cupti", reason: []string{"CUPTI 12.8 headers in /usr/local/cuda-12.8"}},
		{name: "CUDA_HOME first", files: merge(gpuHost("580.65.06"), toolkit("/opt/cuda-a", "12.6.3"), toolkit("/usr/local/cuda", "13.0.1")),
			env: map[string]string{"CUDA_HOME": "/opt/cuda-a"}, tools: []string{"gcc"},
			want: "cupti", reason: []string{"CUPTI 12.6 headers in /opt/cuda-a"}},
		{name: "headers without libcupti", files: merge(gpuHost("580.65.06"), map[string]string{
			"/usr/local/cuda/include/cupti.h": "", "/usr/local/cuda/include/cuda.h": "#define CUDA_VERSION 13000\n", "/usr/local/cuda/include/crt/host_defines.h": ""}),
			tools: []string{"gcc"},
			want:  "torch", reason: []string{"no libcupti.so"}},
		{name: "old toolkit layout (extras/CUPTI, version.txt)", files: merge(gpuHost("535.54.03"), map[string]string{
			"/usr/local/cuda/version.txt": "CUDA Version 11.8.89\n", "/usr/local/cuda/include/cuda.h": "", "/usr/local/cuda/include/crt/host_defines.h": "",
			"/usr/local/cuda/extras/CUPTI/include/cupti.h": "", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.11.8": ""}),
			tools: []string{"gcc"}, want: "cupti", reason: []string{"CUPTI 11.8 headers in /usr/local/cuda"}},
		{name: "device nodes only", files: merge(toolkit("/usr/local/cuda", "13.0.1"), map[string]string{
			"/dev/nvidia0": "", "/usr/lib64/libcuda.so.1": ""}), tools: []string{"gcc"},
			want: "cupti", checks: map[string]string{"gpu": OK, "driver": Warn}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := host(t, tc.files, tc.env, tc.tools...)
			h.Superuser = tc.superuser
			f := Collect(h)
			if tc.cached {
				f.CachedLib = "/cache/libinferscope_cupti.so"
			}
			got, why := Choose(f)
			if got != tc.want {
				t.Errorf("collector: want %s, got %s (%s); facts %+v", tc.want, got, why, f)
			}
			for _, s := range tc.reason {
				if !strings.Contains(why, s) {
					t.Errorf("reason: want it to contain %q, got %q", s, why)
				}
			}
			checks := map[string]Check{}
			for _, c := range Checklist(f) {
				checks[c.Name] = c
				if c.Status != OK && c.Status != Warn && c.Status != Fail {
					t.Errorf("check %s: status %q", c.Name, c.Status)
				}
				if c.Status == Fail && c.Fix == "" {
					t.Errorf("check %s fails with no fix: %q", c.Name, c.Detail)
				}
			}
			for name, want := range tc.checks {
				if c, ok := checks[name]; !ok || c.Status != want {
					t.Errorf("check %s: want %s, got %+v", name, want, c)
				}
			}
			for name, want := range tc.fix {
				if c := checks[name]; !strings.Contains(c.Fix, want) {
					t.Errorf("check %s fix: want it to contain %q, got %q", name, want, c.Fix)
				}
			}
		})
	}
}

func TestFacts(t *testing.T) {
	h := host(t, merge(gpuHost("580.65.06"), toolkit("/usr/local/cuda-13.0", "13.0.1"), toolkit("/usr/local/cuda-12.4", "12.4.1")), nil, "gcc")
	f := Collect(h)
	check := func(what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s: want %v, got %v", what, want, got)
		}
	}
	check("driver", f.Driver, "580.65.06")
	check("GPUs", strings.Join(f.GPUs, "|"), "NVIDIA H100 80GB HBM3|NVIDIA H100 80GB HBM3")
	check("libcuda", f.LibCUDA, "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
	check("admin only", f.ProfilingAdminOnly, false)
	check("gcc", f.GCC, "/usr/bin/gcc")
	if len(f.Toolkits) != 2 {
		t.Fatalf("toolkits: want 2, got %+v", f.Toolkits)
	}
	tk := f.Toolkits[0] // newest versioned directory first
	check("toolkit dir", tk.Dir, "/usr/local/cuda-13.0")
	check("toolkit version", tk.Version, "13.0.1")
	check("include", tk.Include, "/usr/local/cuda-13.0/include")
	check("lib", tk.Lib, "/usr/local/cuda-13.0/lib64")
	check("second toolkit", f.Toolkits[1].Version, "12.4.1")
}

func TestLibCUDAFromLdconfig(t *testing.T) {
	h := host(t, nil, nil)
	h.Output = func(ctx context.Context, name string, args ...string) ([]byte, error) {
		if name != "ldconfig" || len(args) != 1 || args[0] != "-p" {
			return nil, exec.ErrNotFound
		}
		return []byte("1234 libs found in cache `/etc/ld.so.cache'\n\tlibcudart.so.12 (libc6,x86-64) => /opt/x/libcudart.so.12\n\tlibcuda.so.1 (libc6,x86-64) => /opt/nvidia/lib/libcuda.so.1\n"), nil
	}
	if got, want := libCUDA(h), "/opt/nvidia/lib/libcuda.so.1"; got != want {
		t.Errorf("libcuda from ldconfig -p: want %s, got %q", want, got)
	}
}

func TestVersions(t *testing.T) {
	cases := []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"/c/version.json": `{"cuda": {"version": "12.4.1"}}`}, "12.4.1"},
		{map[string]string{"/c/version.txt": "CUDA Version 11.8.89\n"}, "11.8.89"},
		{map[string]string{"/c/include/cuda.h": "/* x */\n#define CUDA_VERSION 12080\n"}, "12.8"},
		{map[string]string{"/c/version.json": "not json", "/c/include/cuda.h": "#define CUDA_VERSION 13000\n"}, "13.0"},
		{map[string]string{"/c/README": ""}, ""},
	}
	for _, tc := range cases {
		h := host(t, tc.files, nil)
		if got := toolkitVersion(h, "/c", "/c/include"); got != tc.want {
			t.Errorf("version of %v: want %q, got %q", tc.files, tc.want, got)
		}
	}
	for driver, want := range map[string]string{"580.65.06": "13.0", "570.86.15": "12.8", "535.54.03": "12.2", "525.60.13": "12.0", "999.1": "", "unknown": "", "": ""} {
		if got := DriverCUDA(driver); got != want {
			t.Errorf("DriverCUDA(%q): want %q, got %q", driver, want, got)
		}
	}
}

// The python probe finds wheels on the interpreter's sys.path that no
// static guess covers, and keeps sys.path when importing torch times out.
func TestAddPython(t *testing.T) {
	sp := "/srv/app/deps"
	cases := []struct {
		name      string
		out       string
		err       error
		torch     string
		torchErr  string
		wantWheel bool
	}{
		{name: "torch with CUDA",
			out:   `{"executable": "/srv/app/bin/python3", "version": "3.12.3", "path": ["", "/srv/app/deps"]}` + "\n" + `{"torch": "2.8.0+cu129", "torch_cuda": "12.9", "cuda_available": true}` + "\n",
			torch: "2.8.0+cu129", wantWheel: true},
		{name: "import torch times out",
			out: `{"executable": "/srv/app/bin/python3", "version": "3.12.3", "path": ["/srv/app/deps"]}` + "\n", err: context.DeadlineExceeded,
			torchErr: "took longer", wantWheel: true},
		{name: "torch missing",
			out:      "some banner\n" + `{"executable": "/usr/bin/python3", "version": "3.12.3", "path": []}` + "\n" + `{"torch_error": "ModuleNotFoundError: No module named 'torch'"}` + "\n",
			torchErr: "No module named"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := host(t, merge(gpuHost("580.65.06"), wheel13(sp)), nil, "gcc")
			h.Output = func(ctx context.Context, name string, args ...string) ([]byte, error) {
				if name != "python3" {
					return nil, exec.ErrNotFound
				}
				return []byte(tc.out), tc.err
			}
			f := Collect(h)
			if len(f.Toolkits) != 0 {
				t.Fatalf("before the python probe: want no toolkit, got %+v", f.Toolkits)
			}
			f.AddPython(h, "python3", time.Second)
			if got := len(f.Toolkits) == 1; got != tc.wantWheel {
				t.Errorf("wheel found: want %v, got %+v", tc.wantWheel, f.Toolkits)
			}
			if tc.wantWheel && f.Toolkits[0].Dir != sp+"/nvidia/cu13" {
				t.Errorf("wheel dir: want %s/nvidia/cu13, got %s", sp, f.Toolkits[0].Dir)
			}
			if f.Python.Torch != tc.torch || !strings.Contains(f.Python.TorchError, tc.torchErr) {
				t.Errorf("torch: want %q / error containing %q, got %+v", tc.torch, tc.torchErr, f.Python)
			}
		})
	}
	h := host(t, nil, nil)
	h.Output = func(context.Context, string, ...string) ([]byte, error) {
		return nil, errors.New("exec: \"python3\": not found")
	}
	var f Facts
	f.AddPython(h, "python3", time.Second)
	if !strings.Contains(f.Python.Error, "did not run") {
		t.Errorf("missing python: want an error saying it did not run, got %+v", f.Python)
	}
}

func TestPrebuilt(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libinferscope_cupti.so")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := host(t, gpuHost("580.65.06"), map[string]string{"INFERSCOPE_CUPTI_LIB": lib})
	if got, why := Choose(Collect(h)); got != "cupti" || !strings.Contains(why, lib) {
		t.Errorf("prebuilt library, no toolkit, no gcc: want cupti naming %s, got %s (%s)", lib, got, why)
	}
	h = host(t, gpuHost("580.65.06"), map[string]string{"INFERSCOPE_CUPTI_LIB": lib + ".missing"})
	f := Collect(h)
	if got, _ := Choose(f); got != "torch" {
		t.Errorf("INFERSCOPE_CUPTI_LIB naming nothing: want torch, got %s", got)
	}
	found := false
	for _, c := range Checklist(f) {
		found = found || c.Name == "prebuilt" && c.Status == Fail
	}
	if !found {
		t.Errorf("INFERSCOPE_CUPTI_LIB naming nothing: want a failed prebuilt check, got %+v", Checklist(f))
	}
}
