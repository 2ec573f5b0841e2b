package report

import (
	"encoding/json"
	"io"

	"github.com/inferscope/inferscope/internal/analyze"
)

// JSON writes the machine-readable report (schema: docs/report-schema.md).
func JSON(w io.Writer, r *analyze.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
