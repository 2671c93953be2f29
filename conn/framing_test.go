package conn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/parser"
)

// TestFramingError: every refusal of the server's bytes by the parser, in
// a request, an idle check or the handshake, matches conn.ErrFraming
// beside the parser's own sentinel and *parser.Error, so that callers
// classify it without importing the parser; a frame cut short by the end
// of the connection and a well-formed frame that does not belong are not
// framing failures.
func TestFramingError(t *testing.T) {
	oversizeLine := "MSG " + fakeInbox + ".1 1 " + strings.Repeat("r", parser.MaxLine) + " 0\r\n"
	requestFails := func(send ...fakeserver.Step) func(*testing.T) error {
		return func(t *testing.T) error {
			f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON), expectPub("1", "q"), send)})
			cfg := f.config(t)
			cfg.MaxPayload = requestMaxPayload
			c, err := f.dial(t, cfg)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			_, err = request(t, c, "q")
			return err
		}
	}
	checkFails := func(idle ...fakeserver.Step) func(*testing.T) error {
		return func(t *testing.T) error {
			f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON), idle)})
			c, err := f.dial(t, f.config(t))
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			f.waitReadable(t)
			ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
			defer cancel()
			return c.Check(ctx)
		}
	}
	dialFails := func(after ...fakeserver.Step) func(*testing.T) error {
		return func(t *testing.T) error {
			f := startFake(t, fakeserver.Config{Script: script(steps(fakeserver.Handshake()), after)})
			_, err := f.dial(t, f.config(t))
			return err
		}
	}
	tests := []struct {
		name    string
		run     func(*testing.T) error
		wantErr error
		framing bool
	}{
		{name: "request: malformed frame", run: requestFails(fakeserver.SendString("MSG "+fakeInbox+".1\r\n"), fakeserver.WaitClose()),
			wantErr: parser.ErrMalformed, framing: true},
		{name: "request: unknown op", run: requestFails(fakeserver.SendString("HELLO\r\n"), fakeserver.WaitClose()),
			wantErr: parser.ErrUnknownOp, framing: true},
		{name: "request: payload past the cap", run: requestFails(fakeserver.SendString("MSG "+fakeInbox+".1 1 "+itoa(requestMaxPayload+1)+"\r\n"), fakeserver.Stall()),
			wantErr: parser.ErrPayloadTooLarge, framing: true},
		{name: "request: header block past the cap", run: requestFails(fakeserver.SendString("HMSG "+fakeInbox+".1 1 "+itoa(parser.MaxHeaderBlock+1)+" "+itoa(parser.MaxHeaderBlock+1)+"\r\n"), fakeserver.Stall()),
			wantErr: parser.ErrHeaderTooLarge, framing: true},
		{name: "request: control line past the cap", run: requestFails(fakeserver.SendString(oversizeLine), fakeserver.WaitClose()),
			wantErr: parser.ErrLineTooLong, framing: true},
		{name: "request: frame cut short by hangup", run: requestFails(fakeserver.SendString("MSG "+fakeInbox+".1 1 10\r\nabc"), fakeserver.Hangup()),
			wantErr: conn.ErrServerClosed},
		{name: "request: well-formed foreign frame", run: requestFails(msgTo("7", "hi"), fakeserver.WaitClose()),
			wantErr: conn.ErrForeignFrame},
		{name: "check: unknown op", run: checkFails(fakeserver.SendString("PONG!\r\n"), fakeserver.WaitClose()),
			wantErr: parser.ErrUnknownOp, framing: true},
		{name: "dial: unknown op instead of INFO", run: dialFails(fakeserver.SendString("HELLO world\r\n"), fakeserver.WaitClose()),
			wantErr: parser.ErrUnknownOp, framing: true},
		{name: "dial: INFO without its arguments", run: dialFails(fakeserver.SendString("INFO\r\n"), fakeserver.WaitClose()),
			wantErr: parser.ErrMalformed, framing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(t)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if got := errors.Is(err, conn.ErrFraming); got != tt.framing {
				t.Errorf("errors.Is(%v, ErrFraming) = %v, want %v", err, got, tt.framing)
			}
			var pe *parser.Error
			if got := errors.As(err, &pe); got != tt.framing {
				t.Errorf("errors.As(%v, *parser.Error) = %v, want %v", err, got, tt.framing)
			}
			if !errors.Is(err, conn.ErrClosed) && !errors.As(err, new(*conn.HandshakeError)) {
				t.Errorf("error %v is neither a closed connection nor a failed handshake", err)
			}
		})
	}
}
