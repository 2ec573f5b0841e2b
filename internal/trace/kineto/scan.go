package kineto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// scanner splits a JSON stream into raw values without decoding them: it
// only tracks strings and nesting, which is several times faster than a
// validating tokenizer. Each value is validated when fastjson parses it.
type scanner struct {
	r       *bufio.Reader
	off     int64
	buf     []byte // the value being cut (points into the caller's buffer)
	scratch []byte // value()'s own buffer
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: bufio.NewReaderSize(r, 1<<20)}
}

var errTruncated = errors.New("truncated")

// skipSpace returns the next non-space byte without consuming it.
func (s *scanner) peek() (byte, error) {
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\n', '\r', '\t':
			s.off++
			continue
		}
		s.r.UnreadByte()
		return b, nil
	}
}

// expect consumes one structural byte.
func (s *scanner) expect(want byte) error {
	b, err := s.peek()
	if err != nil {
		return err
	}
	if b != want {
		return fmt.Errorf("expected %q, found %q", want, b)
	}
	s.r.ReadByte()
	s.off++
	return nil
}

// value returns the raw bytes of the next JSON value. The slice is reused
// by the next call.
func (s *scanner) value() ([]byte, error) {
	v, err := s.appendValue(s.scratch[:0])
	s.scratch = v[:0]
	return v, err
}

// appendValue appends the raw bytes of the next JSON value to dst, so a
// batch of events is cut straight into its buffer without another copy.
func (s *scanner) appendValue(dst []byte) ([]byte, error) {
	b, err := s.peek()
	if err != nil {
		return dst, err
	}
	mark := len(dst)
	s.buf = dst
	switch b {
	case '{', '[':
		return s.composite(mark)
	case '"':
		s.r.ReadByte()
		s.buf = append(s.buf, '"')
		if err := s.str(); err != nil {
			return s.buf, err
		}
		s.off += int64(len(s.buf) - mark)
		return s.buf, nil
	}
	for { // number or literal: up to the next delimiter
		c, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && len(s.buf) > mark {
				break
			}
			return s.buf, err
		}
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			s.r.UnreadByte()
			break
		}
		s.buf = append(s.buf, c)
	}
	s.off += int64(len(s.buf) - mark)
	return s.buf, nil
}

func (s *scanner) composite(mark int) ([]byte, error) {
	depth := 0
	for {
		// Copy whole runs of uninteresting bytes at once.
		chunk, err := s.r.Peek(s.r.Buffered())
		if len(chunk) == 0 {
			if _, err = s.r.Peek(1); err != nil {
				if err == io.EOF {
					return s.buf, errTruncated
				}
				return s.buf, err
			}
			continue
		}
		i := 0
		for ; i < len(chunk); i++ {
			switch chunk[i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.buf = append(s.buf, chunk[:i+1]...)
					s.r.Discard(i + 1)
					s.off += int64(len(s.buf) - mark)
					return s.buf, nil
				}
			case '"':
				s.buf = append(s.buf, chunk[:i+1]...)
				s.r.Discard(i + 1)
				if err := s.str(); err != nil {
					return s.buf, err
				}
				goto next
			}
		}
		s.buf = append(s.buf, chunk...)
		s.r.Discard(len(chunk))
	next:
	}
}

// str copies the rest of a string whose opening quote is already in buf,
// jumping from quote to quote; a quote after an odd run of backslashes is
// escaped (the opening quote bounds the run).
func (s *scanner) str() error {
	for {
		chunk, err := s.r.Peek(max(s.r.Buffered(), 1))
		if len(chunk) == 0 {
			if err == io.EOF {
				return errTruncated
			}
			return err
		}
		q := bytes.IndexByte(chunk, '"')
		if q < 0 {
			s.buf = append(s.buf, chunk...)
			s.r.Discard(len(chunk))
			continue
		}
		s.buf = append(s.buf, chunk[:q]...)
		s.r.Discard(q + 1)
		bs := 0
		for k := len(s.buf) - 1; s.buf[k] == '\\'; k-- {
			bs++
		}
		s.buf = append(s.buf, '"')
		if bs%2 == 0 {
			return nil
		}
	}
}

// key reads an object key (a string) and the colon after it.
func (s *scanner) key() (string, error) {
	b, err := s.peek()
	if err != nil {
		return "", err
	}
	if b != '"' {
		return "", fmt.Errorf("expected an object key, found %q", b)
	}
	raw, err := s.value()
	if err != nil {
		return "", err
	}
	k := string(raw[1 : len(raw)-1])
	return k, s.expect(':')
}
