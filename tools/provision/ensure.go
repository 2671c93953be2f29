package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// Renderings in stream mismatches and warnings.
const (
	wantCaptured   = "a subject capturing "
	wantAtMost     = "at most "
	gotNoSubjects  = "none"
	gotNoLimit     = "no limit"
	fieldSubjects  = "subjects"
	fieldMaxMsgSz  = "max_msg_size"
	fieldReplicas  = "num_replicas"
	fieldRePublish = "republish"
	gotNone        = "none"
	streamNotFound = jspull.CodeStreamNotFound
)

// streamState is what this package knows of an existing stream.
type streamState struct {
	subjects   []string
	maxMsgSize int64
	// replicas is the stream's num_replicas (the broker reports 1 for a
	// stream created without one).
	replicas int
	// republish is the stream's republish setting, nil when it has none.
	republish *RePublish
}

// streamInfo requests $JS.API.STREAM.INFO.<name>: found false for a stream
// that does not exist.
func (c *Client) streamInfo(ctx context.Context, name string) (streamState, bool, error) {
	var st streamState
	found := false
	err := c.request(ctx, streamInfoPrefix+name, nil, func(r conn.Reply) error {
		var reply streamInfoReply
		if err := replyJSON(r, &reply); err != nil {
			return err
		}
		if reply.Error != nil {
			if reply.Error.ErrCode == streamNotFound {
				return nil
			}
			return reply.Error.err()
		}
		if reply.Config == nil || reply.Config.Name != name {
			return fmt.Errorf("%w: stream info without the stream's config", ErrMalformedReply)
		}
		found = true
		st = stateOf(&reply)
		return nil
	})
	return st, found, err
}

// createStream requests $JS.API.STREAM.CREATE.<name> with cfg.
func (c *Client) createStream(ctx context.Context, cfg StreamConfig) (streamState, error) {
	body, err := json.Marshal(cfg)
	if err != nil {
		return streamState{}, fmt.Errorf("%w: stream config: %w", ErrInvalidOptions, err)
	}
	var st streamState
	err = c.requestWithin(ctx, c.createTimeout(cfg.Replicas), streamCreatePrefix+cfg.Name, body, func(r conn.Reply) error {
		var reply streamInfoReply
		if err := replyJSON(r, &reply); err != nil {
			return err
		}
		if err := reply.Error.err(); err != nil {
			return err
		}
		if reply.Config == nil || reply.Config.Name != cfg.Name {
			return fmt.Errorf("%w: stream create reply without the stream's config", ErrMalformedReply)
		}
		st = stateOf(&reply)
		return nil
	})
	return st, err
}

// stateOf returns what this package keeps of a stream info or create
// reply that holds the stream's config.
func stateOf(reply *streamInfoReply) streamState {
	return streamState{
		subjects: reply.Config.Subjects, maxMsgSize: reply.Config.MaxMsgSize,
		replicas: reply.Config.Replicas, republish: reply.Config.RePublish,
	}
}

// ensureStream creates the stream of bindings when absent (ModeCreate) or
// checks the one that exists: it must capture every binding's filter
// subject and have the replica count of opts, and, with
// opts.Capture.Copies, the republish setting RePublishOf(stream). A
// max_msg_size above a binding's ceiling is a warning. It also returns
// what it knows of the stream.
func (c *Client) ensureStream(ctx context.Context, res Result, bindings []jspull.Binding, opts Options) (Result, streamState) {
	st, found, err := c.streamInfo(ctx, res.Stream)
	switch {
	case err != nil:
		res.Action, res.Err = ActionFailed, err
		return res, st
	case !found && opts.Mode == ModeAssert:
		res.Action = ActionMissing
		return res, st
	case !found:
		desired := DesiredStream(res.Stream, bindings, opts.Stream)
		if opts.Capture.Copies {
			rp := RePublishOf(res.Stream)
			desired.RePublish = &rp
		}
		if st, err = c.createStream(ctx, desired); err != nil {
			res.Action, res.Err = ActionFailed, err
			return res, st
		}
		res.Action = ActionCreated
	default:
		res.Action = ActionAsserted
	}
	res.Mismatches, res.Warnings = checkStream(st, bindings, opts.Stream.replicas())
	if opts.Capture.Copies {
		res.Mismatches = append(res.Mismatches, checkRePublish(st, RePublishOf(res.Stream))...)
	}
	if len(res.Mismatches) > 0 {
		// A stream created just now that does not capture its subjects
		// would be the broker's doing; report it the same way.
		res.Action, res.Err = ActionMismatch, ErrMismatch
	}
	return res, st
}

