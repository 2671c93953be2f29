package provision

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/trigger"
)

// The consumer settings of the nats-jetstream-pull-v1 profile that are not
// taken from a binding. Package jspull checks them (its profile check on the
// consumer-info reply) but exports only the values that vary
// (jspull.RequestExpires, Binding.MaxBytes); these literals are the same
// values, and the tests create a consumer from them and require jspull's
// Inspect to accept it, so the two cannot drift apart unnoticed.
const (
	profileDeliverPolicy = "all"
	profileAckPolicy     = "explicit"
	profileReplayPolicy  = "instant"
	// profileOne is max_waiting, max_ack_pending and max_batch.
	profileOne = 1
)

// ConsumerConfig is a durable pull consumer of the profile as the config
// object of a nats-server 2.14.6 consumer-create request: the exact
// settings jspull's profile check requires, and nothing else (every other
// field keeps the broker's default, which the check accepts: no push
// delivery, no headers-only, no flow control, no backoff, no priority
// policy). Durations marshal as integer nanoseconds, as the broker expects.
type ConsumerConfig struct {
	Durable       string        `json:"durable_name"`
	DeliverPolicy string        `json:"deliver_policy"`
	AckPolicy     string        `json:"ack_policy"`
	AckWait       time.Duration `json:"ack_wait"`
	MaxDeliver    int           `json:"max_deliver"`
	FilterSubject string        `json:"filter_subject"`
	ReplayPolicy  string        `json:"replay_policy"`
	MaxWaiting    int           `json:"max_waiting"`
	MaxAckPending int           `json:"max_ack_pending"`
	MaxBatch      int           `json:"max_batch"`
	MaxExpires    time.Duration `json:"max_expires"`
	MaxBytes      int           `json:"max_bytes"`
	// Replicas is num_replicas, the operator's choice rather than the
	// profile's: DesiredConsumer leaves it zero (omitted: the stream's
	// count), and Run sets it to StreamOptions.Replicas, which on a
	// work-queue stream the broker requires to equal the stream's
	// (nats-server 2.14.6 consumer.go, checkConsumerCfg).
	Replicas int `json:"num_replicas,omitempty"`
}

// DesiredConsumer returns the consumer configuration the profile requires
// for b: durable b.Consumer filtering exactly b.FilterSubject, explicit
// acknowledgement, deliver all, instant replay, one waiting pull, one
// pending acknowledgement, batch one, 100 ms maximum expiry,
// max_bytes = payload ceiling + jspull.MaxBytesOverhead, and b's ack_wait and
// max_deliver.
func DesiredConsumer(b jspull.Binding) ConsumerConfig {
	return ConsumerConfig{
		Durable:       b.Consumer,
		DeliverPolicy: profileDeliverPolicy,
		AckPolicy:     profileAckPolicy,
		AckWait:       b.AckWait,
		MaxDeliver:    b.MaxDeliver,
		FilterSubject: b.FilterSubject,
		ReplayPolicy:  profileReplayPolicy,
		MaxWaiting:    profileOne,
		MaxAckPending: profileOne,
		MaxBatch:      profileOne,
		MaxExpires:    jspull.RequestExpires,
		MaxBytes:      b.MaxBytes(),
	}
}

// Retention is the retention policy of a stream this package creates.
type Retention uint8

const (
	// RetentionWorkQueue ("workqueue"): a message leaves the stream once
	// acknowledged or terminated, so the stream's limits bound the
	// backlog, not the history. The broker then refuses a second consumer
	// whose filter overlaps.
	RetentionWorkQueue Retention = iota + 1
	// RetentionLimits ("limits"): messages stay until a limit removes
	// them; other consumers (audit, replay) can read the same stream.
	RetentionLimits
)

// String returns the broker's name of the policy.
func (r Retention) String() string {
	switch r {
	case RetentionWorkQueue:
		return "workqueue"
	case RetentionLimits:
		return "limits"
	default:
		return "Retention(" + strconv.Itoa(int(r)) + ")"
	}
}

