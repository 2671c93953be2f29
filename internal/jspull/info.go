package jspull

import (
	"strconv"
	"unicode/utf8"

	"github.com/latent-systems/latent-nats/internal/jsonlex"
)

// MaxInfoSize caps the consumer-info reply body, in bytes. A reply for a
// consumer of this profile is about 1 KiB; the cap leaves room for a
// description and metadata while keeping the decode bounded.
const MaxInfoSize = 16384

// infoResponseType is the "type" of a consumer-info reply.
const infoResponseType = "io.nats.jetstream.api.v1.consumer_info_response"

// JetStream API error codes (err_code) of nats-server 2.14.6
// (errors.json): consumer info answers them with their own typed errors
// (ErrConsumerNotFound, ErrStreamNotFound), and the tools that speak to
// the JetStream API read them from here.
const (
	CodeConsumerNotFound = 10014 // JSConsumerNotFoundErr
	CodeStreamNotFound   = 10059 // JSStreamNotFoundErr
)

// Pending holds the consumer-info counters of nats-server 2.14.6 and
// whether the consumer's leader gave them.
type Pending struct {
	// NumPending counts stream messages matching the filter that were never
	// delivered to this consumer.
	NumPending uint64
	// NumAckPending counts deliveries awaiting acknowledgement, including
	// those waiting out a NAK delay or queued for redelivery.
	NumAckPending int
	// NumRedelivered counts stream messages delivered more than once whose
	// count the broker still tracks; it can stay above zero after such a
	// message ran out of deliveries (the broker keeps the count until the
	// message leaves the stream), so it says nothing about what a pull would
	// deliver.
	NumRedelivered int
	// NumWaiting counts pull requests waiting in the consumer's queue.
	NumWaiting int
	// Leader reports that the reply is the consumer leader's view: its
	// "cluster" state names a leader, or it has no "cluster" state and
	// the Requester's server is outside a cluster (it holds the one copy).
	// In a cluster nats-server 2.14.6 lets only the consumer's leader
	// answer consumer info once it has one (jsConsumerInfoRequest); a
	// replica answers only while a new consumer elects its first leader,
	// with its own counters and "cluster" state that names no leader
	// (Leader false), or before it started the consumer's group at all
	// (a node just restarted, still recovering), at once, with zero
	// counters and no "cluster" state: its reply races the leader's, and
	// the first one answers the request. A reply cannot tell that from a
	// server outside a cluster; the Requester can (*conn.Conn's
	// Clustered), and Inspect clears Leader for it.
	Leader bool
}

// Empty reports whether this consumer info proves that a pull now would
// deliver nothing, so a visit can stop after this one round trip.
//
// On nats-server 2.14.6 a pull can deliver either a message never delivered
// (counted by NumPending) or a redelivery. Every redelivery candidate, be it
// queued for redelivery after ack_wait or a plain NAK, waiting out a NAK
// delay, or still within ack_wait, is a key of the consumer's pending map,
// which NumAckPending counts; the broker's own no-wait check
// (num_pending + redelivery queue length) is therefore zero whenever both
// are. NumRedelivered is not used: it keeps counting a message that ran out
// of deliveries until the message leaves the stream (the conformance suite
// shows such an empty consumer), so requiring it to be zero would make a
// dormant consumer cost a 100 ms pull on every visit. A message stored after
// the info was taken is left for the next visit.
func (p Pending) Empty() bool { return p.NumPending == 0 && p.NumAckPending == 0 }

// Top-level fields of a consumer-info reply (JSApiConsumerInfoResponse:
// ApiResponse plus ConsumerInfo, nats-server 2.14.6 consumer.go).
const (
	topType = iota
	topError
	topStreamName
	topName
	topCreated
	topConfig
	topDelivered
	topAckFloor
	topNumAckPending
	topNumRedelivered
	topNumWaiting
	topNumPending
	topCluster
	topPushBound
	topPaused
	topPauseRemaining
	topTS
	topPriorityGroups
)

func topField(k []byte) int {
	switch string(k) {
	case "type":
		return topType
	case "error":
		return topError
	case "stream_name":
		return topStreamName
	case "name":
		return topName
	case "created":
		return topCreated
	case "config":
		return topConfig
	case "delivered":
		return topDelivered
	case "ack_floor":
		return topAckFloor
	case "num_ack_pending":
		return topNumAckPending
	case "num_redelivered":
		return topNumRedelivered
	case "num_waiting":
		return topNumWaiting
	case "num_pending":
		return topNumPending
	case "cluster":
		return topCluster
	case "push_bound":
		return topPushBound
	case "paused":
		return topPaused
	case "pause_remaining":
		return topPauseRemaining
	case "ts":
		return topTS
	case "priority_groups":
		return topPriorityGroups
	}
	return -1
}

