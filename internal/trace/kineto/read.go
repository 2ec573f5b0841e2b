// Package kineto imports traces written by torch.profiler / Kineto (and any
// Chrome-trace JSON that follows its conventions, including InferScope's own
// trace files). The file is streamed: one event's raw JSON at a time is
// decoded, so memory holds the event model, never the whole text.
package kineto

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inferscope/inferscope/internal/trace"
)

// ReadFile imports a Kineto trace from a path (plain or gzipped).
func ReadFile(path string) (*trace.Trace, error) {
	rc, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	t, err := Read(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.Meta.Path = path
	return t, nil
}

// Read imports a Kineto trace from a stream.
func Read(r io.Reader) (*trace.Trace, error) {
	im := newImporter()
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty: expected a PyTorch profiler (Kineto) JSON trace")
		}
		return nil, notJSON(err)
	}
	switch tok.Kind() {
	case '[':
		im.t.Meta.Format = "list"
		if err := im.readEvents(dec); err != nil {
			return nil, err
		}
	case '{':
		im.t.Meta.Format = "object"
		if err := im.readObject(dec); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("not a trace: the top-level JSON value must be an object with \"traceEvents\" or a list of events")
	}
	return im.finish()
}

func notJSON(err error) error {
	return fmt.Errorf("not a JSON trace (%v): expected the output of torch.profiler's export_chrome_trace", err)
}

func truncated(dec *jsontext.Decoder, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("the trace is truncated at byte %d: the writer was probably killed before it finished; re-export it, or run the workload under `inferscope run`, which keeps traces readable", dec.InputOffset())
	}
	return fmt.Errorf("malformed JSON at byte %d: %v", dec.InputOffset(), err)
}

func (im *importer) readObject(dec *jsontext.Decoder) error {
	sawEvents := false
	var keys []string
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return truncated(dec, err)
		}
		if tok.Kind() == '}' {
			break
		}
		key := tok.String()
		keys = append(keys, key)
		switch key {
		case "traceEvents":
			if dec.PeekKind() != '[' {
				return errors.New(`"traceEvents" is not a list`)
			}
			if _, err := dec.ReadToken(); err != nil {
				return truncated(dec, err)
			}
			if err := im.readEvents(dec); err != nil {
				return err
			}
			sawEvents = true
		case "deviceProperties", "schemaVersion", "cuda_driver_version", "cuda_runtime_version", "cupti_version", "inferscope":
			v, err := dec.ReadValue()
			if err != nil {
				return truncated(dec, err)
			}
			if err := im.header(key, v); err != nil {
				return err
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return truncated(dec, err)
			}
		}
	}
	if !sawEvents {
		if hasAll(keys, "nodes", "schema") {
			return errors.New("this is a PyTorch execution trace (ExecutionTraceObserver), not a profiler timeline: record with torch.profiler.profile(...) and export_chrome_trace(), then analyze that file")
		}
		return fmt.Errorf("no \"traceEvents\" list (top-level keys: %s): expected a PyTorch profiler (Kineto) trace", strings.Join(firstN(keys, 6), ", "))
	}
	return nil
}

func hasAll(keys []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, k := range keys {
			found = found || k == w
		}
		if !found {
			return false
		}
	}
	return true
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

func (im *importer) readEvents(dec *jsontext.Decoder) error {
	for {
		if dec.PeekKind() == ']' {
			_, err := dec.ReadToken()
			return err
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return truncated(dec, err)
		}
		if err := im.event(raw); err != nil {
			return err
		}
	}
}

func (im *importer) header(key string, raw jsontext.Value) error {
	m := &im.t.Meta
	var err error
	switch key {
	case "schemaVersion":
		err = json.Unmarshal(raw, &m.SchemaVersion)
	case "cuda_driver_version":
		err = json.Unmarshal(raw, &m.CUDADriver)
	case "cuda_runtime_version":
		err = json.Unmarshal(raw, &m.CUDARuntime)
	case "cupti_version":
		err = json.Unmarshal(raw, &m.CUPTI)
	case "deviceProperties":
		var ds []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
			Mem  int64  `json:"totalGlobalMem"`
			CM   int    `json:"computeMajor"`
			Cm   int    `json:"computeMinor"`
			SMs  int    `json:"numSms"`
		}
		if json.Unmarshal(raw, &ds) == nil { // odd device blocks are not worth failing a trace over
			for _, d := range ds {
				m.Devices = append(m.Devices, trace.Device{ID: d.ID, Name: d.Name, ComputeMajor: d.CM, ComputeMinor: d.Cm, NumSMs: d.SMs, MemoryBytes: d.Mem})
			}
		}
	case "inferscope":
		var own trace.Meta
		if err := json.Unmarshal(raw, &own); err != nil {
			return fmt.Errorf("bad \"inferscope\" metadata block: %w", err)
		}
		im.own = &own
	}
	if err != nil {
		return fmt.Errorf("bad %q: %w", key, err)
	}
	return nil
}
