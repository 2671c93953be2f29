package provision

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/internal/jspull"
)

// Resource names what a Result is about.
type Resource uint8

const (
	// ResourceTenant is the connection to a tenant's broker; it has a
	// Result only when it failed.
	ResourceTenant Resource = iota + 1
	// ResourceStream is a stream.
	ResourceStream
	// ResourceConsumer is a durable pull consumer of one binding.
	ResourceConsumer
	// ResourceCapture is a capture stream of the tenant's account
	// (DeadLetterStream, CopyStream).
	ResourceCapture
)

// String returns "tenant", "stream", "consumer" or "capture".
func (r Resource) String() string {
	switch r {
	case ResourceTenant:
		return "tenant"
	case ResourceStream:
		return "stream"
	case ResourceConsumer:
		return "consumer"
	case ResourceCapture:
		return "capture"
	default:
		return "Resource(" + strconv.Itoa(int(r)) + ")"
	}
}

// Action is what provisioning did with, or found of, one resource.
type Action uint8

const (
	// ActionCreated: absent, created now and then checked.
	ActionCreated Action = iota + 1
	// ActionAsserted: present and as required; nothing was changed.
	ActionAsserted
	// ActionMismatch: present and different; left unchanged, every
	// difference in Result.Mismatches.
	ActionMismatch
	// ActionMissing: absent, and nothing was created (ModeAssert, or a
	// stream that is not as required).
	ActionMissing
	// ActionSkipped: not attempted, because its tenant could not be reached
	// or its stream could not be had.
	ActionSkipped
	// ActionFailed: an error; Result.Err says which.
	ActionFailed
)

// String returns the action's name.
func (a Action) String() string {
	switch a {
	case ActionCreated:
		return "created"
	case ActionAsserted:
		return "asserted"
	case ActionMismatch:
		return "mismatch"
	case ActionMissing:
		return "missing"
	case ActionSkipped:
		return "skipped"
	case ActionFailed:
		return "failed"
	default:
		return "Action(" + strconv.Itoa(int(a)) + ")"
	}
}

// OK reports whether the resource is now as required: created or asserted.
func (a Action) OK() bool { return a == ActionCreated || a == ActionAsserted }

// Result is the outcome for one resource.
type Result struct {
	// Tenant is the tenant's ID.
	Tenant   string
	Resource Resource
	// Stream is the stream's name (stream, consumer and capture results).
	Stream string
	// Consumer and Binding are the consumer's name and its binding's ID
	// (consumer results).
	Consumer string
	Binding  string
	Action   Action
	// Mismatches lists every setting that differs (ActionMismatch, and an
	// ActionFailed consumer that fails the check right after creation):
	// Field is the broker's JSON name, Want and Got the values.
	Mismatches []jspull.Mismatch
	// Warnings lists stream settings that break nothing this package checks
	// but deserve an operator's look (a max_msg_size above a binding's
	// payload ceiling: such a message is stored but never delivered).
	Warnings []jspull.Mismatch
	// Err is why the resource failed or was skipped (wrapping ErrSkipped);
	// for ActionMismatch it is ErrMismatch.
	Err error
}

// name returns how a result names its resource.
func (r Result) name() string {
	switch r.Resource {
	case ResourceStream:
		return "stream " + r.Stream
	case ResourceConsumer:
		return "consumer " + r.Stream + "/" + r.Consumer + " (binding " + r.Binding + ")"
	case ResourceCapture:
		return "capture stream " + r.Stream
	default:
		return r.Resource.String()
	}
}

// Report is the outcome of Run: per tenant, one Result per capture stream,
// then per stream and per binding's consumer, in configuration order, and
// one for each tenant that could not be reached.
type Report struct {
	Results []Result
}

// OK reports whether every resource is as required.
func (r Report) OK() bool {
	for _, res := range r.Results {
		if !res.Action.OK() {
			return false
		}
	}
	return true
}

// Count returns how many results have action a.
func (r Report) Count(a Action) int {
	n := 0
	for _, res := range r.Results {
		if res.Action == a {
			n++
		}
	}
	return n
}

// WriteTo writes the report as text: one line per result, its mismatches,
// warnings and error indented below it, and a summary line.
func (r Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	for _, res := range r.Results {
		fmt.Fprintf(&b, "%s: %s: %s", res.Tenant, res.name(), res.Action)
		if res.Action == ActionMismatch {
			b.WriteString(", left unchanged")
		}
		b.WriteByte('\n')
		for _, m := range res.Mismatches {
			fmt.Fprintf(&b, "    %s: want %s, got %s\n", m.Field, m.Want, m.Got)
		}
		for _, m := range res.Warnings {
			fmt.Fprintf(&b, "    warning: %s: want %s, got %s\n", m.Field, m.Want, m.Got)
		}
		if res.Err != nil && res.Action != ActionMismatch {
			fmt.Fprintf(&b, "    error: %v\n", res.Err)
		}
	}
	b.WriteString("summary:")
	for a := ActionCreated; a <= ActionFailed; a++ {
		fmt.Fprintf(&b, " %d %s", r.Count(a), a)
		if a != ActionFailed {
			b.WriteByte(',')
		}
	}
	b.WriteByte('\n')
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}
