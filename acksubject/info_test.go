package acksubject_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
)

// validInfo returns a small valid Info of form f.
func validInfo(f acksubject.Form) acksubject.Info {
	info := acksubject.Info{Form: f, Stream: "S", Consumer: "C", Delivered: 2, StreamSeq: 3, ConsumerSeq: 4, Timestamp: 5, Pending: 6}
	if f == acksubject.FormV2 {
		info.AccountHash = globalAccountV2H
	}
	return info
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		info acksubject.Info
		want string
	}{
		{"classic", validInfo(acksubject.FormClassic), "$JS.ACK.S.C.2.3.4.5.6"},
		{"v2", validInfo(acksubject.FormV2), "$JS.ACK._.szMpdrwD.S.C.2.3.4.5.6"},
		{"zero timestamp and pending", acksubject.Info{Form: acksubject.FormClassic, Stream: "a@b", Consumer: "%d",
			Delivered: 1, StreamSeq: 1, ConsumerSeq: 1}, "$JS.ACK.a@b.%d.1.1.1.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.info.Append(nil)
			if err != nil {
				t.Fatalf("Append() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Append() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, tt.info.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
			appended, err := tt.info.Append([]byte("PUB "))
			if err != nil {
				t.Fatalf("Append() error = %v", err)
			}
			if diff := cmp.Diff("PUB "+tt.want, string(appended)); diff != "" {
				t.Errorf("Append() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	with := func(f acksubject.Form, edit func(*acksubject.Info)) acksubject.Info {
		info := validInfo(f)
		edit(&info)
		return info
	}
	classic, v2 := acksubject.FormClassic, acksubject.FormV2
	tests := []struct {
		name string
		info acksubject.Info
		want acksubject.SyntaxError
	}{
		{"zero Info", acksubject.Info{}, syntaxErr(-1, acksubject.FieldSubject, acksubject.RuleForm)},
		{"form out of range", with(classic, func(i *acksubject.Info) { i.Form = acksubject.FormV2 + 1 }), syntaxErr(-1, acksubject.FieldSubject, acksubject.RuleForm)},
		{"classic with account hash", with(classic, func(i *acksubject.Info) { i.AccountHash = globalAccountV2H }), syntaxErr(-1, acksubject.FieldAccountHash, acksubject.RuleAccountHash)},
		{"v2 without account hash", with(v2, func(i *acksubject.Info) { i.AccountHash = "" }), syntaxErr(3, acksubject.FieldAccountHash, acksubject.RuleEmpty)},
		{"v2 short account hash", with(v2, func(i *acksubject.Info) { i.AccountHash = "abc" }), syntaxErr(3, acksubject.FieldAccountHash, acksubject.RuleAccountHash)},
		{"empty stream", with(classic, func(i *acksubject.Info) { i.Stream = "" }), syntaxErr(2, acksubject.FieldStream, acksubject.RuleEmpty)},
		{"stream with dot", with(classic, func(i *acksubject.Info) { i.Stream = "a.b" }), syntaxErr(2, acksubject.FieldStream, acksubject.RuleNameByte)},
		{"v2 consumer wildcard", with(v2, func(i *acksubject.Info) { i.Consumer = "*" }), syntaxErr(5, acksubject.FieldConsumer, acksubject.RuleWildcard)},
		{"delivered zero", with(classic, func(i *acksubject.Info) { i.Delivered = 0 }), syntaxErr(4, acksubject.FieldDelivered, acksubject.RuleZero)},
		{"stream seq zero", with(classic, func(i *acksubject.Info) { i.StreamSeq = 0 }), syntaxErr(5, acksubject.FieldStreamSeq, acksubject.RuleZero)},
		{"v2 consumer seq zero", with(v2, func(i *acksubject.Info) { i.ConsumerSeq = 0 }), syntaxErr(8, acksubject.FieldConsumerSeq, acksubject.RuleZero)},
		{"negative timestamp", with(classic, func(i *acksubject.Info) { i.Timestamp = -1 }), syntaxErr(7, acksubject.FieldTimestamp, acksubject.RuleSign)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.info.Validate()
			var se *acksubject.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Validate() error = %v, want *SyntaxError", err)
			}
			if diff := cmp.Diff(tt.want, *se); diff != "" {
				t.Errorf("Validate() error (-want +got):\n%s", diff)
			}
			dst, err := tt.info.Append([]byte("x"))
			if !errors.Is(err, acksubject.ErrInvalid) {
				t.Errorf("Append() error = %v, want ErrInvalid", err)
			}
			if diff := cmp.Diff("x", string(dst)); diff != "" {
				t.Errorf("Append() changed dst on error (-want +got):\n%s", diff)
			}
			if _, err := acksubject.Parse(tt.info.String()); !errors.Is(err, acksubject.ErrInvalid) {
				t.Errorf("Parse(String()) of an invalid Info error = %v, want ErrInvalid", err)
			}
		})
	}
}
