package trigger

import (
	"errors"

	"github.com/latent-systems/latent-nats/conn"
)

// framingFailure reports whether err is the broker's bytes refused by a
// connection's parser (conn.ErrFraming: a line, header block or payload
// over its cap, an unknown operation, a malformed frame): a protocol
// failure, classified without knowing the parser.
func framingFailure(err error) bool { return errors.Is(err, conn.ErrFraming) }

// dialFailure says why a dial failed, by conn's typed errors: err is the
// dial's own error (inside the runtime's dialError).
func dialFailure(err error) DialFailure {
	var se *conn.ServerError
	switch {
	case errors.Is(err, conn.ErrRefused):
		return DialRefused
	case errors.Is(err, conn.ErrCertificate), errors.Is(err, conn.ErrPlaintext), errors.Is(err, conn.ErrTLS):
		return DialTLS
	case errors.As(err, &se) && authorizationKind(se.Kind):
		return DialAuthorization
	}
	return DialOther
}

// authorizationKind reports the -ERR kinds by which a broker refuses a
// credential.
func authorizationKind(k conn.ErrKind) bool {
	switch k {
	case conn.KindAuthorization, conn.KindAuthenticationExpired, conn.KindAuthenticationRevoked:
		return true
	}
	return false
}
