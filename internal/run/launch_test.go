package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnviron(t *testing.T) {
	base := []string{"HOME=/root", "PYTHONPATH=/user/lib", "INFERSCOPE_COLLECTOR=stale"}
	env := Environ(base, Options{RawDir: "/out/.raw/x", Collector: "torch", AutoSpans: true, TraceSizeMB: 32}, "/cache/py")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{
		"HOME":                     "/root",
		"INFERSCOPE_RAW_DIR":       "/out/.raw/x",
		"INFERSCOPE_COLLECTOR":     "torch",
		"INFERSCOPE_AUTO_SPANS":    "1",
		"INFERSCOPE_TRACE_SIZE_MB": "32",
		"PYTHONPATH":               "/cache/py/inferscope_boot:/cache/py:/user/lib",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: want %q, got %q", k, v, got[k])
		}
	}
}

// The native collector: the same library for the driver (injection) and
// for the Python package (ctypes), replacing what the user had set.
func TestEnvironCUPTI(t *testing.T) {
	base := []string{"CUDA_INJECTION64_PATH=/other/tool.so", "INFERSCOPE_CUPTI_LIB=/stale.so"}
	for _, c := range []struct {
		collector, lib, inject, pylib string
	}{
		{"cupti", "/cache/libinferscope_cupti.so", "/cache/libinferscope_cupti.so", "/cache/libinferscope_cupti.so"},
		{"torch", "", "/other/tool.so", "/stale.so"},
	} {
		got := map[string][]string{}
		for _, kv := range Environ(base, Options{RawDir: "/r", Collector: c.collector, CUPTILib: c.lib}, "/py") {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = append(got[k], v)
		}
		for k, want := range map[string]string{"CUDA_INJECTION64_PATH": c.inject, "INFERSCOPE_CUPTI_LIB": c.pylib} {
			if len(got[k]) != 1 || got[k][0] != want {
				t.Errorf("collector %s: %s: want [%s], got %v", c.collector, k, want, got[k])
			}
		}
	}
}

func TestLaunchCUPTIEnv(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	out := filepath.Join(t.TempDir(), "env")
	cmd := []string{"sh", "-c", `echo "$INFERSCOPE_COLLECTOR $CUDA_INJECTION64_PATH $INFERSCOPE_CUPTI_LIB" > "$0"`, out}
	if _, err := Launch(Options{Command: cmd, RawDir: t.TempDir(), Collector: "cupti"}); err == nil {
		t.Fatal("launch with collector cupti and no library: want an error, got none")
	}
	if o, err := Launch(Options{Command: cmd, RawDir: t.TempDir(), Collector: "cupti", CUPTILib: "/prebuilt/libinferscope_cupti.so"}); err != nil || o.ExitCode != 0 {
		t.Fatalf("launch: %v, %+v", err, o)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "cupti /prebuilt/libinferscope_cupti.so /prebuilt/libinferscope_cupti.so\n"; string(b) != want {
		t.Errorf("workload environment: want %q, got %q", want, b)
	}
}

func TestExtractPython(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, err := extractPython()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"inferscope/__init__.py", "inferscope_boot/sitecustomize.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("extracted package lacks %s: %v", f, err)
		}
	}
	again, err := extractPython()
	if err != nil || again != dir {
		t.Errorf("second extraction: want the cached %s, got %s, %v", dir, again, err)
	}
}

func TestLaunchExitStatus(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cases := []struct {
		cmd    []string
		code   int
		signal string
	}{
		{[]string{"sh", "-c", "exit 0"}, 0, ""},
		{[]string{"sh", "-c", "exit 3"}, 3, ""},
		{[]string{"sh", "-c", "kill -9 $$"}, 137, "SIGKILL"},
	}
	for _, c := range cases {
		o, err := Launch(Options{Command: c.cmd, RawDir: t.TempDir(), Collector: "none"})
		if err != nil {
			t.Fatalf("%v: %v", c.cmd, err)
		}
		if o.ExitCode != c.code || o.Signal != c.signal {
			t.Errorf("%v: want exit %d signal %q, got %d %q", c.cmd, c.code, c.signal, o.ExitCode, o.Signal)
		}
	}
	if _, err := Launch(Options{Command: []string{"/no/such/program"}, RawDir: t.TempDir()}); err == nil {
		t.Error("want an error for a missing program")
	}
}
