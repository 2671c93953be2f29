package refhost_test

import (
	stdcmp "cmp"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// valueOpts compares decoded values: NaN equals NaN.
func valueOpts() cmp.Option { return cmpopts.EquateNaNs() }

// mustType parses a type text.
func mustType(t testing.TB, s string) refhost.Type {
	t.Helper()
	typ, err := refhost.ParseType(s)
	if err != nil {
		t.Fatalf("ParseType(%q): %v", s, err)
	}
	return typ
}

// mustSig builds a signature from type texts.
func mustSig(t testing.TB, types ...string) *refhost.Signature {
	t.Helper()
	params := make([]refhost.Type, len(types))
	for i, s := range types {
		params[i] = mustType(t, s)
	}
	sig, err := refhost.NewSignature(params...)
	if err != nil {
		t.Fatalf("NewSignature(%q): %v", types, err)
	}
	return sig
}

// accept is a payload element that decodes, and its canonical encoding.
type accept struct {
	name  string
	typ   string // the one parameter's type
	in    string // the element; the payload is "[" + in + "]"
	want  any
	canon string // the canonical element; empty means in
}

// refuse is a payload element that does not decode.
type refuse struct {
	name string
	typ  string
	in   string
	rule refhost.Rule
	path string
	at   string // the fault is at the first occurrence of at in in + "]"; empty: at 0
	// whole: the fault is the array's (Arg -1), not the argument's.
	whole bool
}

// argIndex is the Arg a refuse case expects.
func (tc refuse) argIndex() int {
	if tc.whole {
		return -1
	}
	return 0
}

// runAccept decodes each case as the only argument and checks the value
// and the canonical re-encoding.
func runAccept(t *testing.T, cases []accept) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sig := mustSig(t, tc.typ)
			got, err := sig.Decode([]byte("[" + tc.in + "]"))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff([]any{tc.want}, got, valueOpts()); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
			enc, err := sig.Append(nil, got)
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			canon := stdcmp.Or(tc.canon, tc.in)
			if diff := cmp.Diff("["+canon+"]", string(enc)); diff != "" {
				t.Errorf("canonical encoding (-want +got):\n%s", diff)
			}
		})
	}
}

// runRefuse decodes each case as the only argument and checks the error,
// path and offset included.
func runRefuse(t *testing.T, cases []refuse) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sig := mustSig(t, tc.typ)
			_, err := sig.Decode([]byte("[" + tc.in + "]"))
			want := &refhost.ArgumentError{Arg: tc.argIndex(), Path: tc.path, Offset: 1 + strings.Index(tc.in+"]", tc.at), Rule: tc.rule}
			checkArgErr(t, want, err)
		})
	}
}

// checkArgErr checks that err is want, and matches ErrInvalidArguments and
// want's Rule.
func checkArgErr(t *testing.T, want *refhost.ArgumentError, err error) {
	t.Helper()
	var got *refhost.ArgumentError
	if !errors.As(err, &got) {
		t.Fatalf("error %v is not an *ArgumentError", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if !errors.Is(err, refhost.ErrInvalidArguments) || !errors.Is(err, want.Rule) {
		t.Errorf("errors.Is(%v, ErrInvalidArguments / %v) = false", err, want.Rule)
	}
}
