package trace

import (
	"bufio"
	"fmt"
	gzip "github.com/klauspost/pgzip"
	"io"
	"os"
)

// Open opens a trace file for streaming, transparently gunzipping it when
// it starts with the gzip magic, whatever its name says.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s looks gzipped but is not readable: %w", path, err)
		}
		return &readCloser{Reader: bufio.NewReaderSize(zr, 1<<20), closers: []io.Closer{zr, f}}, nil
	}
	return &readCloser{Reader: br, closers: []io.Closer{f}}, nil
}

type readCloser struct {
	io.Reader
	closers []io.Closer
}

func (r *readCloser) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