// checkStream compares an existing stream with what the bindings need and
// with the replica count wanted.
func checkStream(st streamState, bindings []jspull.Binding, replicas int) (mismatches, warnings []jspull.Mismatch) {
	got := gotNoSubjects
	if len(st.subjects) > 0 {
		got = strings.Join(st.subjects, ",")
	}
	for _, b := range bindings {
		if !captures(st.subjects, b.FilterSubject) {
			mismatches = append(mismatches, jspull.Mismatch{Field: fieldSubjects, Want: wantCaptured + b.FilterSubject, Got: got})
		}
	}
	if st.replicas != replicas {
		mismatches = append(mismatches, jspull.Mismatch{Field: fieldReplicas, Want: strconv.Itoa(replicas), Got: strconv.Itoa(st.replicas)})
	}
	for _, b := range bindings {
		if st.maxMsgSize <= 0 || st.maxMsgSize > int64(b.PayloadCeiling) {
			g := gotNoLimit
			if st.maxMsgSize > 0 {
				g = strconv.FormatInt(st.maxMsgSize, 10)
			}
			warnings = append(warnings, jspull.Mismatch{
				Field: fieldMaxMsgSz,
				Want:  wantAtMost + strconv.Itoa(b.PayloadCeiling) + " (binding consumer " + b.Consumer + ")",
				Got:   g,
			})
		}
	}
	return mismatches, warnings
}

// checkRePublish compares a stream's republish setting with want.
func checkRePublish(st streamState, want RePublish) []jspull.Mismatch {
	if st.republish != nil && *st.republish == want {
		return nil
	}
	got := gotNone
	if st.republish != nil {
		got = renderRePublish(*st.republish)
	}
	return []jspull.Mismatch{{Field: fieldRePublish, Want: renderRePublish(want), Got: got}}
}

// renderRePublish writes a republish setting as a mismatch shows it.
func renderRePublish(r RePublish) string {
	return "src " + r.Source + " dest " + r.Destination
}

// ensureCapture creates the capture stream desired when absent (mode
// ModeCreate) or checks the one that exists: it must capture each of
// desired's subjects and have its replica count. Its limits are the
// operator's to tune and are not compared; it is never changed.
func (c *Client) ensureCapture(ctx context.Context, res Result, desired StreamConfig, mode Mode) Result {
	st, found, err := c.streamInfo(ctx, desired.Name)
	switch {
	case err != nil:
		res.Action, res.Err = ActionFailed, err
		return res
	case !found && mode == ModeAssert:
		res.Action = ActionMissing
		return res
	case !found:
		if st, err = c.createStream(ctx, desired); err != nil {
			res.Action, res.Err = ActionFailed, err
			return res
		}
		res.Action = ActionCreated
	default:
		res.Action = ActionAsserted
	}
	res.Mismatches = checkCapture(st, desired)
	if len(res.Mismatches) > 0 {
		res.Action, res.Err = ActionMismatch, ErrMismatch
	}
	return res
}

// checkCapture compares an existing capture stream with desired: each of
// desired's subjects (which end in ">") must be captured by one of the
// stream's, and the replica counts must match.
func checkCapture(st streamState, desired StreamConfig) []jspull.Mismatch {
	got := gotNoSubjects
	if len(st.subjects) > 0 {
		got = strings.Join(st.subjects, ",")
	}
	var out []jspull.Mismatch
	for _, s := range desired.Subjects {
		if !slices.ContainsFunc(st.subjects, func(p string) bool { return subsetOf(s, p) }) {
			out = append(out, jspull.Mismatch{Field: fieldSubjects, Want: wantCaptured + s, Got: got})
		}
	}
	if st.replicas != desired.Replicas {
		out = append(out, jspull.Mismatch{Field: fieldReplicas, Want: strconv.Itoa(desired.Replicas), Got: strconv.Itoa(st.replicas)})
	}
	return out
}

