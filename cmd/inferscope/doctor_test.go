package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// noNVIDIA says this machine has no NVIDIA driver or device: doctor must
// then pick torch.profiler, for that reason.
func noNVIDIA() bool {
	for _, p := range []string{"/proc/driver/nvidia/version", "/dev/nvidia0"} {
		if _, err := os.Stat(p); err == nil {
			return false
		}
	}
	return true
}

var checkLine = regexp.MustCompile(`^(ok|warn|fail) +[a-z]+ +\S|^ +fix: \S`)

func TestDoctor(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := run([]string{"doctor"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code: want 0, got %d (stderr %q)", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	verdict := lines[len(lines)-1]
	if !regexp.MustCompile(`^collector: (cupti|torch) — \S`).MatchString(verdict) {
		t.Errorf("last line: want \"collector: cupti|torch — why\", got %q", verdict)
	}
	if noNVIDIA() && !strings.HasPrefix(verdict, "collector: torch — no NVIDIA GPU") {
		t.Errorf("no NVIDIA GPU here: want verdict \"collector: torch — no NVIDIA GPU…\", got %q", verdict)
	}
	for _, l := range lines[:len(lines)-1] {
		if !checkLine.MatchString(l) {
			t.Errorf("check line: want \"ok|warn|fail NAME detail\" or \"fix: …\", got %q", l)
		}
	}
	for _, name := range []string{"driver", "gpu", "libcuda", "profiling", "cupti", "gcc", "python"} {
		if !regexp.MustCompile(`(?m)^(ok|warn|fail) +` + name + ` `).MatchString(stdout.String()) {
			t.Errorf("want a %s check, got:\n%s", name, stdout.String())
		}
	}
}

func TestDoctorJSON(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := run([]string{"doctor", "--json", "--python", "/nonexistent/python3"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code: want 0, got %d (stderr %q)", code, stderr.String())
	}
	var rep struct {
		Checks            []struct{ Name, Status, Detail, Fix string }
		Collector, Reason string
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("want JSON, got %v:\n%s", err, stdout.String())
	}
	if rep.Collector != "cupti" && rep.Collector != "torch" || rep.Reason == "" {
		t.Errorf("verdict: want cupti|torch with a reason, got %q, %q", rep.Collector, rep.Reason)
	}
	if noNVIDIA() && rep.Collector != "torch" {
		t.Errorf("no NVIDIA GPU here: want torch, got %s (%s)", rep.Collector, rep.Reason)
	}
	var py string
	for _, c := range rep.Checks {
		if c.Name == "python" {
			py = c.Status + " " + c.Detail + " " + c.Fix
		}
	}
	if !strings.HasPrefix(py, "warn") || !strings.Contains(py, "--python") {
		t.Errorf("missing interpreter: want a python warning pointing at --python, got %q", py)
	}
}

func TestDoctorUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"doctor", "extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("doctor with an argument: want exit 2, got %d (stderr %q)", code, stderr.String())
	}
}
