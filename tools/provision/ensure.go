package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
)

// Renderings in stream mismatches and warnings.
const (
	wantCaptured   = "a subject capturing "
	wantAtMost     = "at most "
	gotNoSubjects  = "none"
	gotNoLimit     = "no limit"
	fieldSubjects  = "subjects"
	fieldMaxMsgSz  = "max_msg_size"
	streamNotFound = errCodeStreamNotFound
)

// streamState is what this package knows of an existing stream.
type streamState struct {
	subjects   []string
	maxMsgSize int64
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
		st = streamState{subjects: reply.Config.Subjects, maxMsgSize: reply.Config.MaxMsgSize}
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
	err = c.request(ctx, streamCreatePrefix+cfg.Name, body, func(r conn.Reply) error {
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
		st = streamState{subjects: reply.Config.Subjects, maxMsgSize: reply.Config.MaxMsgSize}
		return nil
	})
	return st, err
}

// ensureStream creates the stream of bindings when absent (ModeCreate) or
// checks the one that exists: it must capture every binding's filter
// subject. A max_msg_size above a binding's ceiling is a warning.
func (c *Client) ensureStream(ctx context.Context, res Result, bindings []pull.Binding, opts Options) Result {
	st, found, err := c.streamInfo(ctx, res.Stream)
	switch {
	case err != nil:
		res.Action, res.Err = ActionFailed, err
		return res
	case !found && opts.Mode == ModeAssert:
		res.Action = ActionMissing
		return res
	case !found:
		if st, err = c.createStream(ctx, DesiredStream(res.Stream, bindings, opts.Stream)); err != nil {
			res.Action, res.Err = ActionFailed, err
			return res
		}
		res.Action = ActionCreated
	default:
		res.Action = ActionAsserted
	}
	res.Mismatches, res.Warnings = checkStream(st, bindings)
	if len(res.Mismatches) > 0 {
		// A stream created just now that does not capture its subjects
		// would be the broker's doing; report it the same way.
		res.Action, res.Err = ActionMismatch, ErrMismatch
	}
	return res
}

// checkStream compares an existing stream with what the bindings need.
func checkStream(st streamState, bindings []pull.Binding) (mismatches, warnings []pull.Mismatch) {
	got := gotNoSubjects
	if len(st.subjects) > 0 {
		got = strings.Join(st.subjects, ",")
	}
	for _, b := range bindings {
		if !captures(st.subjects, b.FilterSubject) {
			mismatches = append(mismatches, pull.Mismatch{Field: fieldSubjects, Want: wantCaptured + b.FilterSubject, Got: got})
		}
	}
	for _, b := range bindings {
		if st.maxMsgSize <= 0 || st.maxMsgSize > int64(b.PayloadCeiling) {
			g := gotNoLimit
			if st.maxMsgSize > 0 {
				g = strconv.FormatInt(st.maxMsgSize, 10)
			}
			warnings = append(warnings, pull.Mismatch{
				Field: fieldMaxMsgSz,
				Want:  wantAtMost + strconv.Itoa(b.PayloadCeiling) + " (binding consumer " + b.Consumer + ")",
				Got:   g,
			})
		}
	}
	return mismatches, warnings
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
// the profile's configuration and action "create", so that a consumer
// created meanwhile with another configuration is refused, never updated.
func (c *Client) createConsumer(ctx context.Context, b pull.Binding) error {
	body, err := json.Marshal(consumerCreateRequest{Stream: b.Stream, Config: DesiredConsumer(b), Action: consumerActionCreate})
	if err != nil {
		return fmt.Errorf("%w: consumer config: %w", ErrInvalidOptions, err)
	}
	return c.request(ctx, consumerCreatePrefix+b.Stream+"."+b.Consumer, body, func(r conn.Reply) error {
		var reply consumerCreateReply
		if err := replyJSON(r, &reply); err != nil {
			return err
		}
		return reply.Error.err()
	})
}

// ensureConsumer checks the binding's consumer with pull's profile check
// (consumer info) and creates it when absent and create is true. An existing
// consumer is never changed: every difference is reported.
func (c *Client) ensureConsumer(ctx context.Context, res Result, b pull.Binding, create bool) Result {
	pc, err := pull.NewConsumer(b, pull.Options{OpTimeout: c.timeout})
	if err != nil {
		res.Action, res.Err = ActionFailed, err
		return res
	}
	err = c.inspect(ctx, pc)
	switch {
	case err == nil:
		res.Action = ActionAsserted
		return res
	case errors.Is(err, pull.ErrProfileMismatch):
		return mismatch(res, err)
	case errors.Is(err, pull.ErrConsumerNotFound) && create:
		// absent: created below
	case errors.Is(err, pull.ErrConsumerNotFound), errors.Is(err, pull.ErrStreamNotFound):
		res.Action = ActionMissing
		return res
	default:
		res.Action, res.Err = ActionFailed, err
		return res
	}

	createErr := c.createConsumer(ctx, b)
	var apiErr *APIError
	if createErr != nil && !(errors.As(createErr, &apiErr) && apiErr.ErrCode == errCodeConsumerExists) {
		res.Action, res.Err = ActionFailed, createErr
		return res
	}
	// Created, or created meanwhile by someone else with another
	// configuration (10148): the check says which.
	err = c.inspect(ctx, pc)
	switch {
	case err == nil && createErr == nil:
		res.Action = ActionCreated
	case err == nil:
		res.Action = ActionAsserted
	case errors.Is(err, pull.ErrProfileMismatch) && createErr != nil:
		return mismatch(res, err)
	case errors.Is(err, pull.ErrProfileMismatch):
		res = mismatch(res, err)
		res.Action, res.Err = ActionFailed, fmt.Errorf("%w: %w", ErrCreatedMismatch, err)
	default:
		res.Action, res.Err = ActionFailed, err
	}
	return res
}

// inspect runs pull's consumer-info check bounded by the client's timeout.
func (c *Client) inspect(ctx context.Context, pc *pull.Consumer) error {
	ictx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := pc.Inspect(ictx, c.conn)
	return err
}

// mismatch records a *pull.ProfileError on res.
func mismatch(res Result, err error) Result {
	var pe *pull.ProfileError
	if errors.As(err, &pe) {
		res.Mismatches = append([]pull.Mismatch(nil), pe.Mismatches...)
	}
	res.Action, res.Err = ActionMismatch, ErrMismatch
	return res
}