// subsetOf reports whether every subject sub matches is matched by
// pattern (both may hold wildcards), by the broker's rules: a pattern's
// ">" takes one or more remaining tokens of any kind, its "*" one token
// other than ">", and a literal token only itself.
func subsetOf(sub, pattern string) bool {
	for {
		ptok, prest, pmore := strings.Cut(pattern, ".")
		stok, srest, smore := strings.Cut(sub, ".")
		switch {
		case ptok == ">" && !pmore:
			return stok != ""
		case stok == ">" && !smore:
			return false
		case ptok == "*":
			// matches stok, a literal or "*"
		case ptok != stok || stok == "*":
			return false
		}
		if !pmore || !smore {
			return pmore == smore
		}
		pattern, sub = prest, srest
	}
}

// captures reports whether one of the stream subjects (which may hold
// wildcards) matches the literal subject.
func captures(patterns []string, subject string) bool {
	for _, p := range patterns {
		if subjectMatches(p, subject) {
			return true
		}
	}
	return false
}

// subjectMatches reports whether the literal subject matches pattern by
// the broker's rules: a token "*" matches any one token, a last token ">"
// matches one or more tokens.
func subjectMatches(pattern, subject string) bool {
	for {
		ptok, prest, pmore := strings.Cut(pattern, ".")
		stok, srest, smore := strings.Cut(subject, ".")
		switch {
		case ptok == ">" && !pmore:
			return stok != ""
		case ptok != "*" && ptok != stok:
			return false
		case !pmore || !smore:
			return pmore == smore
		}
		pattern, subject = prest, srest
	}
}

// createConsumer requests $JS.API.CONSUMER.CREATE.<stream>.<consumer> with
// the profile's configuration, the replica count and action "create", so
// that a consumer created meanwhile with another configuration is refused,
// never updated. A replica count of 0 is the stream's, streamReplicas,
// which bounds the wait for the reply (createTimeout).
func (c *Client) createConsumer(ctx context.Context, b jspull.Binding, replicas, streamReplicas int) error {
	cfg := DesiredConsumer(b)
	cfg.Replicas = replicas
	body, err := json.Marshal(consumerCreateRequest{Stream: b.Stream, Config: cfg, Action: consumerActionCreate})
	if err != nil {
		return fmt.Errorf("%w: consumer config: %w", ErrInvalidOptions, err)
	}
	n := replicas
	if n == 0 {
		n = streamReplicas
	}
	return c.requestWithin(ctx, c.createTimeout(n), consumerCreatePrefix+b.Stream+"."+b.Consumer, body, func(r conn.Reply) error {
		var reply consumerCreateReply
		if err := replyJSON(r, &reply); err != nil {
			return err
		}
		return reply.Error.err()
	})
}

// ensureConsumer checks the binding's consumer with jspull's profile check
// (consumer info) and its replica count (want; a num_replicas of 0 is the
// stream's, streamReplicas), and creates it when absent and create is
// true. An existing consumer is never changed: every difference is
// reported.
func (c *Client) ensureConsumer(ctx context.Context, res Result, b jspull.Binding, create bool, want, streamReplicas int) Result {
	pc, err := jspull.NewConsumer(b, jspull.Options{OpTimeout: c.timeout})
	if err != nil {
		res.Action, res.Err = ActionFailed, err
		return res
	}
	ms, err := c.checkConsumer(ctx, pc, want, streamReplicas)
	switch {
	case err == nil && len(ms) == 0:
		res.Action = ActionAsserted
		return res
	case err == nil:
		return mismatch(res, ms)
	case errors.Is(err, jspull.ErrConsumerNotFound) && create:
		// absent: created below
	case errors.Is(err, jspull.ErrConsumerNotFound), errors.Is(err, jspull.ErrStreamNotFound):
		res.Action = ActionMissing
		return res
	default:
		res.Action, res.Err = ActionFailed, err
		return res
	}

	createErr := c.createConsumer(ctx, b, want, streamReplicas)
	var apiErr *APIError
	if createErr != nil && !(errors.As(createErr, &apiErr) && apiErr.ErrCode == errCodeConsumerExists) {
		res.Action, res.Err = ActionFailed, createErr
		return res
	}
	// Created, or created meanwhile by someone else with another
	// configuration (10148): the check says which.
	ms, err = c.checkConsumer(ctx, pc, want, streamReplicas)
	switch {
	case err == nil && len(ms) == 0 && createErr == nil:
		res.Action = ActionCreated
	case err == nil && len(ms) == 0:
		res.Action = ActionAsserted
	case err == nil && createErr != nil:
		return mismatch(res, ms)
	case err == nil:
		res = mismatch(res, ms)
		res.Action, res.Err = ActionFailed, ErrCreatedMismatch
	default:
		res.Action, res.Err = ActionFailed, err
	}
	return res
}

