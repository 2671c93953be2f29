package acksubject_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		want    acksubject.Info
	}{
		{
			name:    "live classic first delivery",
			subject: liveClassic,
			want: acksubject.Info{Form: acksubject.FormClassic, Stream: "S", Consumer: "C",
				Delivered: 1, StreamSeq: 1, ConsumerSeq: 1, Timestamp: 1796050789013316158, Pending: 1},
		},
		{
			name:    "live classic redelivery",
			subject: liveRedelivery,
			want: acksubject.Info{Form: acksubject.FormClassic, Stream: "S", Consumer: "C",
				Delivered: 2, StreamSeq: 2, ConsumerSeq: 3, Timestamp: 1796050789013316158, Pending: 0},
		},
		{
			name:    "live v2 without domain",
			subject: liveV2NoDomain,
			want: acksubject.Info{Form: acksubject.FormV2, AccountHash: globalAccountV2H, Stream: "S", Consumer: "C",
				Delivered: 1, StreamSeq: 1, ConsumerSeq: 1, Timestamp: 1796050789013316158, Pending: 3},
		},
		{
			name:    "asset names with @ % ~ $ - _",
			subject: "$JS.ACK.orders@eu%1.~worker-$1_x.7.42.40.1700000000000000000.12",
			want: acksubject.Info{Form: acksubject.FormClassic, Stream: "orders@eu%1", Consumer: "~worker-$1_x",
				Delivered: 7, StreamSeq: 42, ConsumerSeq: 40, Timestamp: 1700000000000000000, Pending: 12},
		},
		{
			name:    "non-ASCII and control bytes the broker allows",
			subject: "$JS.ACK.流\x7f.c\v\x01\xff.1.1.1.1.1",
			want: acksubject.Info{Form: acksubject.FormClassic, Stream: "流\x7f", Consumer: "c\v\x01\xff",
				Delivered: 1, StreamSeq: 1, ConsumerSeq: 1, Timestamp: 1, Pending: 1},
		},
		{
			name:    "stream $JS and consumer ACK",
			subject: "$JS.ACK.$JS.ACK.1.1.1.0.0",
			want: acksubject.Info{Form: acksubject.FormClassic, Stream: "$JS", Consumer: "ACK",
				Delivered: 1, StreamSeq: 1, ConsumerSeq: 1},
		},
		{
			name:    "classic on a stream named _",
			subject: "$JS.ACK._.szMpdrwD.1.1.1.0.0",
			want: acksubject.Info{Form: acksubject.FormClassic, Stream: "_", Consumer: "szMpdrwD",
				Delivered: 1, StreamSeq: 1, ConsumerSeq: 1},
		},
		{
			name:    "timestamp and pending zero",
			subject: "$JS.ACK.S.C.1.1.1.0.0",
			want: acksubject.Info{Form: acksubject.FormClassic, Stream: "S", Consumer: "C",
				Delivered: 1, StreamSeq: 1, ConsumerSeq: 1},
		},
		{
			name:    "v2 largest numbers",
			subject: "$JS.ACK._.09AZaz09.S.C.18446744073709551615.18446744073709551615.18446744073709551615.9223372036854775807.18446744073709551615",
			want: acksubject.Info{Form: acksubject.FormV2, AccountHash: "09AZaz09", Stream: "S", Consumer: "C",
				Delivered: 1<<64 - 1, StreamSeq: 1<<64 - 1, ConsumerSeq: 1<<64 - 1, Timestamp: 1<<63 - 1, Pending: 1<<64 - 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := acksubject.Parse(tt.subject)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.subject, got.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

// syntaxErr abbreviates a wanted *SyntaxError.
func syntaxErr(index int, field acksubject.Field, rule acksubject.Rule) acksubject.SyntaxError {
	return acksubject.SyntaxError{Index: index, Field: field, Rule: rule}
}

func TestParseInvalid(t *testing.T) {
	const (
		fSubj  = acksubject.FieldSubject
		fPre   = acksubject.FieldPrefix
		fDom   = acksubject.FieldDomain
		fHash  = acksubject.FieldAccountHash
		fStr   = acksubject.FieldStream
		fCon   = acksubject.FieldConsumer
		fDel   = acksubject.FieldDelivered
		fSSeq  = acksubject.FieldStreamSeq
		fCSeq  = acksubject.FieldConsumerSeq
		fTS    = acksubject.FieldTimestamp
		fPend  = acksubject.FieldPending
		uOver  = "18446744073709551616"
		i64Ovr = "9223372036854775808"
	)
	tests := []struct {
		name    string
		subject string
		want    acksubject.SyntaxError
	}{
		{"empty subject", "", syntaxErr(0, fPre, acksubject.RuleEmpty)},
		{"only $JS", "$JS", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"only prefix", "$JS.ACK", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"prefix with dot", "$JS.ACK.", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"8 tokens", "$JS.ACK.S.C.1.1.1.0", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"10 tokens", "$JS.ACK._.szMpdrwD.S.C.1.1.1.0", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"12 tokens (future v2 extension)", "$JS.ACK._.szMpdrwD.S.C.1.1.1.0.0.x", syntaxErr(-1, fSubj, acksubject.RuleExtended)},
		{"12 tokens, a domain", "$JS.ACK.hub.szMpdrwD.S.C.1.1.1.0.0.x", syntaxErr(-1, fSubj, acksubject.RuleExtended)},
		{"12 tokens, no hash", "$JS.ACK._.szMpdrw.S.C.1.1.1.0.0.x", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"12 tokens, a hash of another alphabet", "$JS.ACK._.szMp-rwD.S.C.1.1.1.0.0.x", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"12 tokens, an empty domain", "$JS.ACK..szMpdrwD.S.C.1.1.1.0.0.x", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"many tokens", "$JS.ACK" + strings.Repeat(".1", 40), syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"trailing dot", liveClassic + ".", syntaxErr(-1, fSubj, acksubject.RuleTokenCount)},
		{"other first token", "$KV.ACK.S.C.1.1.1.0.0", syntaxErr(0, fPre, acksubject.RulePrefix)},
		{"lower-case prefix", "$js.ack.S.C.1.1.1.0.0", syntaxErr(0, fPre, acksubject.RulePrefix)},
		{"other second token", "$JS.FC.S.C.1.1.1.0.0", syntaxErr(1, fPre, acksubject.RulePrefix)},
		{"API subject", "$JS.API.CONSUMER.INFO.S.C", syntaxErr(1, fPre, acksubject.RulePrefix)},
		{"wildcard first token", "*.ACK.S.C.1.1.1.0.0", syntaxErr(0, fPre, acksubject.RuleWildcard)},
		{"inbox reply", "_INBOX.abc.1", syntaxErr(0, fPre, acksubject.RulePrefix)},
		{"leading dot", ".$JS.ACK.S.C.1.1.1.0", syntaxErr(0, fPre, acksubject.RuleEmpty)},
		{"v2 with a domain", "$JS.ACK.hub.szMpdrwD.S.C.1.1.1.0.0", syntaxErr(2, fDom, acksubject.RuleDomain)},
		{"v2 empty domain", "$JS.ACK..szMpdrwD.S.C.1.1.1.0.0", syntaxErr(2, fDom, acksubject.RuleEmpty)},
		{"v2 wildcard domain", "$JS.ACK.*.szMpdrwD.S.C.1.1.1.0.0", syntaxErr(2, fDom, acksubject.RuleWildcard)},
		{"v2 short hash", "$JS.ACK._.szMpdrw.S.C.1.1.1.0.0", syntaxErr(3, fHash, acksubject.RuleAccountHash)},
		{"v2 long hash", "$JS.ACK._.szMpdrwDD.S.C.1.1.1.0.0", syntaxErr(3, fHash, acksubject.RuleAccountHash)},
		{"v2 hash with -", "$JS.ACK._.szMp-rwD.S.C.1.1.1.0.0", syntaxErr(3, fHash, acksubject.RuleAccountHash)},
		{"v2 hash with wildcard", "$JS.ACK._.>.S.C.1.1.1.0.0", syntaxErr(3, fHash, acksubject.RuleWildcard)},
		{"empty stream", "$JS.ACK..C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleEmpty)},
		{"wildcard stream", "$JS.ACK.*.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleWildcard)},
		{"full wildcard consumer", "$JS.ACK.S.>.1.1.1.0.0", syntaxErr(3, fCon, acksubject.RuleWildcard)},
		{"stream with space", "$JS.ACK.S S.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"stream with tab", "$JS.ACK.S\t.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"stream with CR", "$JS.ACK.S\r.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"stream with LF", "$JS.ACK.S\n.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"stream with FF", "$JS.ACK.S\f.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"stream with NUL", "$JS.ACK.S\x00.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"stream with *", "$JS.ACK.S*.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"stream with >", "$JS.ACK.>S.C.1.1.1.0.0", syntaxErr(2, fStr, acksubject.RuleNameByte)},
		{"consumer with backslash", "$JS.ACK.S.C\\.1.1.1.0.0", syntaxErr(3, fCon, acksubject.RuleNameByte)},
		{"consumer with slash", "$JS.ACK.S.a/b.1.1.1.0.0", syntaxErr(3, fCon, acksubject.RuleNameByte)},
		{"v2 stream with slash", "$JS.ACK._.szMpdrwD./.C.1.1.1.0.0", syntaxErr(4, fStr, acksubject.RuleNameByte)},
		{"delivered zero", "$JS.ACK.S.C.0.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleZero)},
		{"stream seq zero", "$JS.ACK.S.C.1.0.1.0.0", syntaxErr(5, fSSeq, acksubject.RuleZero)},
		{"consumer seq zero", "$JS.ACK.S.C.1.1.0.0.0", syntaxErr(6, fCSeq, acksubject.RuleZero)},
		{"v2 delivered zero", "$JS.ACK._.szMpdrwD.S.C.0.1.1.0.0", syntaxErr(6, fDel, acksubject.RuleZero)},
		{"delivered empty", "$JS.ACK.S.C..1.1.0.0", syntaxErr(4, fDel, acksubject.RuleEmpty)},
		{"delivered wildcard", "$JS.ACK.S.C.*.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleWildcard)},
		{"delivered plus", "$JS.ACK.S.C.+1.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleSign)},
		{"delivered minus", "$JS.ACK.S.C.-1.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleSign)},
		{"delivered leading zero", "$JS.ACK.S.C.01.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleLeadingZero)},
		{"delivered double zero", "$JS.ACK.S.C.00.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleLeadingZero)},
		{"delivered hex", "$JS.ACK.S.C.0x1.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleNotDecimal)},
		{"delivered with space", "$JS.ACK.S.C. 1.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleNotDecimal)},
		{"delivered with trailing space", "$JS.ACK.S.C.1 .1.1.0.0", syntaxErr(4, fDel, acksubject.RuleNotDecimal)},
		{"delivered Arabic-Indic digit", "$JS.ACK.S.C.\u0661.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleNotDecimal)},
		{"delivered fullwidth digit", "$JS.ACK.S.C.\uff11.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleNotDecimal)},
		{"delivered exponent", "$JS.ACK.S.C.1e3.1.1.0.0", syntaxErr(4, fDel, acksubject.RuleNotDecimal)},
		{"delivered overflow", "$JS.ACK.S.C." + uOver + ".1.1.0.0", syntaxErr(4, fDel, acksubject.RuleOverflow)},
		{"stream seq overflow", "$JS.ACK.S.C.1." + uOver + ".1.0.0", syntaxErr(5, fSSeq, acksubject.RuleOverflow)},
		{"consumer seq overflow", "$JS.ACK.S.C.1.1." + uOver + ".0.0", syntaxErr(6, fCSeq, acksubject.RuleOverflow)},
		{"stream seq far overflow", "$JS.ACK.S.C.1.99999999999999999999.1.0.0", syntaxErr(5, fSSeq, acksubject.RuleOverflow)},
		{"timestamp negative", "$JS.ACK.S.C.1.1.1.-1.0", syntaxErr(7, fTS, acksubject.RuleSign)},
		{"timestamp overflow int64", "$JS.ACK.S.C.1.1.1." + i64Ovr + ".0", syntaxErr(7, fTS, acksubject.RuleOverflow)},
		{"timestamp leading zero", "$JS.ACK.S.C.1.1.1.00.0", syntaxErr(7, fTS, acksubject.RuleLeadingZero)},
		{"pending leading zero", "$JS.ACK.S.C.1.1.1.0.01", syntaxErr(8, fPend, acksubject.RuleLeadingZero)},
		{"pending overflow", "$JS.ACK.S.C.1.1.1.0." + uOver, syntaxErr(8, fPend, acksubject.RuleOverflow)},
		{"pending empty", "$JS.ACK.S.C.1.1.1.0.", syntaxErr(8, fPend, acksubject.RuleEmpty)},
		{"pending with CRLF", "$JS.ACK.S.C.1.1.1.0.0\r\n", syntaxErr(8, fPend, acksubject.RuleNotDecimal)},
		{"v2 pending overflow", "$JS.ACK._.szMpdrwD.S.C.1.1.1.0." + uOver, syntaxErr(10, fPend, acksubject.RuleOverflow)},
		{"first fault wins", "$JS.ACK.S.C.0.01.-1.x.0", syntaxErr(4, fDel, acksubject.RuleZero)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := acksubject.Parse(tt.subject)
			if !errors.Is(err, acksubject.ErrInvalid) {
				t.Fatalf("Parse() error = %v, want ErrInvalid", err)
			}
			if !errors.Is(err, tt.want.Rule) {
				t.Errorf("Parse() error = %v, want rule %v", err, tt.want.Rule)
			}
			var se *acksubject.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse() error = %v, want *SyntaxError", err)
			}
			if diff := cmp.Diff(tt.want, *se); diff != "" {
				t.Errorf("Parse() error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(acksubject.Info{}, got); diff != "" {
				t.Errorf("Parse() Info on error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseLimits checks each limit at its value (accepted) and one past it
// (refused with its rule).
func TestParseLimits(t *testing.T) {
	maxV2 := maxInfo(acksubject.FormV2).String()
	longName := strings.Repeat("n", acksubject.MaxNameLen)
	tests := []struct {
		name    string
		subject string
		want    *acksubject.SyntaxError
	}{
		{"subject at MaxLen", maxV2, nil},
		{"subject at MaxLen+1", maxV2 + "9", &acksubject.SyntaxError{Index: -1, Field: acksubject.FieldSubject, Rule: acksubject.RuleTooLong}},
		{"stream at MaxNameLen", "$JS.ACK." + longName + ".C.1.1.1.0.0", nil},
		{"stream at MaxNameLen+1", "$JS.ACK." + longName + "n.C.1.1.1.0.0", &acksubject.SyntaxError{Index: 2, Field: acksubject.FieldStream, Rule: acksubject.RuleNameTooLong}},
		{"consumer at MaxNameLen", "$JS.ACK.S." + longName + ".1.1.1.0.0", nil},
		{"consumer at MaxNameLen+1", "$JS.ACK.S." + longName + "n.1.1.1.0.0", &acksubject.SyntaxError{Index: 3, Field: acksubject.FieldConsumer, Rule: acksubject.RuleNameTooLong}},
		{"account hash at accountHashLen", "$JS.ACK._.aaaaaaaa.S.C.1.1.1.0.0", nil},
		{"account hash at accountHashLen+1", "$JS.ACK._.aaaaaaaaa.S.C.1.1.1.0.0", &acksubject.SyntaxError{Index: 3, Field: acksubject.FieldAccountHash, Rule: acksubject.RuleAccountHash}},
		{"delivered at MaxUint64", "$JS.ACK.S.C.18446744073709551615.1.1.0.0", nil},
		{"delivered at MaxUint64+1", "$JS.ACK.S.C.18446744073709551616.1.1.0.0", &acksubject.SyntaxError{Index: 4, Field: acksubject.FieldDelivered, Rule: acksubject.RuleOverflow}},
		{"timestamp at MaxInt64", "$JS.ACK.S.C.1.1.1.9223372036854775807.0", nil},
		{"timestamp at MaxInt64+1", "$JS.ACK.S.C.1.1.1.9223372036854775808.0", &acksubject.SyntaxError{Index: 7, Field: acksubject.FieldTimestamp, Rule: acksubject.RuleOverflow}},
		{"pending at MaxUint64", "$JS.ACK.S.C.1.1.1.0.18446744073709551615", nil},
		{"pending at MaxUint64+1", "$JS.ACK.S.C.1.1.1.0.18446744073709551616", &acksubject.SyntaxError{Index: 8, Field: acksubject.FieldPending, Rule: acksubject.RuleOverflow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := acksubject.Parse(tt.subject)
			var got *acksubject.SyntaxError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("Parse() error = %v, want *SyntaxError", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxLenIsTheLongestSubject(t *testing.T) {
	got := []int{len(maxInfo(acksubject.FormClassic).String()), len(maxInfo(acksubject.FormV2).String())}
	want := []int{acksubject.MaxLen - len(acksubject.NoDomain) - 1 - acksubject.AccountHashLen - 1, acksubject.MaxLen}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("longest subject lengths (-want +got):\n%s", diff)
	}
}

func TestParseAllocs(t *testing.T) {
	binding := acksubject.Binding{Stream: "S", Consumer: "C", AccountHash: globalAccountV2H}
	buf := make([]byte, 0, acksubject.MaxLen)
	longest := maxInfo(acksubject.FormV2).String()
	info, err := acksubject.Parse(liveV2NoDomain)
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	v2Bytes, classicBytes := []byte(liveV2NoDomain), []byte(liveClassic)
	classic, err := acksubject.Parse(liveClassic)
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	classicBinding := acksubject.Binding{Stream: classic.Stream, Consumer: classic.Consumer}
	if _, err := binding.ParseBytes(v2Bytes); err != nil {
		t.Fatalf("Binding.ParseBytes v2: %v", err)
	}
	if _, err := classicBinding.ParseBytes(classicBytes); err != nil {
		t.Fatalf("Binding.ParseBytes classic: %v", err)
	}
	tests := []struct {
		name string
		fn   func()
	}{
		{"Parse classic", func() { _, _ = acksubject.Parse(liveClassic) }},
		{"Parse v2", func() { _, _ = acksubject.Parse(liveV2NoDomain) }},
		{"Parse longest", func() { _, _ = acksubject.Parse(longest) }},
		{"Binding.Parse v2", func() { _, _ = binding.Parse(liveV2NoDomain) }},
		{"Binding.ParseBytes v2", func() { _, _ = binding.ParseBytes(v2Bytes) }},
		{"Binding.ParseBytes classic", func() { _, _ = classicBinding.ParseBytes(classicBytes) }},
		{"Binding.Check", func() { _ = binding.Check(info) }},
		{"Append into room", func() { _, _ = info.Append(buf[:0]) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(100, tt.fn); got != 0 {
				t.Errorf("allocations per run = %v, want 0", got)
			}
		})
	}
}

// TestErrorsCarryNoSubjectBytes checks that no error text holds the
// failing token or any other part of the subject.
func TestErrorsCarryNoSubjectBytes(t *testing.T) {
	const stream, consumer = "SecretStreamQ", "SecretConsumerZ"
	subjects := []string{
		"$JS.ACK." + stream + "." + consumer + ".0.1.1.0.0",
		"$JS.ACK." + stream + "." + consumer + "\\.1.1.1.0.0",
		"$JS.ACK.SecretDomainW.szMpdrwD." + stream + "." + consumer + ".1.1.1.0.0",
		"$JS.ACK." + stream + "." + consumer + ".1.1.1.0.SecretPendingV",
	}
	secrets := []string{stream, consumer, "SecretDomainW", "SecretPendingV", "Secret"}
	for i, s := range subjects {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			_, err := acksubject.Parse(s)
			if err == nil {
				t.Fatal("Parse() accepted an invalid subject")
			}
			var leaked []string
			for _, secret := range secrets {
				if strings.Contains(err.Error(), secret) {
					leaked = append(leaked, secret)
				}
			}
			if diff := cmp.Diff([]string(nil), leaked); diff != "" {
				t.Errorf("error text leaks subject bytes (-want +got):\n%s", diff)
			}
		})
	}
}
