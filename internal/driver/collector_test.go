package driver

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/probe"
)

var gpuFacts = probe.Facts{
	Driver: "580.65.06", GPUs: []string{"NVIDIA H100 80GB HBM3"}, LibCUDA: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", GCC: "/usr/bin/gcc",
	Toolkits: []probe.Toolkit{{Dir: "/usr/local/cuda", Kind: "toolkit", Version: "13.0.1", Include: "/usr/local/cuda/include",
		CUDAInclude: "/usr/local/cuda/include", CRTInclude: "/usr/local/cuda/include", Lib: "/usr/local/cuda/lib64"}},
}

func TestPickCollector(t *testing.T) {
	ok := cuptiBuild{build: func(probe.Toolkit) (string, error) { return "/cache/lib.so", nil }, cached: func(probe.Toolkit) string { return "" }}
	broken := cuptiBuild{build: func(probe.Toolkit) (string, error) { return "", errors.New("build the CUPTI collector: gcc: error") },
		cached: func(probe.Toolkit) string { return "" }}
	cases := []struct {
		name   string
		flag   string
		facts  probe.Facts
		b      cuptiBuild
		want   string
		lib    string
		err    bool
		stderr []string // lines, in order, each a prefix
	}{
		{"auto, CUDA machine", "auto", gpuFacts, ok, "cupti", "/cache/lib.so", false,
			[]string{"inferscope: collector cupti (NVIDIA driver 580.65.06, CUPTI 13.0 headers in /usr/local/cuda)"}},
		{"auto, build fails", "auto", gpuFacts, broken, "torch", "", false,
			[]string{"inferscope: warning: build the CUPTI collector: gcc: error; falling back to torch.profiler", "inferscope: collector torch (the CUPTI collector did not build)"}},
		{"auto, no GPU", "auto", probe.Facts{GCC: "/usr/bin/gcc"}, ok, "torch", "", false,
			[]string{"inferscope: collector torch (no NVIDIA GPU"}},
		{"explicit cupti, build fails", "cupti", gpuFacts, broken, "", "", true, nil},
		{"explicit cupti", "cupti", gpuFacts, ok, "cupti", "/cache/lib.so", false,
			[]string{"inferscope: collector cupti (--collector cupti, CUPTI 13.0 headers in /usr/local/cuda)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got, lib, err := pickCollector(tc.flag, tc.facts, tc.b, &stderr)
			if got != tc.want || lib != tc.lib || (err != nil) != tc.err {
				t.Errorf("want %q, %q, error %v; got %q, %q, %v", tc.want, tc.lib, tc.err, got, lib, err)
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if tc.stderr == nil {
				lines = nil
				if stderr.Len() > 0 {
					t.Errorf("stderr: want nothing, got %q", stderr.String())
				}
			}
			if len(lines) != len(tc.stderr) {
				t.Fatalf("stderr: want %d lines, got %q", len(tc.stderr), stderr.String())
			}
			for i, want := range tc.stderr {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("stderr line %d: want prefix %q, got %q", i+1, want, lines[i])
				}
			}
		})
	}
}

// resolveCollector probes this machine; whatever it finds, it says so in
// one line and leaves the workload's command line alone.
func TestResolveCollectorKeepsCommand(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cmd := []string{"python3", "-c", "print(1)"}
	orig := slices.Clone(cmd)
	var stderr bytes.Buffer
	got, _, err := resolveCollector("auto", cmd, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cmd, orig) {
		t.Errorf("command: want %q unchanged, got %q", orig, cmd)
	}
	if got != "cupti" && got != "torch" {
		t.Errorf("auto: want cupti or torch, got %q", got)
	}
	if line := stderr.String(); !strings.HasPrefix(line, "inferscope: collector "+got+" (") {
		t.Errorf("stderr: want a line naming collector %s, got %q", got, line)
	}
	for _, name := range []string{"torch", "none"} {
		if got, lib, err := resolveCollector(name, cmd, &stderr); got != name || lib != "" || err != nil {
			t.Errorf("--collector %s: want it as is, got %q, %q, %v", name, got, lib, err)
		}
	}
}
