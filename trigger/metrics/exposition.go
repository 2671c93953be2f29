package metrics

import (
	"iter"
	"strconv"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// Append appends the text exposition of s and, when hasLast, of last to dst
// and returns the extended buffer; last and hasLast are the two results of
// trigger.Monitor.LastStep. The families and their order are those of the
// package documentation; each family's HELP and TYPE lines come once,
// before its samples, and the output ends with a newline.
//
// Append allocates nothing when dst has the capacity: scrape into a
// reused buffer with Append(buf[:0], m.Snapshot(), last, ok). It reads
// neither s.LogicalID nor s.Totals. s.Consumers holds one state per
// binding, as a Monitor's Snapshot does; a shorter slice writes the
// consumer families for its bindings only.
func Append(dst []byte, s trigger.Snapshot, last trigger.StepReport, hasLast bool) []byte {
	dst = appendHeader(dst, nameEpoch, helpEpoch, typeGauge)
	dst = appendUintSample(dst, nameEpoch, s.Epoch)
	dst = appendHeader(dst, nameBindings, helpBindings, typeGauge)
	dst = appendUintSample(dst, nameBindings, uint64(len(s.Bindings)))
	dst = appendHeader(dst, nameSteps, helpSteps, typeCounter)
	dst = appendUintSample(dst, nameSteps, s.Steps)
	dst = appendHeader(dst, nameDials, helpDials, typeCounter)
	dst = appendUintSample(dst, nameDials, s.Dials)
	dst = appendHeader(dst, nameReplaced, helpReplaced, typeCounter)
	dst = appendUintSample(dst, nameReplaced, s.Replaced)
	dst = appendHeader(dst, nameRotations, helpRotations, typeCounter)
	dst = appendUintSample(dst, nameRotations, s.Rotations)

	bs := s.Bindings
	dst = appendPerBinding(dst, bs, nameVisits, helpVisits, func(c *trigger.Counts) uint64 { return c.Visits })
	dst = appendPerBinding(dst, bs, nameSkipped, helpSkipped, func(c *trigger.Counts) uint64 { return c.Skipped })
	dst = appendPerBinding(dst, bs, nameEmpty, helpEmpty, func(c *trigger.Counts) uint64 { return c.Empty })
	dst = appendPerBinding(dst, bs, nameEmptyPulls, helpEmptyPulls, func(c *trigger.Counts) uint64 { return c.EmptyPulls })
	dst = appendPerBinding(dst, bs, nameAwaiting, helpAwaiting, func(c *trigger.Counts) uint64 { return c.Awaiting })
	dst = appendPerBinding(dst, bs, nameDelivered, helpDelivered, func(c *trigger.Counts) uint64 { return c.Delivered })
	dst = appendHeader(dst, nameAcks, helpAcks, typeCounter)
	for i := range bs {
		for a, n := range acknowledgements(&bs[i]) {
			dst = appendEnumSample(dst, nameAcks, i, labelAction, enumName(a), n)
		}
	}
	dst = appendPerBinding(dst, bs, nameUncertain, helpUncertain, func(c *trigger.Counts) uint64 { return c.Uncertain })
	dst = appendPerBinding(dst, bs, nameLate, helpLate, func(c *trigger.Counts) uint64 { return c.Late })
	dst = appendPerBinding(dst, bs, nameUnacknowledged, helpUnacknowledged, func(c *trigger.Counts) uint64 { return c.Unacknowledged })
	dst = appendPerBinding(dst, bs, nameFailed, helpFailed, func(c *trigger.Counts) uint64 { return c.Failed })
	// Each family ranges over its Counts method directly: through a func
	// value the iterator would escape and allocate per binding.
	dst = appendHeader(dst, nameOutcomes, helpOutcomes, typeCounter)
	for i := range bs {
		for o, n := range bs[i].Outcomes() {
			dst = appendEnumSample(dst, nameOutcomes, i, labelOutcome, enumName(o), n)
		}
	}
	dst = appendHeader(dst, nameErrors, helpErrors, typeCounter)
	for i := range bs {
		for e, n := range bs[i].Errors() {
			dst = appendEnumSample(dst, nameErrors, i, labelClass, enumName(e), n)
		}
	}
	dst = appendHeader(dst, nameRefusals, helpRefusals, typeCounter)
	for i := range bs {
		for r, n := range bs[i].Refusals() {
			dst = appendEnumSample(dst, nameRefusals, i, labelResource, enumName(r), n)
		}
	}
	dst = appendHeader(dst, nameDialFailures, helpDialFailures, typeCounter)
	for i := range bs {
		for f, n := range bs[i].DialFailures() {
			dst = appendEnumSample(dst, nameDialFailures, i, labelDial, enumName(f), n)
		}
	}

	cs := s.Consumers
	dst = appendConsumers(dst, cs, nameConsumerPending, helpConsumerPending, func(c *trigger.ConsumerState) uint64 { return c.Pending })
	dst = appendConsumers(dst, cs, nameConsumerAckPending, helpConsumerAckPending, func(c *trigger.ConsumerState) uint64 { return uint64(c.AckPending) })
	dst = appendConsumers(dst, cs, nameConsumerRedelivered, helpConsumerRedelivered, func(c *trigger.ConsumerState) uint64 { return uint64(c.Redelivered) })
	dst = appendConsumers(dst, cs, nameConsumerLeader, helpConsumerLeader, func(c *trigger.ConsumerState) uint64 { return b2u(c.Leader) })
	dst = appendHeader(dst, nameConsumerTime, helpConsumerTime, typeGauge)
	for i := range cs {
		dst = appendBindingStart(dst, nameConsumerTime, i)
		dst = append(dst, "} "...)
		dst = appendUnixSeconds(dst, cs[i].At)
		dst = append(dst, '\n')
	}

	if hasLast {
		dst = appendLast(dst, &last)
	}
	return dst
}

// appendConsumers appends a gauge family with one sample per binding that
// has read consumer info (ConsumerState.At set).
func appendConsumers(dst []byte, cs []trigger.ConsumerState, name, help string, get func(*trigger.ConsumerState) uint64) []byte {
	dst = appendHeader(dst, name, help, typeGauge)
	for i := range cs {
		if cs[i].At.IsZero() {
			continue
		}
		dst = appendBindingStart(dst, name, i)
		dst = append(dst, "} "...)
		dst = strconv.AppendUint(dst, get(&cs[i]), 10)
		dst = append(dst, '\n')
	}
	return dst
}

// b2u is 1 for true, 0 for false.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// acknowledgements yields every action that sends a command, with the
// count of commands sent with it; ActionNone sends none.
func acknowledgements(c *trigger.Counts) iter.Seq2[pull.Action, uint64] {
	sent := [...]struct {
		a pull.Action
		n uint64
	}{
		{pull.ActionAck, c.Acked},
		{pull.ActionTerm, c.Termed},
		{pull.ActionNak, c.Nacked},
		{pull.ActionExhausted, c.Exhausted},
	}
	return func(yield func(pull.Action, uint64) bool) {
		for _, s := range sent {
			if !yield(s.a, s.n) {
				return
			}
		}
	}
}

// appendLast appends the last-step families of r.
func appendLast(dst []byte, r *trigger.StepReport) []byte {
	dst = appendHeader(dst, nameLastInfo, helpLastInfo, typeGauge)
	dst = append(dst, nameLastInfo...)
	dst = append(dst, '{')
	dst = append(dst, labelBinding+`="`...)
	dst = strconv.AppendInt(dst, int64(r.Binding), 10)
	dst = append(dst, '"')
	dst = appendLabel(dst, labelResult, enumName(r.Result))
	dst = appendLabel(dst, labelOutcome, enumName(r.Outcome))
	dst = appendLabel(dst, labelAction, enumName(r.Action))
	dst = appendLabel(dst, labelAck, enumName(r.Ack))
	dst = appendLabel(dst, labelClass, enumName(r.Error))
	dst = appendLabel(dst, labelResource, enumName(r.Resource))
	dst = appendLabel(dst, labelDial, enumName(r.Dial))
	dst = append(dst, "} 1\n"...)

	dst = appendHeader(dst, nameLastNumber, helpLastNumber, typeGauge)
	dst = appendUintSample(dst, nameLastNumber, r.Step)
	dst = appendHeader(dst, nameLastEpoch, helpLastEpoch, typeGauge)
	dst = appendUintSample(dst, nameLastEpoch, r.Epoch)
	dst = appendHeader(dst, nameLastTime, helpLastTime, typeGauge)
	dst = append(dst, nameLastTime+" "...)
	dst = appendUnixSeconds(dst, r.At)
	dst = append(dst, '\n')
	dst = appendHeader(dst, nameLastSeq, helpLastSeq, typeGauge)
	dst = appendUintSample(dst, nameLastSeq, r.StreamSeq)
	dst = appendHeader(dst, nameLastDelivered, helpLastDelivered, typeGauge)
	dst = appendUintSample(dst, nameLastDelivered, r.Delivered)
	dst = appendHeader(dst, nameLastRoute, helpLastRoute, typeGauge)
	dst = appendUintSample(dst, nameLastRoute, r.RouteGeneration)
	dst = appendHeader(dst, nameLastWait, helpLastWait, typeGauge)
	dst = append(dst, nameLastWait+" "...)
	dst = strconv.AppendFloat(dst, r.Wait.Seconds(), 'f', -1, 64)
	dst = append(dst, '\n')
	return dst
}

// enum is one of the trigger package's fixed enums.
type enum interface {
	~uint8
	String() string
}

// enumName returns e's label value: its String name, or the empty value
// (not applicable) for zero.
func enumName[E enum](e E) string {
	if e == 0 {
		return ""
	}
	return e.String()
}

// appendPerBinding appends a counter family with one sample per binding.
func appendPerBinding(dst []byte, bs []trigger.Counts, name, help string, get func(*trigger.Counts) uint64) []byte {
	dst = appendHeader(dst, name, help, typeCounter)
	for i := range bs {
		dst = appendBindingStart(dst, name, i)
		dst = append(dst, "} "...)
		dst = strconv.AppendUint(dst, get(&bs[i]), 10)
		dst = append(dst, '\n')
	}
	return dst
}

// appendEnumSample appends binding i's sample of a family labelled by an
// enum value.
func appendEnumSample(dst []byte, name string, i int, label, value string, n uint64) []byte {
	dst = appendBindingStart(dst, name, i)
	dst = appendLabel(dst, label, value)
	dst = append(dst, "} "...)
	dst = strconv.AppendUint(dst, n, 10)
	return append(dst, '\n')
}

// appendHeader appends a family's HELP and TYPE lines.
func appendHeader(dst []byte, name, help, typ string) []byte {
	dst = append(dst, "# HELP "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = appendEscaped(dst, help, false)
	dst = append(dst, "\n# TYPE "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, typ...)
	dst = append(dst, '\n')
	return dst
}

// appendUintSample appends an unlabelled sample line.
func appendUintSample(dst []byte, name string, v uint64) []byte {
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, v, 10)
	dst = append(dst, '\n')
	return dst
}

// appendBindingStart appends name{binding="i" with the brace left open.
func appendBindingStart(dst []byte, name string, i int) []byte {
	dst = append(dst, name...)
	dst = append(dst, "{"+labelBinding+`="`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, '"')
	return dst
}

// appendLabel appends ,name="value" with value escaped.
func appendLabel(dst []byte, name, value string) []byte {
	dst = append(dst, ',')
	dst = append(dst, name...)
	dst = append(dst, `="`...)
	dst = appendEscaped(dst, value, true)
	dst = append(dst, '"')
	return dst
}

// appendEscaped appends s escaped as the format requires: backslash and
// line feed always, the double quote in label values (quote) only.
func appendEscaped(dst []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			dst = append(dst, `\\`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '"' && quote:
			dst = append(dst, `\"`...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendUnixSeconds appends t as seconds since the Unix epoch with
// millisecond precision, and 0 for the zero time.
func appendUnixSeconds(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(dst, '0')
	}
	ms := t.UnixMilli()
	if ms < 0 {
		return strconv.AppendFloat(dst, float64(ms)/1e3, 'f', 3, 64)
	}
	dst = strconv.AppendInt(dst, ms/1000, 10)
	dst = append(dst, '.')
	frac := ms % 1000
	dst = append(dst, byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return dst
}
