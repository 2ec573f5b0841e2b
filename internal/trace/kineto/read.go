// Package kineto imports traces written by torch.profiler / Kineto (and any
// Chrome-trace JSON that follows its conventions, including InferScope's own
// trace files). The file is streamed: a scanner cuts the text into raw
// events and worker goroutines decode batches of them, so memory holds the
// event model, never the whole text.
package kineto

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

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
	s := newScanner(r)
	b, err := s.peek()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty: expected a PyTorch profiler (Kineto) JSON trace")
		}
		return nil, err
	}
	switch b {
	case '[':
		im.t.Meta.Format = "list"
		err = im.readEvents(s)
	case '{':
		im.t.Meta.Format = "object"
		err = im.readObject(s)
	default:
		return nil, fmt.Errorf("not a JSON trace (starts with %q): expected the output of torch.profiler's export_chrome_trace", b)
	}
	if err != nil {
		im.stop()
		return nil, err
	}
	return im.finish()
}

func scanError(s *scanner, err error) error {
	if errors.Is(err, errTruncated) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the trace is truncated at byte %d: the writer was probably killed before it finished; re-export it, or run the workload under `inferscope run`, which keeps traces readable", s.off)
	}
	return fmt.Errorf("malformed JSON near byte %d: %v", s.off, err)
}

func (im *importer) readObject(s *scanner) error {
	if err := s.expect('{'); err != nil {
		return scanError(s, err)
	}
	sawEvents := false
	var keys []string
	for {
		b, err := s.peek()
		if err != nil {
			return scanError(s, err)
		}
		if b == '}' {
			s.expect('}')
			break
		}
		if b == ',' {
			s.expect(',')
			continue
		}
		key, err := s.key()
		if err != nil {
			return scanError(s, err)
		}
		keys = append(keys, key)
		switch key {
		case "traceEvents":
			if b, err := s.peek(); err != nil || b != '[' {
				if err != nil {
					return scanError(s, err)
				}
				return errors.New(`"traceEvents" is not a list`)
			}
			if err := im.readEvents(s); err != nil {
				return err
			}
			sawEvents = true
		default:
			v, err := s.value()
			if err != nil {
				return scanError(s, err)
			}
			if err := im.header(key, v); err != nil {
				return err
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

// batchBytes is how much raw event text one worker decodes at a time.
const batchBytes = 1 << 20

type batch struct {
	data []byte
	ends []int32
}

func (im *importer) readEvents(s *scanner) error {
	if err := s.expect('['); err != nil {
		return scanError(s, err)
	}
	im.start()
	cur := im.newBatch()
	flush := func() {
		if len(cur.ends) > 0 {
			im.batches <- cur
			cur = im.newBatch()
		}
	}
	for {
		b, err := s.peek()
		if err != nil {
			return scanError(s, err)
		}
		switch b {
		case ']':
			s.expect(']')
			flush()
			return nil
		case ',':
			s.expect(',')
			continue
		}
		data, err := s.appendValue(cur.data)
		if err != nil {
			return scanError(s, err)
		}
		im.events++
		cur.data = data
		cur.ends = append(cur.ends, int32(len(cur.data)))
		if len(cur.data) >= batchBytes {
			flush()
		}
	}
}

func (im *importer) newBatch() *batch {
	select {
	case b := <-im.free:
		b.data, b.ends = b.data[:0], b.ends[:0]
		return b
	default:
		return &batch{data: make([]byte, 0, batchBytes+64<<10)}
	}
}

// start launches the decoding workers (once: a list-form trace and an
// object with one traceEvents both call it once).
func (im *importer) start() {
	if im.batches != nil {
		return
	}
	n := min(max(runtime.GOMAXPROCS(0), 1), 8)
	im.batches = make(chan *batch, 2*n)
	im.free = make(chan *batch, 3*n)
	im.workers = make([]*worker, n)
	for i := range im.workers {
		w := newWorker(im)
		im.workers[i] = w
		im.wg.Add(1)
		go func() {
			defer im.wg.Done()
			for b := range im.batches {
				start := 0
				for _, end := range b.ends {
					w.event(b.data[start:end])
					start = int(end)
				}
				select { // recycle: a GB-sized trace would otherwise churn a GB of buffers
				case im.free <- b:
				default:
				}
			}
		}()
	}
}

func (im *importer) stop() {
	if im.batches != nil {
		close(im.batches)
		im.wg.Wait()
		im.batches = nil
	}
}

func (im *importer) header(key string, raw []byte) error {
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
