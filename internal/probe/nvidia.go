package probe

import (
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

var versionToken = regexp.MustCompile(`^\d+\.\d+(\.\d+)?$`)

// driverVersion reads the kernel module's version line, e.g.
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 …"
// (or "… Open Kernel Module for x86_64  570.86.15  Release Build …").
func driverVersion(h Host) string {
	s, ok := h.readFile("/proc/driver/nvidia/version")
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(s, "\n")
	for _, tok := range strings.Fields(line) {
		if versionToken.MatchString(tok) {
			return tok
		}
	}
	return "unknown"
}

// gpus lists the models the driver reports; containers sometimes show the
// device nodes without /proc/driver/nvidia/gpus, so those count too.
func gpus(h Host) []string {
	var out []string
	for _, p := range h.glob("/proc/driver/nvidia/gpus/*/information") {
		s, _ := h.readFile(p)
		for line := range strings.Lines(s) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Model" {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	return h.glob("/dev/nvidia[0-9]*")
}

// profilingAdminOnly reads NVreg_RestrictProfilingToAdminUsers as the
// loaded driver has it (the modprobe.d file may have changed since).
func profilingAdminOnly(h Host) bool {
	s, ok := h.readFile("/proc/driver/nvidia/params")
	if !ok {
		return false
	}
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "RmProfilingAdminOnly" {
			return strings.TrimSpace(v) == "1"
		}
	}
	return false
}

// libCUDADirs are where distributions, the NVIDIA container toolkit and
// WSL put the driver's user-space library.
var libCUDADirs = []string{
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/lib/x86_64-linux-gnu", "/lib64", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib",
}

func libCUDA(h Host) string {
	dirs := append([]string(nil), libCUDADirs...)
	for _, d := range filepath.SplitList(h.env("LD_LIBRARY_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "libcuda.so.1"); h.exists(p) {
			return p
		}
	}
	// ldconfig knows the directories of /etc/ld.so.conf.d too; it lives in
	// /sbin, which a user's PATH may lack.
	out, err := h.output(2*time.Second, "ldconfig", "-p")
	if err != nil {
		if out, err = h.output(2*time.Second, "/sbin/ldconfig", "-p"); err != nil {
			return ""
		}
	}
	for line := range strings.Lines(string(out)) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || name != "libcuda.so.1" {
			continue
		}
		if _, p, ok := strings.Cut(rest, "=> "); ok {
			return strings.TrimSpace(p)
		}
	}
	return ""
}