// Fields of ConsumerConfig (nats-server 2.14.6 consumer.go).
const (
	cfgDurableName = iota
	cfgName
	cfgDescription
	cfgDeliverPolicy
	cfgOptStartSeq
	cfgOptStartTime
	cfgAckPolicy
	cfgAckWait
	cfgMaxDeliver
	cfgBackoff
	cfgFilterSubject
	cfgFilterSubjects
	cfgReplayPolicy
	cfgRateLimit
	cfgSampleFreq
	cfgMaxWaiting
	cfgMaxAckPending
	cfgFlowControl
	cfgHeadersOnly
	cfgMaxBatch
	cfgMaxExpires
	cfgMaxBytes
	cfgDeliverSubject
	cfgDeliverGroup
	cfgIdleHeartbeat
	cfgInactiveThreshold
	cfgNumReplicas
	cfgMemStorage
	cfgDirect
	cfgSourcing
	cfgMetadata
	cfgPauseUntil
	cfgPriorityGroups
	cfgPriorityPolicy
	cfgPriorityTimeout
)

func configField(k []byte) int {
	switch string(k) {
	case "durable_name":
		return cfgDurableName
	case "name":
		return cfgName
	case "description":
		return cfgDescription
	case "deliver_policy":
		return cfgDeliverPolicy
	case "opt_start_seq":
		return cfgOptStartSeq
	case "opt_start_time":
		return cfgOptStartTime
	case "ack_policy":
		return cfgAckPolicy
	case "ack_wait":
		return cfgAckWait
	case "max_deliver":
		return cfgMaxDeliver
	case "backoff":
		return cfgBackoff
	case "filter_subject":
		return cfgFilterSubject
	case "filter_subjects":
		return cfgFilterSubjects
	case "replay_policy":
		return cfgReplayPolicy
	case "rate_limit_bps":
		return cfgRateLimit
	case "sample_freq":
		return cfgSampleFreq
	case "max_waiting":
		return cfgMaxWaiting
	case "max_ack_pending":
		return cfgMaxAckPending
	case "flow_control":
		return cfgFlowControl
	case "headers_only":
		return cfgHeadersOnly
	case "max_batch":
		return cfgMaxBatch
	case "max_expires":
		return cfgMaxExpires
	case "max_bytes":
		return cfgMaxBytes
	case "deliver_subject":
		return cfgDeliverSubject
	case "deliver_group":
		return cfgDeliverGroup
	case "idle_heartbeat":
		return cfgIdleHeartbeat
	case "inactive_threshold":
		return cfgInactiveThreshold
	case "num_replicas":
		return cfgNumReplicas
	case "mem_storage":
		return cfgMemStorage
	case "direct":
		return cfgDirect
	case "sourcing":
		return cfgSourcing
	case "metadata":
		return cfgMetadata
	case "pause_until":
		return cfgPauseUntil
	case "priority_groups":
		return cfgPriorityGroups
	case "priority_policy":
		return cfgPriorityPolicy
	case "priority_timeout":
		return cfgPriorityTimeout
	}
	return -1
}

// maxKeyLen is the longest field name either table knows; a longer key is
// unknown without decoding it.
const maxKeyLen = len("inactive_threshold")

// fieldIndex decodes a raw key (escapes allowed) and looks it up in the
// config table when config is set, else in the top-level table, without
// allocating.
func fieldIndex(raw []byte, esc, config bool) int {
	var buf [maxKeyLen]byte
	k := raw
	if esc {
		n := 0
		for i := 0; i < len(raw); {
			r, m := jsonlex.Rune(raw, i)
			if n+utf8.RuneLen(r) > len(buf) {
				return -1
			}
			n += utf8.EncodeRune(buf[n:], r)
			i += m
		}
		k = buf[:n]
	}
	if config {
		return configField(k)
	}
	return topField(k)
}

// jstr is a string value as found in the reply: raw bytes between the quotes
// (aliasing the reply) and whether they hold escapes.
type jstr struct {
	raw     []byte
	esc     bool
	present bool
}

func (v jstr) equal(want string) bool { return v.present && jsonlex.Equal(v.raw, v.esc, want) }

