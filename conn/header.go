package conn

import "github.com/latent-systems/latent-nats/parser"

// HeaderValueFold returns the value of the first field of a header block
// (Msg.Header) whose name equals key under ASCII case folding, aliasing
// block, and the number of fields with that name: parser.HeaderValueFold,
// for the layers above conn, which read no wire grammar of their own. It
// does not allocate.
func HeaderValueFold(block []byte, key string) (value []byte, n int) {
	return parser.HeaderValueFold(block, key)
}
