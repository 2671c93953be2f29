package jspull

import (
	"strconv"
)

// Values a consumer of the profile must have, besides those taken from the
// [Binding].
const (
	requiredAckPolicy     = "explicit"
	requiredReplayPolicy  = "instant"
	requiredDeliverPolicy = "all"
	// requiredOne is max_waiting, max_ack_pending and max_batch: one waiting
	// pull, one unacknowledged delivery, one message per pull.
	requiredOne = 1
)

// Renderings used in [Mismatch] for what is not a plain value.
const (
	gotAbsent      = "absent"
	wantAbsent     = "absent"
	wantOneFilter  = "one filter subject"
	wantNoPriority = "none"
	// wantEmpty is the Want of a config field the client does not know.
	wantEmpty = "absent or empty"
)

// Mismatch is one consumer setting that differs from the profile. Field is
// the JSON name in the consumer-info reply ("config" fields without prefix);
// Want and Got are the values in their JSON form (durations in
// nanoseconds, strings unquoted), or "absent".
//
// A config field this package does not know (a setting of a later broker
// release) set to anything but an empty or zero value (null, false, 0, "",
// [], {}) is a Mismatch too, since it may change delivery: Field is its
// name (quoted with strconv.QuoteToASCII when not plain printable ASCII,
// cut at 64 bytes), Want "absent or empty", Got its JSON value (or its
// JSON type and size when longer than 64 bytes).
type Mismatch struct {
	Field string
	Want  string
	Got   string
}

// checkProfile compares a decoded consumer info with the binding and
// returns every mismatch, in a fixed order, or nil.
func checkProfile(b *Binding, ci *consumerInfo) []Mismatch {
	var ms []Mismatch
	add := func(field, want, got string) { ms = append(ms, Mismatch{Field: field, Want: want, Got: got}) }
	str := func(field string, v jstr, want string) {
		if !v.equal(want) {
			add(field, want, v.got())
		}
	}
	num := func(field string, v jint, want int64) {
		if !v.present || v.v != want {
			add(field, strconv.FormatInt(want, 10), v.gotInt())
		}
	}

	str("stream_name", ci.streamName, b.Stream)
	str("name", ci.name, b.Consumer)
	if !ci.hasConfig {
		add("config", "present", gotAbsent)
		return ms
	}
	c := &ci.config
	str("durable_name", c.durableName, b.Consumer)
	checkFilter(b, c, add)
	str("ack_policy", c.ackPolicy, requiredAckPolicy)
	str("replay_policy", c.replayPolicy, requiredReplayPolicy)
	str("deliver_policy", c.deliverPolicy, requiredDeliverPolicy)
	num("max_waiting", c.maxWaiting, requiredOne)
	num("max_ack_pending", c.maxAckPending, requiredOne)
	num("max_batch", c.maxBatch, requiredOne)
	num("max_expires", c.maxExpires, int64(RequestExpires))
	num("max_bytes", c.maxBytes, int64(b.MaxBytes()))
	num("ack_wait", c.ackWait, int64(b.AckWait))
	num("max_deliver", c.maxDeliver, int64(b.MaxDeliver))
	if c.deliverSubject.present && len(c.deliverSubject.raw) > 0 {
		add("deliver_subject", wantAbsent, c.deliverSubject.got())
	}
	if c.headersOnly {
		add("headers_only", "false", "true")
	}
	if c.flowControl {
		add("flow_control", "false", "true")
	}
	if c.numBackoff > 0 {
		add("backoff", wantAbsent, countOf(c.numBackoff))
	}
	if c.priorityPolicy.present && !c.priorityPolicy.equal(wantNoPriority) {
		add("priority_policy", wantNoPriority, c.priorityPolicy.got())
	}
	// Config fields nats-server 2.14.6 does not send may change delivery:
	// each one set to something other than empty or zero is a mismatch.
	for _, u := range c.settings[:c.nSettings] {
		add(settingName(c.unknown.keys[u.key]), wantEmpty, settingValue(u.val))
	}
	return ms
}

// checkFilter requires exactly one filter subject equal to the binding's.
// nats-server 2.14.6 reports a single filter as filter_subject; a single
// entry in filter_subjects is accepted as the same thing.
func checkFilter(b *Binding, c *consumerConfig, add func(field, want, got string)) {
	single := c.filterSubject
	if c.filterSubject.present && len(c.filterSubject.raw) == 0 {
		single = jstr{}
	}
	switch {
	case c.numFilters > 1:
		add("filter_subjects", wantOneFilter, countOf(c.numFilters))
		return
	case c.numFilters == 1 && single.present:
		add("filter_subjects", wantAbsent, countOf(c.numFilters))
		return
	case c.numFilters == 1:
		single = c.firstFilter
	}
	if !single.equal(b.FilterSubject) {
		add("filter_subject", b.FilterSubject, single.got())
	}
}

func (v jint) gotInt() string {
	if !v.present {
		return gotAbsent
	}
	return strconv.FormatInt(v.v, 10)
}

func countOf(n int) string { return strconv.Itoa(n) + " entries" }
