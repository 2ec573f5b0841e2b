package run

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/inferscope/inferscope/native"
)

// CUDAHome is the toolkit the collector is built against.
func CUDAHome() string {
	if h := os.Getenv("CUDA_HOME"); h != "" {
		return h
	}
	return "/usr/local/cuda"
}

// CUPTILibrary returns the native collector, building it on first use with
// gcc against the CUPTI headers of CUDAHome(), cached per source and
// toolkit version. INFERSCOPE_CUPTI_LIB overrides it.
func CUPTILibrary() (string, error) {
	if p := os.Getenv("INFERSCOPE_CUPTI_LIB"); p != "" {
		return p, nil
	}
	cuda := CUDAHome()
	h := sha256.New()
	for _, f := range []string{"inferscope_cupti.c", "build.sh"} {
		b, err := native.CUPTI.ReadFile("cupti/" + f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	for _, f := range []string{"version.json", "version.txt", "include/cupti_version.h"} {
		if b, err := os.ReadFile(filepath.Join(cuda, f)); err == nil {
			h.Write(b)
		}
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "inferscope", "cupti-"+hex.EncodeToString(h.Sum(nil))[:16])
	lib := filepath.Join(dir, "libinferscope_cupti.so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	if _, err := os.Stat(filepath.Join(cuda, "include", "cupti.h")); err != nil {
		if _, err2 := os.Stat(filepath.Join(cuda, "extras", "CUPTI", "include", "cupti.h")); err2 != nil {
			return "", fmt.Errorf("the native collector needs the CUPTI headers: none under %s (set CUDA_HOME, or use --collector torch)", cuda)
		}
	}
	src, err := os.MkdirTemp("", "inferscope-cupti-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	for _, f := range []string{"inferscope_cupti.c", "build.sh"} {
		b, _ := native.CUPTI.ReadFile("cupti/" + f)
		if err := os.WriteFile(filepath.Join(src, f), b, 0o755); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := lib + fmt.Sprintf(".%d.tmp", os.Getpid())
	cmd := exec.Command("sh", filepath.Join(src, "build.sh"), tmp)
	cmd.Env = append(os.Environ(), "CUDA="+cuda)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the CUPTI collector: %v: %s", err, lastLine(out))
	}
	if err := os.Rename(tmp, lib); err != nil {
		return "", err
	}
	return lib, nil
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
