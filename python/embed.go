// Package python carries the inferscope Python package inside the Go
// binary, so `inferscope run` needs no separate pip install.
package python

import "embed"

// Files holds the package (inferscope/) and the sitecustomize shim that
// starts it in the workload (inferscope_boot/).
//
//go:embed inferscope/*.py inferscope_boot/*.py
var Files embed.FS
