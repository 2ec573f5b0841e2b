package run

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferscope/inferscope/internal/probe"
	"github.com/inferscope/inferscope/native"
)

var cuptiSources = []string{"inferscope_cupti.c", "build.sh"}

// CUPTICachePath is where the collector built against tk lives (it may
// not exist yet). The key covers the source, the toolkit's paths (the
// library's rpath points into them) and its CUPTI version header.
func CUPTICachePath(tk probe.Toolkit) (string, error) {
	h := sha256.New()
	for _, f := range cuptiSources {
		b, err := native.CUPTI.ReadFile("cupti/" + f)
		if err != nil {
			return "", fmt.Errorf("embedded collector source: %w", err)
		}
		h.Write(b)
	}
	fmt.Fprintf(h, "\x00%s\x00%s\x00%s\x00%s\x00%s\x00", tk.Dir, tk.Include, tk.CUDAInclude, tk.CRTInclude, tk.Lib)
	for _, f := range []string{filepath.Join(tk.Dir, "version.json"), filepath.Join(tk.Dir, "version.txt"), filepath.Join(tk.Include, "cupti_version.h")} {
		if b, err := os.ReadFile(f); err == nil {
			h.Write(b)
		}
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "inferscope", "cupti-"+hex.EncodeToString(h.Sum(nil))[:16], "libinferscope_cupti.so"), nil
}

// CachedCUPTILibrary is the collector already built for tk, or "".
func CachedCUPTILibrary(tk probe.Toolkit) string {
	lib, err := CUPTICachePath(tk)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(lib); err != nil {
		return ""
	}
	return lib
}

// CUPTILibrary returns the native collector, building it with gcc against
// tk on first use and caching it. INFERSCOPE_CUPTI_LIB overrides it.
func CUPTILibrary(tk probe.Toolkit) (string, error) {
	if p := os.Getenv("INFERSCOPE_CUPTI_LIB"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("INFERSCOPE_CUPTI_LIB: %w", err)
		}
		return p, nil
	}
	if !tk.Usable() {
		return "", errors.New("the native collector needs the CUPTI headers, cuda.h and libcupti: none found (CUDA_HOME, /usr/local/cuda*, pip's nvidia-cuda-cupti); `inferscope doctor` says what to install, or use --collector torch")
	}
	lib, err := CUPTICachePath(tk)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	src, err := os.MkdirTemp("", "inferscope-cupti-")
	if err != nil {
		return "", fmt.Errorf("build the CUPTI collector: %w", err)
	}
	defer os.RemoveAll(src)
	for _, f := range cuptiSources {
		b, _ := native.CUPTI.ReadFile("cupti/" + f) // read once already by CUPTICachePath
		if err := os.WriteFile(filepath.Join(src, f), b, 0o755); err != nil {
			return "", fmt.Errorf("build the CUPTI collector: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		return "", fmt.Errorf("build the CUPTI collector: %w", err)
	}
	// Built under a private name, renamed into place: two runs building at
	// once never load a half-written library.
	tmp := lib + fmt.Sprintf(".%d.tmp", os.Getpid())
	cmd := exec.Command("sh", filepath.Join(src, "build.sh"), tmp)
	var extra []string // besides cupti.h's dir, in build.sh's space-separated form
	for _, d := range []string{tk.CUDAInclude, tk.CRTInclude} {
		if d != tk.Include && !slices.Contains(extra, d) {
			extra = append(extra, d)
		}
	}
	cmd.Env = append(os.Environ(), "CUDA="+tk.Dir, "CUPTI_INC="+tk.Include, "CUDA_INC="+strings.Join(extra, " "), "CUPTI_LIB="+tk.Lib)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build the CUPTI collector against %s: %v: %s", tk.Dir, err, buildError(out))
	}
	if err := os.Rename(tmp, lib); err != nil {
		return "", fmt.Errorf("build the CUPTI collector: %w", err)
	}
	return lib, nil
}

// buildError is the line of the build's output that says what went
// wrong: gcc's first error, else the last line (build.sh's own message).
func buildError(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	for line := range strings.Lines(s) {
		if strings.Contains(line, "error:") {
			return strings.TrimSpace(line)
		}
	}
	return s[strings.LastIndexByte(s, '\n')+1:]
}
