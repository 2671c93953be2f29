package jspull

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
)

// TestErrorMessages checks every error's text: prefixed with the package
// name once, one line, and matching its sentinels.
func TestErrorMessages(t *testing.T) {
	_, ackErr := acksubject.Parse("x")
	tests := []struct {
		err  error
		text string
		is   []error
	}{
		{&BindingError{Field: "stream", Err: ValidName("")}, "pull: invalid binding stream: invalid stream or consumer name: empty", []error{ErrInvalidBinding, ErrInvalidName}},
		{&InfoError{Offset: 7, err: errJSONUnknown}, "pull: malformed consumer info at offset 7: too many unknown fields in one object", []error{ErrMalformedInfo}},
		{&APIError{Code: 503, ErrCode: 10039}, "pull: jetstream api error 503/10039", []error{ErrAPI}},
		{&ProfileError{Mismatches: []Mismatch{{Field: "max_bytes"}}}, "pull: consumer does not match the profile: max_bytes", []error{ErrProfileMismatch}},
		{&ReplyError{op: opNext, Err: ErrOverCeiling}, "pull: next: payload over the ceiling; connection must be closed", []error{ErrCloseConnection, ErrOverCeiling}},
		{&ReplyError{op: opNext, Err: fmt.Errorf("%w: %w", ErrBadAckSubject, ackErr)}, "", []error{ErrCloseConnection, ErrBadAckSubject, acksubject.ErrInvalid}},
		{&ReceiptError{Err: ErrNoResponders}, "pull: acknowledgement uncertain: no responders", []error{ErrNotVerified, ErrNoResponders}},
	}
	for _, tt := range tests {
		msg := tt.err.Error()
		t.Run(msg, func(t *testing.T) {
			if tt.text != "" && msg != tt.text {
				t.Errorf("Error() = %q, want %q", msg, tt.text)
			}
			if !strings.HasPrefix(msg, "pull: ") || strings.Count(msg, "pull: ") != 1 || strings.ContainsAny(msg, "\r\n") {
				t.Errorf("Error() = %q: want one \"pull: \" prefix and one line", msg)
			}
			for _, s := range tt.is {
				if !errors.Is(tt.err, s) {
					t.Errorf("%v does not match %v", tt.err, s)
				}
			}
		})
	}
}

func TestSentinelTexts(t *testing.T) {
	for _, err := range []error{
		ErrInvalidBinding, ErrInvalidName, ErrInvalidSubject, ErrInfoTooLarge, ErrMalformedInfo,
		ErrStreamNotFound, ErrConsumerNotFound, ErrAPI, ErrProfileMismatch, ErrNoResponders,
		ErrCloseConnection, ErrUnexpectedReply, ErrUnknownStatus, ErrBadAckSubject, ErrUnsupportedAck, ErrWrongConsumer,
		ErrOverCeiling, ErrInvalidNakDelay, ErrInvalidTermReason, ErrInvalidAction, ErrInvalidDelivery,
		ErrNotVerified,
	} {
		if msg := err.Error(); !strings.HasPrefix(msg, "pull: ") || msg != strings.ToLower(msg) {
			t.Errorf("sentinel %q: want a lowercase \"pull: \" prefix", msg)
		}
	}
}

// TestAPIErrorLeaderless: only the cluster's 503 says the asset's group has
// no leader; other codes, and the 503 error code of another field, do not.
func TestAPIErrorLeaderless(t *testing.T) {
	for _, tt := range []struct {
		e    APIError
		want bool
	}{
		{APIError{Code: 503, ErrCode: 10008}, true},
		{APIError{Code: 503}, true},
		{APIError{Code: 500, ErrCode: 10077}, false},
		{APIError{Code: 400, ErrCode: 503}, false},
	} {
		if got := tt.e.Leaderless(); got != tt.want {
			t.Errorf("%+v.Leaderless() = %v, want %v", tt.e, got, tt.want)
		}
	}
}

// TestReplyStatus: no status is nil; the broker's no-responders answer
// (503, nothing else) is the caller's noResponders; a 503 with a
// description and any other status are the caller's unexpected, with the
// code.
func TestReplyStatus(t *testing.T) {
	noResp := errors.New("no responders")
	unexpected := errors.New("unexpected")
	tests := []struct {
		name string
		rep  conn.Reply
		want error
		text string
	}{
		{"no status", conn.Reply{Payload: []byte("{}")}, nil, ""},
		{"no responders", conn.Reply{Status: 503}, noResp, "no responders"},
		{"503 with a description", conn.Reply{Status: 503, Description: []byte("x")}, unexpected, "unexpected: 503"},
		{"404", conn.Reply{Status: 404, Description: []byte("No Messages")}, unexpected, "unexpected: 404"},
	}
	for _, tt := range tests {
		err := ReplyStatus(&tt.rep, noResp, unexpected)
		if !errors.Is(err, tt.want) || tt.want == nil && err != nil || err != nil && err.Error() != tt.text {
			t.Errorf("%s: ReplyStatus = %v, want %v (%q)", tt.name, err, tt.want, tt.text)
		}
	}
}
