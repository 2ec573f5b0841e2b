// Package native carries the native collector's source inside the Go
// binary, so `inferscope run --collector cupti` can build it on first use
// against whatever CUDA toolkit the machine has.
package native

import "embed"

// CUPTI is the C library and its build script, under cupti/.
//
//go:embed cupti/inferscope_cupti.c cupti/build.sh
var CUPTI embed.FS