// got renders the value for a mismatch report.
func (v jstr) got() string {
	if !v.present {
		return gotAbsent
	}
	return decodeString(v.raw, v.esc)
}

type jint struct {
	v       int64
	present bool
}

// consumerConfig holds the checked settings of a decoded ConsumerConfig.
type consumerConfig struct {
	durableName, name, deliverPolicy, ackPolicy, replayPolicy jstr
	filterSubject, deliverSubject, priorityPolicy             jstr
	firstFilter                                               jstr // filter_subjects[0]
	numFilters, numBackoff                                    int

	ackWait, maxDeliver, maxWaiting, maxAckPending jint
	maxBatch, maxExpires, maxBytes                 jint

	flowControl, headersOnly bool

	// unknown holds the config keys the decoder does not know; settings
	// lists those whose value is not empty or zero (see emptyValue), in
	// reply order, with their raw values.
	unknown   unknownKeys
	nSettings int
	settings  [maxUnknownFields]unknownSetting
}

// unknownSetting is a config field the decoder does not know whose value
// is not empty or zero: the index of its key in consumerConfig.unknown and
// its raw JSON value, aliasing the reply.
type unknownSetting struct {
	key int
	val []byte
}

// consumerInfo holds a decoded consumer-info reply: either an API error or
// the info.
type consumerInfo struct {
	apiErr        bool
	code, errCode int64

	streamName, name jstr
	hasConfig        bool
	config           consumerConfig
	pending          Pending
	// paused is the reply's "paused": the consumer's pause_until lies in
	// the future, so it delivers nothing.
	paused bool
	// clustered: the reply has "cluster" state; leaderNamed: it names a
	// leader (see Pending.Leader).
	clustered, leaderNamed bool
}

// decodeInfo decodes a consumer-info reply strictly: one JSON object, every
// field present at most once, exact key case, the expected "type", the
// counters present. A field nats-server 2.14.6 does not send is state
// when it is outside "config": it is validated (JSON syntax, depth, no
// repeated key, at most maxUnknownFields per object) and skipped. Inside
// "config" it is a setting: validated the same way and kept for the profile
// check, which accepts it only when empty or zero. String values alias
// body.
func decodeInfo(body []byte, ci *consumerInfo) error {
	if len(body) > MaxInfoSize {
		return ErrInfoTooLarge
	}
	*ci = consumerInfo{}
	s := jscan{b: body}
	if err := ci.decode(&s); err != nil {
		return &InfoError{Offset: s.i, err: err}
	}
	if err := s.end(); err != nil {
		return &InfoError{Offset: s.i, err: err}
	}
	return nil
}

