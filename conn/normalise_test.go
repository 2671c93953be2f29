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
