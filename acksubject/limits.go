package acksubject

// Fixed tokens of the grammar.
const (
	// ackPrefix starts every acknowledgement subject: tokens 0 and 1 with the
	// separator that follows them.
	ackPrefix = "$JS.ACK."

	// noDomain is the domain token of a v2 subject when the broker has no
	// JetStream domain, the only domain this package accepts.
	noDomain = "_"
)

// Limits of the grammar. Lengths count bytes of the subject; a subject
// carries no CR, LF or other framing, so nothing else is counted.
const (
	// classicTokens is the token count of the classic form.
	classicTokens = 9

	// v2Tokens is the token count of the v2 form as nats-server 2.14.6
	// emits it (the broker would read more; this package does not).
	v2Tokens = 11

	// accountHashLen is the exact length of the v2 account-hash token.
	accountHashLen = 8

	// MaxNameLen bounds a stream or consumer token, in bytes: the broker's
	// JSMaxNameLen for stream names and durable consumer names.
	MaxNameLen = 255

	// maxUintDigits is len("18446744073709551615"), the longest uint64.
	maxUintDigits = 20

	// maxIntDigits is len("9223372036854775807"), the longest non-negative
	// int64.
	maxIntDigits = 19

	// MaxLen bounds a whole subject, in bytes: the v2 form with both names
	// at MaxNameLen and every number at its largest value. Parse refuses a
	// longer subject before reading any token.
	MaxLen = len(ackPrefix) +
		len(noDomain) + 1 + accountHashLen + 1 +
		2*(MaxNameLen+1) +
		3*(maxUintDigits+1) +
		(maxIntDigits + 1) +
		maxUintDigits
)

// Token offsets from the stream token, the same in both forms.
const (
	offStream = iota
	offConsumer
	offDelivered
	offStreamSeq
	offConsumerSeq
	offTimestamp
	offPending
)

// First index of the stream token in each form.
const (
	classicStreamIndex = 2
	v2StreamIndex      = 4
	v2DomainIndex      = 2
	v2HashIndex        = 3
)
