package provision

import (
	"fmt"
	"time"
)

// The capture streams: in each tenant's account, beside the streams the
// bindings name, streams of limits retention that keep what the broker
// says about the deliveries it gave up on (DeadLetterStream), and, when
// asked, a copy of every message stored (CopyStream). Package
// tools/deadletter reads them; docs/DEADLETTERS.md says what each holds
// under each retention.
const (
	// DeadLetterStream is the stream that keeps the account's give-up
	// advisories: every consumer's MAX_DELIVERIES and MSG_TERMINATED.
	DeadLetterStream = "LATENT_DEADLETTER"
	// AdvisoryMaxDeliveries is the subject prefix of the advisory the
	// broker publishes when it gives up a message that was delivered
	// max_deliver times and never settled; ".<stream>.<consumer>" follows
	// (nats-server 2.14.6 jetstream_api.go,
	// JSAdvisoryConsumerMaxDeliveryExceedPre).
	AdvisoryMaxDeliveries = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
	// AdvisoryTerminated is the subject prefix of the advisory the broker
	// publishes for every +TERM it applies (the runtime's declared
	// failures, refused payloads and exhaustions) and for a pending
	// message a stream limit removed; ".<stream>.<consumer>" follows
	// (JSAdvisoryConsumerMsgTerminatedPre).
	AdvisoryTerminated = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED"

	// CopyStream is the stream that keeps the copies a stream created with
	// CaptureOptions.Copies republishes: every message it stores, at
	// publish time, under CopySubjectPrefix.<stream>.<subject>.
	CopyStream = "LATENT_COPIES"
	// CopySubjectPrefix is the first token of a copy's subject.
	CopySubjectPrefix = "latent.copy"
)

// Bounds and defaults of the capture streams' limits. Both streams
// discard their oldest messages when a limit is reached, so a limit is
// how much history is kept, never a reason to refuse an event.
const (
	// MinCaptureMaxAge is the least max_age of a capture stream: what it
	// keeps must outlive the time an operator takes to look.
	MinCaptureMaxAge = time.Hour
	// DefaultDeadLetterMaxAge keeps a give-up advisory 30 days.
	DefaultDeadLetterMaxAge = 30 * 24 * time.Hour
	// DefaultDeadLetterMaxBytes keeps at most 8 MiB of advisories (one is
	// about 350 bytes: some 20,000 give-ups).
	DefaultDeadLetterMaxBytes = 8 << 20
	// DefaultCopyMaxAge keeps a copy 7 days after its publish.
	DefaultCopyMaxAge = 7 * 24 * time.Hour
	// DefaultCopyMaxBytes keeps at most 64 MiB of copies.
	DefaultCopyMaxBytes = 64 << 20
)

// CaptureOptions choose the capture streams Run creates, or asserts, in
// each tenant's account.
type CaptureOptions struct {
	// DeadLetters creates DeadLetterStream (on in DefaultOptions): the
	// broker publishes its give-up advisories only while something
	// listens, and the stream listens whether or not anyone reads it.
	DeadLetters bool
	// DeadLetterMaxAge and DeadLetterMaxBytes bound it: at least
	// MinCaptureMaxAge, and a positive count of bytes.
	DeadLetterMaxAge   time.Duration
	DeadLetterMaxBytes int64
	// Copies (off in DefaultOptions) gives every stream Run creates the
	// republish setting RePublishOf(stream), and creates CopyStream to
	// keep the copies: the payload of a message a work-queue stream
	// removed on +TERM can then still be shown and replayed, at the price
	// of storing every message twice. A stream that exists without that
	// setting is a mismatch: Run never changes one.
	Copies bool
	// CopyMaxAge and CopyMaxBytes bound CopyStream, as above.
	CopyMaxAge   time.Duration
	CopyMaxBytes int64
}

// validate checks the limits of the streams o enables.
func (o CaptureOptions) validate() error {
	if o.DeadLetters && (o.DeadLetterMaxAge < MinCaptureMaxAge || o.DeadLetterMaxBytes <= 0) {
		return fmt.Errorf("%w: dead-letter capture needs a max age of at least %v and a positive max bytes", ErrInvalidOptions, MinCaptureMaxAge)
	}
	if o.Copies && (o.CopyMaxAge < MinCaptureMaxAge || o.CopyMaxBytes <= 0) {
		return fmt.Errorf("%w: copy capture needs a max age of at least %v and a positive max bytes", ErrInvalidOptions, MinCaptureMaxAge)
	}
	return nil
}

// RePublish is a stream's republish setting as nats-server 2.14.6 takes
// it (stream.go, RePublish): each message the stream stores is published
// again, after it is stored, to Destination (the transform of its subject
// by Source), with the headers Nats-Stream, Nats-Subject, Nats-Sequence,
// Nats-Time-Stamp and Nats-Last-Sequence added to its own.
type RePublish struct {
	Source      string `json:"src"`
	Destination string `json:"dest"`
}

// RePublishOf returns the republish setting of a stream created with
// CaptureOptions.Copies: every subject ">" to
// "<CopySubjectPrefix>.<stream>.>", which CopyStream captures.
func RePublishOf(stream string) RePublish {
	return RePublish{Source: ">", Destination: CopySubject(stream)}
}

// CopySubject returns the subjects of the copies of stream's messages,
// "<CopySubjectPrefix>.<stream>.>" (a stream name holds no '.', '*' or
// '>').
func CopySubject(stream string) string {
	return CopySubjectPrefix + "." + stream + ".>"
}

// Stream settings of the capture streams.
const (
	captureRetention = "limits"
	captureDiscard   = "old"
)

// captureStream returns a capture stream's configuration: file storage,
// limits retention, discard old, no message-count limit of its own, and
// the given subjects, limits and replica count.
func captureStream(name string, subjects []string, maxAge time.Duration, maxBytes int64, replicas int) StreamConfig {
	return StreamConfig{
		Name:              name,
		Subjects:          subjects,
		Retention:         captureRetention,
		MaxConsumers:      streamUnlimited,
		MaxMsgs:           NoLimit,
		MaxBytes:          maxBytes,
		MaxAge:            int64(maxAge),
		MaxMsgsPerSubject: streamUnlimited,
		MaxMsgSize:        streamUnlimited,
		Discard:           captureDiscard,
		Storage:           streamStorage,
		Replicas:          replicas,
	}
}

// DesiredDeadLetterStream returns DeadLetterStream's configuration: the
// two give-up advisories of every stream and consumer of the account
// (AdvisoryMaxDeliveries and AdvisoryTerminated, each followed by ".>"),
// o's limits and the replica count.
func DesiredDeadLetterStream(o CaptureOptions, replicas int) StreamConfig {
	return captureStream(DeadLetterStream, []string{AdvisoryMaxDeliveries + ".>", AdvisoryTerminated + ".>"},
		o.DeadLetterMaxAge, o.DeadLetterMaxBytes, replicas)
}

// DesiredCopyStream returns CopyStream's configuration: every copy
// ("<CopySubjectPrefix>.>"), o's limits and the replica count.
func DesiredCopyStream(o CaptureOptions, replicas int) StreamConfig {
	return captureStream(CopyStream, []string{CopySubjectPrefix + ".>"}, o.CopyMaxAge, o.CopyMaxBytes, replicas)
}
