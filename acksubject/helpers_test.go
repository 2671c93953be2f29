package acksubject_test

import (
	"errors"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
)

// fataler is what the invariant checks need from *testing.T and *rapid.T.
type fataler interface {
	Fatalf(format string, args ...any)
}

// Subjects captured from a live nats-server 2.14.6 (PROTOCOL.md §6, §10).
const (
	liveClassic      = "$JS.ACK.S.C.1.1.1.1796050789013316158.1"
	liveRedelivery   = "$JS.ACK.S.C.2.2.3.1796050789013316158.0"
	liveV2NoDomain   = "$JS.ACK._.szMpdrwD.S.C.1.1.1.1796050789013316158.3"
	globalAccount    = "$G"
	globalAccountV2H = "szMpdrwD"
)

// maxInfo returns the longest valid Info of form f: names of MaxNameLen
// bytes and every number at its largest value.
func maxInfo(f acksubject.Form) acksubject.Info {
	info := acksubject.Info{
		Form:        f,
		Stream:      strings.Repeat("s", acksubject.MaxNameLen),
		Consumer:    strings.Repeat("c", acksubject.MaxNameLen),
		Delivered:   1<<64 - 1,
		StreamSeq:   1<<64 - 1,
		ConsumerSeq: 1<<64 - 1,
		Timestamp:   1<<63 - 1,
		Pending:     1<<64 - 1,
	}
	if f == acksubject.FormV2 {
		info.AccountHash = globalAccountV2H
	}
	return info
}

// tokenCount returns the number of dot-separated tokens of s.
func tokenCount(s string) int { return strings.Count(s, ".") + 1 }

// checkSyntaxError requires err to be a *SyntaxError inside the enums,
// matched by ErrInvalid and its Rule, and returns it.
func checkSyntaxError(t fataler, err error) *acksubject.SyntaxError {
	var se *acksubject.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SyntaxError", err)
		return nil
	}
	if !errors.Is(err, acksubject.ErrInvalid) {
		t.Fatalf("error %v does not match ErrInvalid", err)
	}
	if !errors.Is(err, se.Rule) {
		t.Fatalf("error %v does not match its rule %v", err, se.Rule)
	}
	if se.Index < -1 || se.Index >= acksubject.V2Tokens {
		t.Fatalf("error index %d out of range", se.Index)
	}
	if se.Field < acksubject.FieldSubject || se.Field > acksubject.FieldPending {
		t.Fatalf("error field %d out of range", se.Field)
	}
	if se.Rule < acksubject.RuleTooLong || se.Rule > acksubject.RuleExtended {
		t.Fatalf("error rule %d out of range", se.Rule)
	}
	return se
}

// checkSubject checks every invariant Parse must keep for any input s:
// no panic; a refusal is a well-formed *SyntaxError; an accepted subject
// formats back to s byte for byte, re-parses to the same Info, validates,
// and its strict prefixes are refused except where the grammar itself makes
// them valid (see checkPrefixes).
func checkSubject(t fataler, s string) {
	info, err := acksubject.Parse(s)
	if err != nil {
		checkSyntaxError(t, err)
		if diff := cmp.Diff(acksubject.Info{}, info); diff != "" {
			t.Fatalf("Parse error with non-zero Info (-want +got):\n%s", diff)
		}
		return
	}
	if got := info.String(); got != s {
		t.Fatalf("String() = %q, want %q", got, s)
	}
	if err := info.Validate(); err != nil {
		t.Fatalf("Validate() of a parsed Info = %v", err)
	}
	again, err := acksubject.Parse(info.String())
	if err != nil {
		t.Fatalf("Parse(String()) = %v", err)
	}
	if diff := cmp.Diff(info, again); diff != "" {
		t.Fatalf("Parse(String()) differs (-want +got):\n%s", diff)
	}
	checkPrefixes(t, s, info)
}

// checkPrefixes requires every strict prefix of the valid subject s
// (parsed as info) to be refused, except the two kinds the grammar cannot
// tell from a whole subject, which must then parse to what they are:
//
//   - a cut inside the last token, leaving digits: the same subject with a
//     shorter pending count ("….10" -> "….1");
//   - a v2 subject cut to 9 tokens: a classic subject on stream "_" whose
//     consumer is the account hash, valid only when the stream and consumer
//     names happen to be decimal numbers.
func checkPrefixes(t fataler, s string, info acksubject.Info) {
	last := strings.LastIndexByte(s, '.')
	for k := range len(s) {
		p := s[:k]
		got, err := acksubject.Parse(p)
		if err != nil {
			checkSyntaxError(t, err)
			continue
		}
		switch {
		case k > last+1:
			want := info
			want.Pending, _ = strconv.ParseUint(p[last+1:], 10, 64)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("prefix %q cut in the last token parses to (-want +got):\n%s", p, diff)
			}
		case info.Form == acksubject.FormV2 && tokenCount(p) == acksubject.ClassicTokens:
			if got.Form != acksubject.FormClassic || got.Stream != acksubject.NoDomain || got.Consumer != info.AccountHash ||
				strconv.FormatUint(got.Delivered, 10) != info.Stream || strconv.FormatUint(got.StreamSeq, 10) != info.Consumer {
				t.Fatalf("9-token prefix %q of a v2 subject parses to %+v", p, got)
			}
		default:
			t.Fatalf("strict prefix %q of %q accepted as %+v", p, s, got)
		}
	}
}
