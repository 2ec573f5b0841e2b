package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/probe"
)

// fakeToolkit has the files the probe looks for, but empty: enough for
// build.sh to reach gcc, which must then fail.
func fakeToolkit(t *testing.T) probe.Toolkit {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"include/cupti.h", "include/cuda.h", "include/crt/host_defines.h", "lib/libcupti.so.13"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#error not a real CUPTI\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inc := filepath.Join(dir, "include")
	return probe.Toolkit{Dir: dir, Kind: "wheel", Include: inc, CUDAInclude: inc, CRTInclude: inc, Lib: filepath.Join(dir, "lib")}
}

func TestCUPTILibraryErrors(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("INFERSCOPE_CUPTI_LIB", "")
	if _, err := CUPTILibrary(probe.Toolkit{}); err == nil || !strings.Contains(err.Error(), "inferscope doctor") {
		t.Errorf("no toolkit: want an error pointing at inferscope doctor, got %v", err)
	}

	tk := fakeToolkit(t)
	_, err := CUPTILibrary(tk)
	if err == nil || !strings.Contains(err.Error(), "build the CUPTI collector against "+tk.Dir) {
		t.Errorf("broken headers: want a build error naming %s, got %v", tk.Dir, err)
	}
	if lib := CachedCUPTILibrary(tk); lib != "" {
		t.Errorf("after a failed build: want nothing cached, got %s", lib)
	}
	lib, _ := CUPTICachePath(tk)
	if left, _ := filepath.Glob(lib + "*"); len(left) != 0 {
		t.Errorf("after a failed build: want no partial files, got %v", left)
	}

	t.Setenv("INFERSCOPE_CUPTI_LIB", filepath.Join(t.TempDir(), "missing.so"))
	if _, err := CUPTILibrary(tk); err == nil || !strings.Contains(err.Error(), "INFERSCOPE_CUPTI_LIB") {
		t.Errorf("INFERSCOPE_CUPTI_LIB naming nothing: want an error naming it, got %v", err)
	}
	prebuilt := filepath.Join(t.TempDir(), "lib.so")
	os.WriteFile(prebuilt, nil, 0o644)
	t.Setenv("INFERSCOPE_CUPTI_LIB", prebuilt)
	if got, err := CUPTILibrary(tk); got != prebuilt || err != nil {
		t.Errorf("INFERSCOPE_CUPTI_LIB: want %s, got %s, %v", prebuilt, got, err)
	}
}

// One cache entry per toolkit: the library's rpath points into it.
func TestCUPTICachePath(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a, b := fakeToolkit(t), fakeToolkit(t)
	pa, err := CUPTICachePath(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := CUPTICachePath(b)
	again, _ := CUPTICachePath(a)
	if pa == pb || pa != again {
		t.Errorf("cache paths: want one per toolkit and stable, got %s, %s, %s", pa, pb, again)
	}
}
