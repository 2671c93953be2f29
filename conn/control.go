package conn

import (
	"bytes"

	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
)

// control counts and answers the control frames of one exchange.
type control struct {
	pings, frames int
}

// handle answers a PING or records an INFO's lame-duck flag, failing once
// the exchange has seen too many.
func (ctl *control) handle(c *Conn, f parser.Frame) error {
	ctl.frames++
	if ctl.frames > MaxControlFramesPerExchange {
		return ErrControlFlood
	}
	switch f.Op {
	case parser.OpPing:
		ctl.pings++
		if ctl.pings > MaxPingsPerExchange {
			return ErrControlFlood
		}
		var pong [6]byte
		_, err := c.tls.Write(wire.AppendPong(pong[:0]))
		return err
	case parser.OpInfo:
		ld, err := asyncInfo(f.Info)
		c.lameDuck = c.lameDuck || ld
		return err
	default:
		return ErrUnexpectedFrame
	}
}

// classify maps -ERR text onto an ErrKind. The text is matched, never kept.
func classify(text []byte) ErrKind {
	t := bytes.TrimSpace(text)
	has := func(prefix string) bool {
		return len(t) >= len(prefix) && bytes.EqualFold(t[:len(prefix)], []byte(prefix))
	}
	switch {
	case has("permissions violation"):
		return KindPermission
	case has("authorization violation"):
		return KindAuthorization
	case has("user authentication expired"), has("account authentication expired"):
		return KindAuthenticationExpired
	case has("user authentication revoked"):
		return KindAuthenticationRevoked
	case has("authentication timeout"):
		return KindAuthenticationTimeout
	case has("maximum payload violation"):
		return KindMaxPayload
	case has("maximum connections exceeded"), has("maximum account active connections exceeded"):
		return KindMaxConnections
	case has("maximum subscriptions exceeded"):
		return KindMaxSubscriptions
	case has("stale connection"):
		return KindStaleConnection
	case has("unknown protocol operation"), has("maximum control line exceeded"),
		has("invalid client protocol"), has("no responders requires headers support"),
		has("invalid subject"), has("invalid publish subject"):
		return KindProtocol
	default:
		return KindOther
	}
}
