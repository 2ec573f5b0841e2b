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
