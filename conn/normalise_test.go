package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/latent-systems/latent-nats/parser"
)

func TestNormalise(t *testing.T) {
	op := func(errno syscall.Errno) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", errno)}
	}
	other := errors.New("conn: test: other")
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"deadline", os.ErrDeadlineExceeded, context.DeadlineExceeded},
		{"deadline in an OpError", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, context.DeadlineExceeded},
		{"end of input", io.EOF, ErrServerClosed},
		{"cut short", io.ErrUnexpectedEOF, ErrServerClosed},
		{"closed", net.ErrClosed, ErrServerClosed},
		{"reset", op(syscall.ECONNRESET), ErrServerClosed},
		{"broken pipe", op(syscall.EPIPE), ErrServerClosed},
		{"aborted", op(syscall.ECONNABORTED), ErrServerClosed},
		{"keepalive timed out", op(syscall.ETIMEDOUT), ErrServerClosed},
		{"host unreachable", op(syscall.EHOSTUNREACH), ErrServerClosed},
		{"network unreachable", op(syscall.ENETUNREACH), ErrServerClosed},
		{"anything else", other, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalise(tt.err); got != tt.want {
				t.Fatalf("normalise(%v) = %v, want %v", tt.err, got, tt.want)
			}
			wrapped := fmt.Errorf("wrapped: %w", tt.err)
			if got := normalise(wrapped); tt.want != other && got != tt.want {
				t.Fatalf("normalise(%v) = %v, want %v", wrapped, got, tt.want)
			}
		})
	}
}

// TestNormaliseFraming: a parser error on the server's bytes becomes an
// error matching ErrFraming that keeps the parser's sentinel, its
// *parser.Error and its text; normalising it again changes nothing. A
// parser error over a cut frame or a failing reader is not framing.
func TestNormaliseFraming(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		framing bool
	}{
		{"line too long", &parser.Error{Op: parser.OpMsg, Err: parser.ErrLineTooLong}, true},
		{"header too large", &parser.Error{Op: parser.OpHMsg, Err: parser.ErrHeaderTooLarge}, true},
		{"payload too large", &parser.Error{Op: parser.OpMsg, Err: parser.ErrPayloadTooLarge}, true},
		{"unknown op", &parser.Error{Err: parser.ErrUnknownOp}, true},
		{"malformed", &parser.Error{Op: parser.OpInfo, Reason: "r", Err: parser.ErrMalformed}, true},
		{"cut short", &parser.Error{Op: parser.OpMsg, Err: io.ErrUnexpectedEOF}, false},
		{"reader made no progress", &parser.Error{Err: io.ErrNoProgress}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := normalise(tt.err)
			if errors.Is(got, ErrFraming) != tt.framing {
				t.Fatalf("errors.Is(normalise(%v), ErrFraming) = %v, want %v", tt.err, !tt.framing, tt.framing)
			}
		})
	}
	pe := &parser.Error{Op: parser.OpMsg, Offset: 7, Reason: "r", Err: parser.ErrMalformed}
	got := normalise(pe)
	var as *parser.Error
	if got.Error() != pe.Error() || !errors.Is(got, parser.ErrMalformed) || !errors.As(got, &as) || as != pe || normalise(got) != got {
		t.Errorf("normalise(%v) = %v: text, sentinel or idempotence lost", pe, got)
	}
}