// ParseRetention returns the Retention named s.
func ParseRetention(s string) (Retention, error) {
	for _, r := range []Retention{RetentionWorkQueue, RetentionLimits} {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("%w: retention must be workqueue or limits", ErrInvalidOptions)
}

// NoLimit is the value of StreamOptions.MaxMsgs or MaxBytes that sets no
// limit of the stream's own: the account's JetStream limits still bound it.
const NoLimit = -1

// StreamOptions shape the streams this package creates. Existing streams
// are never changed.
type StreamOptions struct {
	// Retention is the retention policy.
	Retention Retention
	// MaxMsgs and MaxBytes bound the stream: a positive count of messages
	// and of bytes, or NoLimit. Zero is refused: a limit is chosen, not
	// defaulted. When a limit is reached the stream refuses new messages
	// (discard new): nothing unprocessed is dropped to make room.
	MaxMsgs  int64
	MaxBytes int64
	// Replicas is the replica count (num_replicas) of the streams created
	// and of their consumers, 1 to MaxReplicas; zero means
	// DefaultReplicas. An existing stream or consumer must have this count
	// (a consumer whose num_replicas is 0 has its stream's), else it is a
	// mismatch. Three replicas need a cluster of at least three nodes.
	Replicas int
}

// Bounds of StreamOptions.Replicas.
const (
	// DefaultReplicas is the replica count when StreamOptions.Replicas is
	// zero: one copy, on the server that leads it.
	DefaultReplicas = 1
	// MaxReplicas is the largest replica count the broker accepts
	// (nats-server 2.14.6 stream.go, StreamMaxReplicas).
	MaxReplicas = 5
)

// replicas returns Replicas with zero as DefaultReplicas.
func (o StreamOptions) replicas() int {
	if o.Replicas == 0 {
		return DefaultReplicas
	}
	return o.Replicas
}

// validate checks o.
func (o StreamOptions) validate() error {
	if o.Retention != RetentionWorkQueue && o.Retention != RetentionLimits {
		return fmt.Errorf("%w: stream retention", ErrInvalidOptions)
	}
	if o.MaxMsgs == 0 || o.MaxMsgs < NoLimit {
		return fmt.Errorf("%w: stream max_msgs must be positive or NoLimit", ErrInvalidOptions)
	}
	if o.MaxBytes == 0 || o.MaxBytes < NoLimit {
		return fmt.Errorf("%w: stream max_bytes must be positive or NoLimit", ErrInvalidOptions)
	}
	if o.Replicas < 0 || o.Replicas > MaxReplicas {
		return fmt.Errorf("%w: replicas must be 1 to %d", ErrInvalidOptions, MaxReplicas)
	}
	return nil
}

// Stream settings this package always uses.
const (
	streamStorage = "file"
	streamDiscard = "new"
	// streamUnlimited is the broker's -1 for max_consumers and
	// max_msgs_per_subject.
	streamUnlimited = -1
)

// StreamConfig is the stream this package creates, as the body of a
// nats-server 2.14.6 stream-create request. Fields not listed keep the
// broker's defaults.
type StreamConfig struct {
	Name              string   `json:"name"`
	Subjects          []string `json:"subjects"`
	Retention         string   `json:"retention"`
	MaxConsumers      int      `json:"max_consumers"`
	MaxMsgs           int64    `json:"max_msgs"`
	MaxBytes          int64    `json:"max_bytes"`
	MaxAge            int64    `json:"max_age"`
	MaxMsgsPerSubject int64    `json:"max_msgs_per_subject"`
	MaxMsgSize        int32    `json:"max_msg_size"`
	Discard           string   `json:"discard"`
	Storage           string   `json:"storage"`
	Replicas          int      `json:"num_replicas"`
	// RePublish is set on the streams created with CaptureOptions.Copies
	// (RePublishOf), nil otherwise.
	RePublish *RePublish `json:"republish,omitempty"`
}

// DesiredStream returns the stream to create for bindings, which all name
// stream: file storage, capturing exactly their filter subjects (sorted,
// without duplicates), max_msg_size = the largest payload ceiling among
// them, discard new, no age limit, and o's retention, limits and replica
// count. The
// broker counts a message's headers and payload against max_msg_size, so
// the stream refuses at publish any message a binding could not deliver.
func DesiredStream(stream string, bindings []jspull.Binding, o StreamOptions) StreamConfig {
	subjects := make([]string, 0, len(bindings))
	ceiling := 0
	for _, b := range bindings {
		subjects = append(subjects, b.FilterSubject)
		ceiling = max(ceiling, b.PayloadCeiling)
	}
	slices.Sort(subjects)
	return StreamConfig{
		Name:              stream,
		Subjects:          slices.Compact(subjects),
		Retention:         o.Retention.String(),
		MaxConsumers:      streamUnlimited,
		MaxMsgs:           o.MaxMsgs,
		MaxBytes:          o.MaxBytes,
		MaxMsgsPerSubject: streamUnlimited,
		MaxMsgSize:        int32(ceiling), // at most jspull.MaxPayloadCeiling
		Discard:           streamDiscard,
		Storage:           streamStorage,
		Replicas:          o.replicas(),
	}
}

// PullBinding returns the part of a configured binding the pull operations
// and the profile check need.
func PullBinding(b trigger.Binding) jspull.Binding {
	return jspull.Binding{
		Stream:         b.Stream,
		Consumer:       b.Consumer,
		FilterSubject:  b.FilterSubject,
		PayloadCeiling: b.MaxPayloadBytes,
		AckWait:        b.AckWait(),
		MaxDeliver:     b.MaxDeliver,
	}
}
