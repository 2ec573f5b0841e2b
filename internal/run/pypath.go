package run

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inferscope/inferscope/python"
)

// extractPython writes the embedded Python package into a cache directory
// keyed by its content hash and returns the directory. Extraction goes to a
// temporary directory renamed into place, so concurrent runs never see a
// half-written package.
func extractPython() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(python.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := python.Files.ReadFile(p)
		h.Write([]byte(p))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "inferscope", "py-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "inferscope_boot", "sitecustomize.py")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("create cache dir: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".py-*")
	if err != nil {
		return "", fmt.Errorf("create cache dir: %w", err)
	}
	err = fs.WalkDir(python.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, p)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := python.Files.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("extract python package: %w", err)
	}
	os.Chmod(tmp, 0o755)
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp) // another run won the race; its copy is identical
	}
	return dir, nil
}
