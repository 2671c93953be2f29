package parser

import (
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/iotest"
)

// testLimits are the defaults with a 1 MiB payload cap, the server default.
var testLimits = DefaultLimits(1 << 20)

// copied is a Frame detached from the parser buffer, for comparisons.
type copied struct {
	Op          Op
	Subject     string
	SID         string
	Reply       string
	Header      string
	Status      int
	Description string
	Payload     string
	Info        string
	ErrText     string
}

func detach(f Frame) copied {
	return copied{
		Op: f.Op, Subject: string(f.Subject), SID: string(f.SID), Reply: string(f.Reply),
		Header: string(f.Header), Status: f.Status, Description: string(f.Description),
		Payload: string(f.Payload), Info: string(f.Info), ErrText: string(f.ErrText),
	}
}

// readAll parses everything r yields and returns the frames and the error
// that ended them (io.EOF on a clean end).
func readAll(r io.Reader, lim Limits) ([]copied, error) {
	p := New(r, lim)
	var out []copied
	for range 1 << 16 {
		f, err := p.Next()
		if err != nil {
			return out, err
		}
		out = append(out, detach(f))
	}
	return out, errors.New("test: too many frames")
}

// readers are the ways a should-pass or should-fail input is fed: whole, one
// byte at a time, and with the last bytes arriving together with io.EOF.
func readers() []struct {
	name string
	wrap func(string) io.Reader
} {
	return []struct {
		name string
		wrap func(string) io.Reader
	}{
		{"whole", func(s string) io.Reader { return &onceReader{s: s} }},
		{"one byte", func(s string) io.Reader { return iotest.OneByteReader(&onceReader{s: s}) }},
		{"data with EOF", func(s string) io.Reader { return iotest.DataErrReader(&onceReader{s: s}) }},
	}
}

// onceReader is strings.Reader without WriterTo, so the parser sees plain
// reads.
type onceReader struct {
	s string
	i int
}

func (r *onceReader) Read(b []byte) (int, error) {
	if r.i >= len(r.s) {
		return 0, io.EOF
	}
	n := copy(b, r.s[r.i:])
	r.i += n
	return n, nil
}

// msg and hmsg build frames exactly as the server writes them.
func msg(subject, sid, reply, payload string) string {
	s := "MSG " + subject + " " + sid + " "
	if reply != "" {
		s += reply + " "
	}
	return s + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n"
}

func hmsg(subject, sid, reply, header, payload string) string {
	s := "HMSG " + subject + " " + sid + " "
	if reply != "" {
		s += reply + " "
	}
	return s + strconv.Itoa(len(header)) + " " + strconv.Itoa(len(header)+len(payload)) + "\r\n" +
		header + payload + "\r\n"
}

// sentinelOf is how tests compare errors: the sentinel matched with errors.Is.
func sentinelOf(err error) error {
	for _, s := range []error{
		ErrLineTooLong, ErrHeaderTooLarge, ErrPayloadTooLarge, ErrUnknownOp, ErrMalformed,
		ErrInvalidLimits, io.ErrNoProgress, ErrBadReadCount, io.ErrUnexpectedEOF, io.EOF,
	} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

func mustNotFail(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
