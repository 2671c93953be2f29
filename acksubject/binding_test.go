package acksubject_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
)

// mismatchField returns the Field of a *MismatchError, 0 for any other
// error.
func mismatchField(err error) acksubject.Field {
	var me *acksubject.MismatchError
	if errors.As(err, &me) {
		return me.Field
	}
	return 0
}

func TestBindingCheck(t *testing.T) {
	classic := validInfo(acksubject.FormClassic)
	v2 := validInfo(acksubject.FormV2)
	bound := acksubject.Binding{Stream: "S", Consumer: "C"}
	boundHash := acksubject.Binding{Stream: "S", Consumer: "C", AccountHash: globalAccountV2H}
	otherHash := acksubject.Binding{Stream: "S", Consumer: "C", AccountHash: acksubject.AccountHash("OTHER")}
	tests := []struct {
		name      string
		binding   acksubject.Binding
		info      acksubject.Info
		wantIs    error
		wantField acksubject.Field
	}{
		{"classic matches", bound, classic, nil, 0},
		{"v2 matches, hash unknown", bound, v2, nil, 0},
		{"v2 matches, hash known", boundHash, v2, nil, 0},
		{"classic carries no hash to compare", otherHash, classic, nil, 0},
		{"other stream", acksubject.Binding{Stream: "T", Consumer: "C"}, classic, acksubject.ErrMismatch, acksubject.FieldStream},
		{"stream differs in case", acksubject.Binding{Stream: "s", Consumer: "C"}, v2, acksubject.ErrMismatch, acksubject.FieldStream},
		{"other consumer", acksubject.Binding{Stream: "S", Consumer: "D"}, classic, acksubject.ErrMismatch, acksubject.FieldConsumer},
		{"other stream and consumer reports stream", acksubject.Binding{Stream: "T", Consumer: "D"}, v2, acksubject.ErrMismatch, acksubject.FieldStream},
		{"other account", otherHash, v2, acksubject.ErrMismatch, acksubject.FieldAccountHash},
		{"empty binding", acksubject.Binding{}, classic, acksubject.ErrMismatch, acksubject.FieldStream},
		{"invalid Info", bound, acksubject.Info{Form: acksubject.FormClassic, Stream: "S", Consumer: "C"}, acksubject.RuleZero, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.binding.Check(tt.info)
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("Check() error = %v, want %v", err, tt.wantIs)
			}
			if diff := cmp.Diff(tt.wantField, mismatchField(err)); diff != "" {
				t.Errorf("Check() mismatch field (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindingParse(t *testing.T) {
	bound := acksubject.Binding{Stream: "S", Consumer: "C", AccountHash: globalAccountV2H}
	tests := []struct {
		name    string
		subject string
		want    acksubject.Info
		wantErr error
	}{
		{"classic", liveClassic, acksubject.Info{Form: acksubject.FormClassic, Stream: "S", Consumer: "C",
			Delivered: 1, StreamSeq: 1, ConsumerSeq: 1, Timestamp: 1796050789013316158, Pending: 1}, nil},
		{"v2", liveV2NoDomain, acksubject.Info{Form: acksubject.FormV2, AccountHash: globalAccountV2H, Stream: "S", Consumer: "C",
			Delivered: 1, StreamSeq: 1, ConsumerSeq: 1, Timestamp: 1796050789013316158, Pending: 3}, nil},
		{"other consumer", "$JS.ACK.S.D.1.1.1.0.0", acksubject.Info{}, acksubject.ErrMismatch},
		{"other account", "$JS.ACK._.ki1IfA3O.S.C.1.1.1.0.0", acksubject.Info{}, acksubject.ErrMismatch},
		{"malformed", "$JS.ACK.S.C.0.1.1.0.0", acksubject.Info{}, acksubject.RuleZero},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bound.Parse(tt.subject)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Parse() error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() (-want +got):\n%s", diff)
			}
		})
	}
}
