package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Bad input gets one line on stderr naming the problem, exit code 2, and
// never a panic or stack trace.
func TestBadInput(t *testing.T) {
	real, err := os.ReadFile("../../testdata/gpu/planted_pageable_h2d.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"missing file", func(t *testing.T) []string { return []string{"analyze", "/nonexistent/trace.json"} }, "no such file"},
		{"empty", func(t *testing.T) []string { return []string{"analyze", writeFile(t, "e.json", nil)} }, "empty"},
		{"not json", func(t *testing.T) []string { return []string{"analyze", writeFile(t, "n.json", []byte("hello world"))} }, "not a JSON trace"},
		{"wrong schema", func(t *testing.T) []string {
			return []string{"analyze", writeFile(t, "w.json", []byte(`{"foo": [1, 2]}`))}
		}, `no "traceEvents"`},
		{"truncated", func(t *testing.T) []string {
			return []string{"analyze", writeFile(t, "t.json", []byte(`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}, {"ph": "X", "na`))}
		}, "truncated"},
		{"truncated gzip", func(t *testing.T) []string { return []string{"analyze", writeFile(t, "t.json.gz", real[:len(real)/2])} }, "truncated"},
		{"no events", func(t *testing.T) []string {
			return []string{"analyze", writeFile(t, "z.json", []byte(`{"traceEvents": []}`))}
		}, "no events"},
		{"only metadata", func(t *testing.T) []string {
			return []string{"analyze", writeFile(t, "m.json", []byte(`{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]}`))}
		}, "timed interval"},
		{"no such scope", func(t *testing.T) []string {
			return []string{"analyze", "../../testdata/gpu/planted_pageable_h2d.json.gz", "--scope", "nope"}
		}, `no scope "nope"`},
		{"bad format", func(t *testing.T) []string {
			return []string{"analyze", "../../testdata/gpu/planted_pageable_h2d.json.gz", "--format", "pdf"}
		}, "unknown --format"},
		{"no args", func(t *testing.T) []string { return []string{"analyze"} }, "one trace file"},
		{"bad flag", func(t *testing.T) []string { return []string{"analyze", "--nope"} }, "unknown flag"},
		{"execution trace", func(t *testing.T) []string {
			return []string{"analyze", writeFile(t, "et.json", gz([]byte(`{"schema": "1.0.1", "pid": 1, "nodes": []}`)))}
		}, "execution trace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args(t), &stdout, &stderr)
			msg := stderr.String()
			if code != 2 {
				t.Errorf("exit code: want 2, got %d (stderr %q)", code, msg)
			}
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "inferscope: ") {
				t.Errorf("want one line starting 'inferscope: ', got %q", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("stderr: want it to mention %q, got %q", tc.want, msg)
			}
			if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
				t.Errorf("stack trace leaked: %q", msg)
			}
		})
	}
}

func TestAnalyzeWritesReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.md")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"analyze", "../../testdata/gpu/planted_gpu_bound.json.gz", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"End-to-end latency", "Classification: gpu-bound", "## Suggestions"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