func (ci *consumerInfo) decode(s *jscan) error {
	if !s.consume('{') {
		return errJSONSyntax
	}
	var seen uint64
	var typ jstr
	var unknown unknownKeys
	for first := true; ; first = false {
		raw, esc, ok, err := s.member(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		f := fieldIndex(raw, esc, false)
		if f < 0 {
			if err := unknown.add(raw, esc); err != nil {
				return err
			}
			if err := s.skip(1); err != nil {
				return err
			}
			continue
		}
		if seen&(1<<f) != 0 {
			return errJSONDuplicate
		}
		seen |= 1 << f
		if err := ci.topValue(s, f, &typ); err != nil {
			return err
		}
	}
	if !typ.equal(infoResponseType) {
		return errJSONMissing
	}
	if ci.apiErr {
		return nil
	}
	const counters = 1<<topNumAckPending | 1<<topNumRedelivered | 1<<topNumWaiting | 1<<topNumPending
	if seen&counters != counters {
		return errJSONMissing
	}
	ci.pending.Leader = !ci.clustered || ci.leaderNamed
	return nil
}

func (ci *consumerInfo) topValue(s *jscan, f int, typ *jstr) error {
	var err error
	switch f {
	case topType:
		*typ, err = s.jstring()
	case topError:
		err = ci.decodeError(s)
	case topStreamName:
		ci.streamName, err = s.jstring()
	case topName:
		ci.name, err = s.jstring()
	case topConfig:
		ci.hasConfig = true
		err = ci.config.decode(s)
	case topNumAckPending:
		ci.pending.NumAckPending, err = s.count()
	case topNumRedelivered:
		ci.pending.NumRedelivered, err = s.count()
	case topNumWaiting:
		ci.pending.NumWaiting, err = s.count()
	case topNumPending:
		ci.pending.NumPending, err = s.unsigned()
	case topDelivered, topAckFloor:
		err = s.sequenceInfo()
	case topPaused:
		ci.paused, err = s.boolean()
	case topCluster:
		ci.clustered = true
		ci.leaderNamed, err = s.clusterLeader()
	default:
		err = s.skip(1)
	}
	return err
}

// clusterLeader reads the "cluster" object (ClusterInfo) and reports
// whether it names a leader: "leader" a non-empty string, at most once.
// Its other fields are state, validated and skipped.
func (s *jscan) clusterLeader() (bool, error) {
	if !s.consume('{') {
		return false, errJSONType
	}
	var seen, named bool
	var unknown unknownKeys
	for first := true; ; first = false {
		raw, esc, ok, err := s.member(first)
		if err != nil {
			return false, err
		}
		if !ok {
			return named, nil
		}
		if !jsonlex.Equal(raw, esc, "leader") {
			if err := unknown.add(raw, esc); err != nil {
				return false, err
			}
			if err := s.skip(2); err != nil {
				return false, err
			}
			continue
		}
		if seen {
			return false, errJSONDuplicate
		}
		seen = true
		v, err := s.jstring()
		if err != nil {
			return false, err
		}
		named = len(v.raw) > 0
	}
}

// decodeError reads the ApiError object {code, err_code, description}.
func (ci *consumerInfo) decodeError(s *jscan) error {
	if !s.consume('{') {
		return errJSONType
	}
	ci.apiErr = true
	var seen uint8
	var unknown unknownKeys
	for first := true; ; first = false {
		raw, esc, ok, err := s.member(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		var f uint8
		switch {
		case jsonlex.Equal(raw, esc, "code"):
			f = 1
			ci.code, err = s.integer()
		case jsonlex.Equal(raw, esc, "err_code"):
			f = 2
			ci.errCode, err = s.integer()
		case jsonlex.Equal(raw, esc, "description"):
			f = 4
			_, _, err = s.str()
		default:
			if err := unknown.add(raw, esc); err != nil {
				return err
			}
			err = s.skip(2)
		}
		if err != nil {
			return err
		}
		if seen&f != 0 {
			return errJSONDuplicate
		}
		seen |= f
	}
	if seen&1 == 0 {
		return errJSONMissing
	}
	return nil
}

// sequenceInfo validates a SequenceInfo object (delivered, ack_floor):
// consumer_seq and stream_seq unsigned integers, last_active a string, each
// at most once; other fields are state, validated and skipped.
func (s *jscan) sequenceInfo() error {
	if !s.consume('{') {
		return errJSONType
	}
	var seen uint8
	var unknown unknownKeys
	for first := true; ; first = false {
		raw, esc, ok, err := s.member(first)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		var f uint8
		switch {
		case jsonlex.Equal(raw, esc, "consumer_seq"):
			f = 1
			_, err = s.unsigned()
		case jsonlex.Equal(raw, esc, "stream_seq"):
			f = 2
			_, err = s.unsigned()
		case jsonlex.Equal(raw, esc, "last_active"):
			f = 4
			_, _, err = s.str()
		default:
			if err := unknown.add(raw, esc); err != nil {
				return err
			}
			err = s.skip(2)
		}
		if err != nil {
			return err
		}
		if seen&f != 0 {
			return errJSONDuplicate
		}
		seen |= f
	}
}

func (c *consumerConfig) decode(s *jscan) error {
	if !s.consume('{') {
		return errJSONType
	}
	var seen uint64
	for first := true; ; first = false {
		raw, esc, ok, err := s.member(first)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		f := fieldIndex(raw, esc, true)
		if f < 0 {
			if err := c.unknownValue(s, raw, esc); err != nil {
				return err
			}
			continue
		}
		if seen&(1<<f) != 0 {
			return errJSONDuplicate
		}
		seen |= 1 << f
		if err := c.value(s, f); err != nil {
			return err
		}
	}
}

// unknownValue records a config field the decoder does not know and
// validates its value, keeping it when it is not empty or zero.
func (c *consumerConfig) unknownValue(s *jscan, raw []byte, esc bool) error {
	if err := c.unknown.add(raw, esc); err != nil {
		return err
	}
	v, err := s.skipValue(2)
	if err != nil {
		return err
	}
	if !emptyValue(v) {
		c.settings[c.nSettings] = unknownSetting{key: c.unknown.n - 1, val: v}
		c.nSettings++
	}
	return nil
}

func (c *consumerConfig) value(s *jscan, f int) error {
	var err error
	switch f {
	case cfgDurableName:
		c.durableName, err = s.jstring()
	case cfgName:
		c.name, err = s.jstring()
	case cfgDeliverPolicy:
		c.deliverPolicy, err = s.jstring()
	case cfgAckPolicy:
		c.ackPolicy, err = s.jstring()
	case cfgReplayPolicy:
		c.replayPolicy, err = s.jstring()
	case cfgFilterSubject:
		c.filterSubject, err = s.jstring()
	case cfgDeliverSubject:
		c.deliverSubject, err = s.jstring()
	case cfgPriorityPolicy:
		c.priorityPolicy, err = s.jstring()
	case cfgFilterSubjects:
		c.numFilters, err = s.stringArray(&c.firstFilter)
	case cfgBackoff:
		c.numBackoff, err = s.intArray()
	case cfgAckWait:
		c.ackWait, err = s.jinteger()
	case cfgMaxDeliver:
		c.maxDeliver, err = s.jinteger()
	case cfgMaxWaiting:
		c.maxWaiting, err = s.jinteger()
	case cfgMaxAckPending:
		c.maxAckPending, err = s.jinteger()
	case cfgMaxBatch:
		c.maxBatch, err = s.jinteger()
	case cfgMaxExpires:
		c.maxExpires, err = s.jinteger()
	case cfgMaxBytes:
		c.maxBytes, err = s.jinteger()
	case cfgFlowControl:
		c.flowControl, err = s.boolean()
	case cfgHeadersOnly:
		c.headersOnly, err = s.boolean()
	default:
		err = s.skip(2)
	}
	return err
}

func (s *jscan) jstring() (jstr, error) {
	raw, esc, err := s.str()
	if err != nil {
		return jstr{}, err
	}
	return jstr{raw: raw, esc: esc, present: true}, nil
}

func (s *jscan) jinteger() (jint, error) {
	v, err := s.integer()
	if err != nil {
		return jint{}, err
	}
	return jint{v: v, present: true}, nil
}

// count reads a non-negative int counter.
func (s *jscan) count() (int, error) {
	v, err := s.integer()
	if err != nil {
		return 0, err
	}
	if v < 0 || int64(int(v)) != v {
		return 0, errJSONRange
	}
	return int(v), nil
}

// stringArray reads an array of strings, keeping the first, and returns the
// element count.
func (s *jscan) stringArray(first *jstr) (int, error) {
	if !s.consume('[') {
		return 0, errJSONType
	}
	n := 0
	for {
		ok, err := s.element(n == 0)
		if err != nil {
			return 0, err
		}
		if !ok {
			return n, nil
		}
		v, err := s.jstring()
		if err != nil {
			return 0, err
		}
		if n == 0 {
			*first = v
		}
		n++
	}
}

// intArray reads an array of integers and returns the element count.
func (s *jscan) intArray() (int, error) {
	if !s.consume('[') {
		return 0, errJSONType
	}
	n := 0
	for {
		ok, err := s.element(n == 0)
		if err != nil {
			return 0, err
		}
		if !ok {
			return n, nil
		}
		if _, err := s.integer(); err != nil {
			return 0, err
		}
		n++
	}
}

// infoError maps a decoded API error to this package's errors.
func (ci *consumerInfo) infoError() error {
	switch ci.errCode {
	case CodeStreamNotFound:
		return ErrStreamNotFound
	case CodeConsumerNotFound:
		return ErrConsumerNotFound
	}
	return &APIError{Code: int(ci.code), ErrCode: int(ci.errCode)}
}

// maxReported caps the bytes of an unknown config field's name and value
// copied into a Mismatch.
const maxReported = 64

// settingName renders the name of an unknown config field for a Mismatch:
// the name itself when it is plain printable ASCII, else quoted; cut at
// maxReported bytes either way.
func settingName(k jstr) string {
	name := decodeString(k.raw, k.esc)
	cut := len(name) > maxReported
	if cut {
		name = name[:maxReported]
	}
	plain := name != ""
	for i := range len(name) {
		if c := name[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if !plain {
		name = strconv.QuoteToASCII(name)
	}
	if cut {
		name += "..."
	}
	return name
}

// settingValue renders the raw JSON value of an unknown config field for a
// Mismatch: the JSON text when short, else its type and size.
func settingValue(v []byte) string {
	if len(v) <= maxReported {
		return string(v)
	}
	kind := "number"
	switch v[0] {
	case '"':
		kind = "string"
	case '[':
		kind = "array"
	case '{':
		kind = "object"
	}
	return kind + " of " + strconv.Itoa(len(v)) + " bytes"
}
