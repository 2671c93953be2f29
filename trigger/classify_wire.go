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
