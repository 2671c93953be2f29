package jspull

import (
	"fmt"
	"slices"

	"github.com/latent-systems/latent-nats/conn"
)

// Subject prefixes of the JetStream API a binding uses.
const (
	infoSubjectPrefix = "$JS.API.CONSUMER.INFO."
	nextSubjectPrefix = "$JS.API.CONSUMER.MSG.NEXT."
	ackSubjectPrefix  = "$JS.ACK."
	// ackV2Wildcard stands for the domain and account-hash tokens of the v2
	// ack subject form.
	ackV2Wildcard = "*.*."
)

// InfoSubject returns $JS.API.CONSUMER.INFO.<stream>.<consumer>.
func (b Binding) InfoSubject() string { return infoSubjectPrefix + b.Stream + "." + b.Consumer }

// NextSubject returns $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>.
func (b Binding) NextSubject() string { return nextSubjectPrefix + b.Stream + "." + b.Consumer }

// Permissions are the exact allow lists a tenant's broker user needs for its
// bindings: nothing to create, change or delete streams or consumers, no
// other subject.
type Permissions struct {
	// Publish: for each binding the consumer-info subject, the pull subject,
	// and both ack-subject forms ($JS.ACK.<s>.<c>.> classic and
	// $JS.ACK.*.*.<s>.<c>.> v2, the latter matching any domain and account
	// hash). Sorted, without duplicates.
	Publish []string
	// Subscribe: the private inbox prefix followed by ".>".
	Subscribe []string
}

// DerivePermissions returns the permissions for a connection whose private
// inbox is inboxPrefix and which serves bindings. Each binding is validated;
// the inbox prefix must be one a connection accepts
// ([conn.ValidInboxPrefix]: at most [conn.MaxInboxPrefixLen] bytes) and,
// stricter, a literal subject by [ValidFilterSubject]'s rules (no '*' or
// '>' anywhere). A JetStream domain is not needed: the broker checks
// permissions against the $JS.API form after mapping a domain prefix.
func DerivePermissions(inboxPrefix string, bindings ...Binding) (Permissions, error) {
	if conn.ValidInboxPrefix(inboxPrefix) != nil {
		return Permissions{}, &BindingError{Field: "inbox_prefix", Err: fmt.Errorf(
			"%w: not an inbox prefix a connection accepts (a subject of at most %d bytes)", ErrInvalidSubject, conn.MaxInboxPrefixLen)}
	}
	if err := validLiteralSubject(inboxPrefix, conn.MaxInboxPrefixLen); err != nil {
		return Permissions{}, &BindingError{Field: "inbox_prefix", Err: err}
	}
	if len(bindings) == 0 {
		return Permissions{}, &BindingError{Field: "bindings", Err: errOutOfRange}
	}
	pub := make([]string, 0, 4*len(bindings))
	for _, b := range bindings {
		if err := b.Validate(); err != nil {
			return Permissions{}, err
		}
		sc := b.Stream + "." + b.Consumer
		pub = append(pub,
			infoSubjectPrefix+sc,
			nextSubjectPrefix+sc,
			ackSubjectPrefix+sc+".>",
			ackSubjectPrefix+ackV2Wildcard+sc+".>",
		)
	}
	slices.Sort(pub)
	pub = slices.Compact(pub)
	return Permissions{Publish: pub, Subscribe: []string{inboxPrefix + ".>"}}, nil
}
