package jspull

import "github.com/latent-systems/latent-nats/acksubject"

// Scratch is the working memory of the operations that only the binding
// being visited uses: the buffer an acknowledgement command is written
// into (maxCommandLen bytes), the buffer holding the ack subject of the
// latest delivery (acksubject.MaxLen bytes) with the generation that
// counts pulls. Consumers that are never used at the same time,
// such as the bindings one loop visits in turn, share one Scratch through
// Options.Scratch instead of holding about 800 bytes each.
//
// A Delivery is valid until the next Next of any Consumer sharing its
// Scratch (see Delivery): that Next rewrites the ack-subject buffer, and
// Ack refuses the earlier Delivery with ErrInvalidDelivery. Inspect and Ack
// leave it valid.
//
// A Scratch is not safe for concurrent use: the Consumers sharing one must
// not be called concurrently with each other. The zero value is ready to
// use; a Scratch must not be copied after first use.
type Scratch struct {
	cmd [maxCommandLen]byte
	ack ackBuffer // the ack subject of the latest delivery
}

// ackBuffer is where the Consumers sharing a Scratch store the ack subject
// of their latest delivery. gen counts the calls of Next of every one of
// them, so that a Delivery can tell whether its subject is still the one
// stored.
type ackBuffer struct {
	gen uint64
	buf [acksubject.MaxLen]byte
}