// checkConsumer runs jspull's profile check on the consumer's info and then
// compares the consumer's replica count with want. It returns every
// difference (the profile's first), or the error that kept it from
// checking.
func (c *Client) checkConsumer(ctx context.Context, pc *jspull.Consumer, want, streamReplicas int) ([]jspull.Mismatch, error) {
	err := c.inspect(ctx, pc)
	var ms []jspull.Mismatch
	var pe *jspull.ProfileError
	switch {
	case errors.As(err, &pe):
		ms = append(ms, pe.Mismatches...)
	case err != nil:
		return nil, err
	}
	got, err := c.consumerReplicas(ctx, pc.Binding(), streamReplicas)
	if err != nil {
		return nil, err
	}
	if got != want {
		ms = append(ms, jspull.Mismatch{Field: fieldReplicas, Want: strconv.Itoa(want), Got: strconv.Itoa(got)})
	}
	return ms, nil
}

// consumerReplicas requests the consumer's info
// ($JS.API.CONSUMER.INFO.<stream>.<consumer>) and returns its replica
// count (see replicasOf). jspull's profile check accepts any count, so it
// is read here, from a reply of its own.
func (c *Client) consumerReplicas(ctx context.Context, b jspull.Binding, streamReplicas int) (int, error) {
	n := 0
	err := c.request(ctx, consumerInfoPrefix+b.Stream+"."+b.Consumer, nil, func(r conn.Reply) error {
		var reply struct {
			Error *apiErrorJSON `json:"error"`
		}
		if err := replyJSON(r, &reply); err != nil {
			return err
		}
		if err := reply.Error.err(); err != nil {
			return err
		}
		var err error
		n, err = replicasOf(r.Payload, streamReplicas)
		return err
	})
	return n, err
}

// replicasOf returns a consumer's replica count from its info reply:
// config.num_replicas, or when it is 0 (or absent) the stream's, as the
// broker counts it (nats-server 2.14.6 consumer.go, ConsumerConfig.replicas).
func replicasOf(info []byte, streamReplicas int) (int, error) {
	var reply struct {
		Config *struct {
			Replicas int `json:"num_replicas"`
		} `json:"config"`
	}
	if err := json.Unmarshal(info, &reply); err != nil || reply.Config == nil || reply.Config.Replicas < 0 {
		return 0, fmt.Errorf("%w: consumer info without a replica count", ErrMalformedReply)
	}
	if reply.Config.Replicas == 0 {
		return streamReplicas, nil
	}
	return reply.Config.Replicas, nil
}

// inspect runs jspull's consumer-info check bounded by the client's timeout.
func (c *Client) inspect(ctx context.Context, pc *jspull.Consumer) error {
	ictx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := pc.Inspect(ictx, c.conn)
	b := pc.Binding()
	return denied(err, consumerInfoPrefix+b.Stream+"."+b.Consumer)
}

// mismatch records the consumer's differences on res.
func mismatch(res Result, ms []jspull.Mismatch) Result {
	res.Mismatches = append([]jspull.Mismatch(nil), ms...)
	res.Action, res.Err = ActionMismatch, ErrMismatch
	return res
}
