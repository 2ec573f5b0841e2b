package probe

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Where a toolkit keeps cupti.h, cuda.h and libcupti: CUDA ≥ 12 has
// CUPTI in include/ and lib64/, older toolkits in extras/CUPTI/, and
// distribution packages (libcupti-dev) under /usr.
var (
	cuptiIncludeDirs = []string{"include", "extras/CUPTI/include", "targets/x86_64-linux/include", "targets/sbsa-linux/include"}
	cuptiLibDirs     = []string{"lib64", "extras/CUPTI/lib64", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"}
)

// toolkits lists CUDA installations in the order a user would expect them
// to be preferred: CUDA_HOME, then the /usr/local/cuda link, then the
// versioned directories, newest first.
func toolkits(h Host) []Toolkit {
	var dirs []string
	for _, k := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := h.env(k); d != "" {
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, "/usr/local/cuda")
	versioned := h.glob("/usr/local/cuda-*")
	slices.SortFunc(versioned, func(a, b string) int { return -compareVersions(versionOf(a), versionOf(b)) })
	dirs = append(dirs, versioned...)
	dirs = append(dirs, "/opt/cuda")
	if nvcc := h.lookPath("nvcc"); nvcc != "" {
		dirs = append(dirs, filepath.Dir(filepath.Dir(nvcc)))
	}
	var out []Toolkit
	seen := map[string]bool{}
	for _, d := range dirs {
		d = filepath.Clean(d)
		real, err := filepath.EvalSymlinks(h.path(d))
		if err != nil || seen[real] || !h.isDir(d) {
			continue
		}
		seen[real] = true
		out = append(out, toolkitAt(h, d))
	}
	// libcupti-dev and similar packages install into the system dirs.
	if h.exists("/usr/include/cupti.h") {
		tk := Toolkit{Dir: "/usr", Kind: "system", Include: "/usr/include",
			CUDAInclude: firstWith(h, []string{"/usr/include"}, "cuda.h"), CRTInclude: firstWith(h, []string{"/usr/include"}, "crt/host_defines.h")}
		tk.Lib = firstWith(h, []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"}, "libcupti.so*")
		tk.Version = cudaHVersion(h, tk.CUDAInclude)
		out = append(out, tk)
	}
	return out
}

func toolkitAt(h Host, dir string) Toolkit {
	tk := Toolkit{Dir: dir, Kind: "toolkit"}
	tk.Include = firstWith(h, joinAll(dir, cuptiIncludeDirs), "cupti.h")
	tk.CUDAInclude = firstWith(h, joinAll(dir, cuptiIncludeDirs), "cuda.h")
	tk.CRTInclude = firstWith(h, joinAll(dir, cuptiIncludeDirs), "crt/host_defines.h")
	tk.Lib = firstWith(h, joinAll(dir, cuptiLibDirs), "libcupti.so*")
	tk.Version = toolkitVersion(h, dir, tk.CUDAInclude)
	return tk
}

// wheels finds the CUPTI that pip installs: nvidia-cuda-cupti-cu12 as
// nvidia/cuda_cupti/{include,lib}, CUDA 13's nvidia-cuda-cupti into the
// shared nvidia/cu13/{include,lib}. cuda.h comes from the runtime wheel
// and crt/host_defines.h from nvcc's (12) or crt's (13): the same cu13
// directory, or nvidia/cuda_runtime and nvidia/cuda_nvcc.
func wheels(h Host, sitePackages []string) []Toolkit {
	var out []Toolkit
	seen := map[string]bool{}
	for _, sp := range sitePackages {
		var pkgs []string
		for _, p := range h.glob(filepath.Join(sp, "nvidia/*/include/cupti.h")) {
			pkgs = append(pkgs, filepath.Dir(filepath.Dir(p)))
		}
		for _, p := range h.glob(filepath.Join(sp, "nvidia/*/lib/libcupti.so*")) {
			pkgs = append(pkgs, filepath.Dir(filepath.Dir(p)))
		}
		for _, pkg := range pkgs {
			if seen[pkg] {
				continue
			}
			seen[pkg] = true
			tk := Toolkit{Dir: pkg, Kind: "wheel"}
			tk.Include = firstWith(h, []string{filepath.Join(pkg, "include")}, "cupti.h")
			tk.Lib = firstWith(h, []string{filepath.Join(pkg, "lib")}, "libcupti.so*")
			tk.CUDAInclude = firstWith(h, append([]string{filepath.Join(pkg, "include"), filepath.Join(sp, "nvidia/cuda_runtime/include")},
				dirsOf(h.glob(filepath.Join(sp, "nvidia/*/include/cuda.h")))...), "cuda.h")
			tk.CRTInclude = firstWith(h, append([]string{filepath.Join(pkg, "include"), filepath.Join(sp, "nvidia/cuda_nvcc/include")},
				dirsOf(dirsOf(h.glob(filepath.Join(sp, "nvidia/*/include/crt/host_defines.h"))))...), "crt/host_defines.h")
			tk.Version = wheelVersion(h, sp, tk.Lib)
			out = append(out, tk)
		}
	}
	return out
}

// staticSitePackages guesses where pip put packages without running
// Python: the given interpreters' prefixes, python3 on PATH, the active
// venv or conda env, pyenv versions, the user site and the system dirs.
// Any CUPTI wheel will do for building: the library links it by path.
func staticSitePackages(h Host, interpreters ...string) []string {
	var prefixes []string
	for _, py := range append(slices.Clone(interpreters), "python3") { // never append into the caller's slice
		if p := h.lookPath(py); p != "" {
			prefixes = append(prefixes, filepath.Dir(filepath.Dir(p)))
		}
	}
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if d := h.env(k); d != "" {
			prefixes = append(prefixes, d)
		}
	}
	if home := h.env("HOME"); home != "" {
		prefixes = append(prefixes, filepath.Join(home, ".local"))
		pyenv := h.env("PYENV_ROOT")
		if pyenv == "" {
			pyenv = filepath.Join(home, ".pyenv")
		}
		prefixes = append(prefixes, h.glob(filepath.Join(pyenv, "versions/*"))...)
	}
	prefixes = append(prefixes, "/usr/local", "/usr", "/opt/conda")
	var out []string
	for _, p := range prefixes {
		out = append(out, h.glob(filepath.Join(p, "lib/python3*/site-packages"))...)
		out = append(out, h.glob(filepath.Join(p, "lib/python3*/dist-packages"))...)
	}
	out = append(out, "/usr/lib/python3/dist-packages")
	return dedupe(out)
}

// toolkitVersion reads version.json (CUDA ≥ 11.1), version.txt (older),
// else cuda.h's CUDA_VERSION.
func toolkitVersion(h Host, dir, cudaInclude string) string {
	if s, ok := h.readFile(filepath.Join(dir, "version.json")); ok {
		var v struct {
			CUDA struct{ Version string } `json:"cuda"`
		}
		if json.Unmarshal([]byte(s), &v) == nil && v.CUDA.Version != "" {
			return v.CUDA.Version
		}
	}
	if s, ok := h.readFile(filepath.Join(dir, "version.txt")); ok {
		if f := strings.Fields(s); len(f) > 0 && versionToken.MatchString(f[len(f)-1]) {
			return f[len(f)-1]
		}
	}
	return cudaHVersion(h, cudaInclude)
}

// cudaHVersion turns "#define CUDA_VERSION 12040" into "12.4".
func cudaHVersion(h Host, includeDir string) string {
	if includeDir == "" {
		return ""
	}
	s, _ := h.readFile(filepath.Join(includeDir, "cuda.h"))
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "#define" && f[1] == "CUDA_VERSION" {
			if n, err := strconv.Atoi(f[2]); err == nil {
				return fmt.Sprintf("%d.%d", n/1000, n%1000/10)
			}
		}
	}
	return ""
}

