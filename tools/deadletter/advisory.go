package deadletter

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/provision"
)

// Kind is which of the broker's give-up advisories recorded an entry.
type Kind uint8

const (
	// KindTerminated: a MSG_TERMINATED advisory. The broker applied a
	// +TERM: the trigger runtime's declared failure ("declared failure"),
	// refused payload ("invalid arguments") and other final outcomes, and
	// its exhaustion ("exhausted", at the delivery counted max_deliver);
	// or a stream limit removed a pending message (the broker's own
	// reasons).
	KindTerminated Kind = iota + 1
	// KindMaxDeliveries: a MAX_DELIVERIES advisory. The broker gave the
	// message up itself: it was delivered max_deliver times and never
	// settled (the runtime died, or its last acknowledgement was lost,
	// or its header block was over the runtime's cap). The message stays
	// in its stream, whatever the retention.
	KindMaxDeliveries
)

// String returns "terminated" or "max deliveries".
func (k Kind) String() string {
	switch k {
	case KindTerminated:
		return "terminated"
	case KindMaxDeliveries:
		return "max deliveries"
	default:
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// The advisories' schema types (nats-server 2.14.6 jetstream_events.go,
// JSConsumerDeliveryTerminatedAdvisoryType and
// JSConsumerDeliveryExceededAdvisoryType).
const (
	typeTerminated    = "io.nats.jetstream.advisory.v1.terminated"
	typeMaxDeliveries = "io.nats.jetstream.advisory.v1.max_deliver"
)

// prefixOf returns the subject prefix and schema type of a kind.
func prefixOf(k Kind) (prefix, schema string) {
	switch k {
	case KindTerminated:
		return provision.AdvisoryTerminated, typeTerminated
	case KindMaxDeliveries:
		return provision.AdvisoryMaxDeliveries, typeMaxDeliveries
	default:
		return "", ""
	}
}

// Entry is one delivery the broker gave up on, as its advisory says.
type Entry struct {
	Kind Kind
	// Stream and Consumer name the consumer that gave it up.
	Stream, Consumer string
	// StreamSeq is the message's sequence in Stream: what Client.Message
	// looks up.
	StreamSeq uint64
	// ConsumerSeq is the delivery's consumer sequence (KindTerminated
	// only; 0 otherwise).
	ConsumerSeq uint64
	// Deliveries is the broker's delivery count of the message when it
	// gave it up.
	Deliveries uint64
	// Reason is the +TERM's reason, as the terminating client sent it
	// (the trigger runtime's are fixed words: see trigger.ActionFor), or
	// one of the broker's own; empty for KindMaxDeliveries.
	Reason string
	// Time is when the broker gave the message up (the advisory's
	// timestamp, UTC).
	Time time.Time
	// Domain is the JetStream domain, empty for none.
	Domain string
	// ID is the advisory's unique ID.
	ID string
	// CaptureSeq is the advisory's sequence in the dead-letter capture
	// stream: Query.After continues after it.
	CaptureSeq uint64
}

// advisoryJSON holds both advisories of nats-server 2.14.6
// (JSConsumerDeliveryTerminatedAdvisory, JSConsumerDeliveryExceededAdvisory).
// Fields the broker adds later are skipped: they are state.
type advisoryJSON struct {
	Type        string    `json:"type"`
	ID          string    `json:"id"`
	Time        time.Time `json:"timestamp"`
	Stream      string    `json:"stream"`
	Consumer    string    `json:"consumer"`
	ConsumerSeq uint64    `json:"consumer_seq"`
	StreamSeq   uint64    `json:"stream_seq"`
	Deliveries  uint64    `json:"deliveries"`
	Reason      string    `json:"reason"`
	Domain      string    `json:"domain"`
}

// decodeAdvisory returns the entry a captured message holds, and false
// when it is not a give-up advisory of the shape nats-server 2.14.6 sends
// on its subject: a schema type of its kind, the stream and consumer of
// its subject, a stream sequence and a delivery count of at least 1.
// Anyone allowed to publish to the advisory subjects could store other
// bytes there; those are reported, never trusted.
func decodeAdvisory(subject string, data []byte, captureSeq uint64) (Entry, bool) {
	for _, k := range []Kind{KindTerminated, KindMaxDeliveries} {
		prefix, schema := prefixOf(k)
		rest, ok := strings.CutPrefix(subject, prefix+".")
		if !ok {
			continue
		}
		stream, consumer, ok := strings.Cut(rest, ".")
		if !ok {
			return Entry{}, false
		}
		var a advisoryJSON
		if json.Unmarshal(data, &a) != nil || a.Type != schema || a.Stream != stream || a.Consumer != consumer ||
			jspull.ValidName(stream) != nil || jspull.ValidName(consumer) != nil || a.StreamSeq == 0 || a.Deliveries == 0 {
			return Entry{}, false
		}
		return Entry{
			Kind: k, Stream: stream, Consumer: consumer, StreamSeq: a.StreamSeq, ConsumerSeq: a.ConsumerSeq,
			Deliveries: a.Deliveries, Reason: a.Reason, Time: a.Time.UTC(), Domain: a.Domain, ID: a.ID, CaptureSeq: captureSeq,
		}, true
	}
	return Entry{}, false
}