// wheelVersion takes the version from the dist-info directory pip wrote
// (nvidia_cuda_cupti_cu12-12.4.127.dist-info, nvidia_cuda_cupti-13.0.85…)
// whose major matches the library's soname, else the soname's major.
func wheelVersion(h Host, sitePackages, lib string) string {
	major := ""
	if lib != "" {
		for _, p := range h.glob(filepath.Join(lib, "libcupti.so.*")) {
			major, _, _ = strings.Cut(strings.TrimPrefix(filepath.Base(p), "libcupti.so."), ".")
			break
		}
	}
	for _, p := range h.glob(filepath.Join(sitePackages, "nvidia_cuda_cupti*-*.dist-info")) {
		name := strings.TrimSuffix(filepath.Base(p), ".dist-info")
		v := name[strings.LastIndexByte(name, '-')+1:]
		if major == "" || strings.HasPrefix(v, major+".") {
			return v
		}
	}
	return major
}

// firstWith returns the first dir holding a file matching pattern.
func firstWith(h Host, dirs []string, pattern string) string {
	for _, d := range dirs {
		if len(h.glob(filepath.Join(d, pattern))) > 0 {
			return d
		}
	}
	return ""
}

func joinAll(dir string, rel []string) []string {
	out := make([]string, len(rel))
	for i, r := range rel {
		out[i] = filepath.Join(dir, r)
	}
	return out
}

func dirsOf(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Dir(p)
	}
	return out
}

func dedupe(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// versionOf is the version in a /usr/local/cuda-12.4 style name.
func versionOf(dir string) string {
	_, v, _ := strings.Cut(filepath.Base(dir), "-")
	return v
}

// compareVersions orders dotted versions numerically; "" sorts first.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// major is the leading number of a version, 0 when unknown.
func major(v string) int {
	m, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(m)
	return n
}
