package acksubject_test

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
	"pgregory.net/rapid"
)

// nameBytes returns every byte the asset-name rule (plus NUL) allows.
func nameBytes() []byte {
	var out []byte
	for c := range 256 {
		if !strings.ContainsRune(" \t\r\n\f.*>\\/\x00", rune(c)) {
			out = append(out, byte(c))
		}
	}
	return out
}

// genName draws a valid stream or consumer name: friendly, arbitrary-byte,
// all-digit (to meet the v2/classic ambiguity) or of the longest length.
func genName() *rapid.Generator[string] {
	friendly := []byte("abcXYZ019_-@%~$")
	all := nameBytes()
	digits := []byte("0123456789")
	of := func(alphabet []byte, minLen, maxLen int) *rapid.Generator[string] {
		return rapid.Map(rapid.SliceOfN(rapid.SampledFrom(alphabet), minLen, maxLen), func(b []byte) string { return string(b) })
	}
	return rapid.OneOf(
		of(friendly, 1, 12),
		of(all, 1, 24),
		of(digits, 1, 3),
		of(all, acksubject.MaxNameLen, acksubject.MaxNameLen),
	)
}

// genHash draws a valid account hash.
func genHash() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Map(rapid.String(), acksubject.AccountHash),
		rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")),
			acksubject.AccountHashLen, acksubject.AccountHashLen), func(b []byte) string { return string(b) }),
	)
}

// genForm draws a form.
func genForm() *rapid.Generator[acksubject.Form] {
	return rapid.SampledFrom([]acksubject.Form{acksubject.FormClassic, acksubject.FormV2})
}

// genInfo draws a valid Info of either form.
func genInfo() *rapid.Generator[acksubject.Info] {
	return rapid.Custom(func(t *rapid.T) acksubject.Info {
		info := acksubject.Info{
			Form:        genForm().Draw(t, "form"),
			Stream:      genName().Draw(t, "stream"),
			Consumer:    genName().Draw(t, "consumer"),
			Delivered:   rapid.Uint64Min(1).Draw(t, "delivered"),
			StreamSeq:   rapid.Uint64Min(1).Draw(t, "streamSeq"),
			ConsumerSeq: rapid.Uint64Min(1).Draw(t, "consumerSeq"),
			Timestamp:   rapid.Int64Min(0).Draw(t, "timestamp"),
			Pending:     rapid.Uint64().Draw(t, "pending"),
		}
		if info.Form == acksubject.FormV2 {
			info.AccountHash = genHash().Draw(t, "accountHash")
		}
		return info
	})
}

// kind is what a token position holds.
type kind int

const (
	kindLiteral kind = iota + 1
	kindHash
	kindName
	kindCount
	kindTimestamp
	kindPending
)

// layout returns the kind of every token of form f.
func layout(f acksubject.Form) []kind {
	tail := []kind{kindName, kindName, kindCount, kindCount, kindCount, kindTimestamp, kindPending}
	if f == acksubject.FormV2 {
		return append([]kind{kindLiteral, kindLiteral, kindLiteral, kindHash}, tail...)
	}
	return append([]kind{kindLiteral, kindLiteral}, tail...)
}

// genSubject draws the tokens of a valid subject of either form, built
// without Format.
func genSubject() *rapid.Generator[[]string] { return genSubjectOf(genForm()) }

// genSubjectOf draws the tokens of a valid subject of a form drawn from
// forms.
func genSubjectOf(forms *rapid.Generator[acksubject.Form]) *rapid.Generator[[]string] {
	return rapid.Custom(func(t *rapid.T) []string {
		form := forms.Draw(t, "form")
		toks := []string{"$JS", "ACK"}
		if form == acksubject.FormV2 {
			toks = append(toks, "_", genHash().Draw(t, "accountHash"))
		}
		return append(toks,
			genName().Draw(t, "stream"),
			genName().Draw(t, "consumer"),
			strconv.FormatUint(rapid.Uint64Min(1).Draw(t, "delivered"), 10),
			strconv.FormatUint(rapid.Uint64Min(1).Draw(t, "streamSeq"), 10),
			strconv.FormatUint(rapid.Uint64Min(1).Draw(t, "consumerSeq"), 10),
			strconv.FormatInt(rapid.Int64Min(0).Draw(t, "timestamp"), 10),
			strconv.FormatUint(rapid.Uint64().Draw(t, "pending"), 10),
		)
	})
}

// infoOfTokens builds the Info a valid token list stands for.
func infoOfTokens(t *rapid.T, toks []string) acksubject.Info {
	info := acksubject.Info{Form: acksubject.FormClassic}
	if len(toks) == acksubject.V2Tokens {
		info.Form, info.AccountHash = acksubject.FormV2, toks[3]
	}
	rest := toks[len(toks)-7:]
	num := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("generated number %q: %v", s, err)
		}
		return n
	}
	info.Stream, info.Consumer = rest[0], rest[1]
	info.Delivered, info.StreamSeq, info.ConsumerSeq = num(rest[2]), num(rest[3]), num(rest[4])
	info.Timestamp, info.Pending = int64(num(rest[5])), num(rest[6])
	return info
}

func TestPropertyInfoRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		info := genInfo().Draw(t, "info")
		b, err := info.Append(nil)
		if err != nil {
			t.Fatalf("Append() of a valid Info: %v", err)
		}
		s := string(b)
		if s != info.String() {
			t.Fatalf("Append() = %q, String() = %q", s, info.String())
		}
		got, err := acksubject.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", s, err)
		}
		if diff := cmp.Diff(info, got); diff != "" {
			t.Fatalf("Parse(String()) (-want +got):\n%s", diff)
		}
	})
}

func TestPropertySubjectRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		toks := genSubject().Draw(t, "tokens")
		s := strings.Join(toks, ".")
		got, err := acksubject.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", s, err)
		}
		if diff := cmp.Diff(infoOfTokens(t, toks), got); diff != "" {
			t.Fatalf("Parse() (-want +got):\n%s", diff)
		}
		if got.String() != s {
			t.Fatalf("String(Parse(s)) = %q, want %q", got.String(), s)
		}
	})
}

func TestPropertyStrictPrefixes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := strings.Join(genSubject().Draw(t, "tokens"), ".")
		info, err := acksubject.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", s, err)
		}
		checkPrefixes(t, s, info)
	})
}

// mutation is one single-token change that takes any valid subject out of
// the grammar.
type mutation struct {
	name string
	// v2Only restricts the mutation to v2 subjects.
	v2Only bool
	// applies reports whether the mutation fits a token of kind k at index
	// i of form f.
	applies func(f acksubject.Form, i int, k kind) bool
	// apply returns the mutated tokens and, when the failure is fully
	// determined, the error Parse must return.
	apply func(t *rapid.T, toks []string, i int, k kind) ([]string, *acksubject.SyntaxError)
}

// fieldAt returns the Field of token i of form f.
func fieldAt(f acksubject.Form, i int) acksubject.Field {
	base := 2
	if f == acksubject.FormV2 {
		switch i {
		case 2:
			return acksubject.FieldDomain
		case 3:
			return acksubject.FieldAccountHash
		}
		base = 4
	}
	if i < 2 {
		return acksubject.FieldPrefix
	}
	return []acksubject.Field{acksubject.FieldStream, acksubject.FieldConsumer, acksubject.FieldDelivered,
		acksubject.FieldStreamSeq, acksubject.FieldConsumerSeq, acksubject.FieldTimestamp, acksubject.FieldPending}[i-base]
}

func anyToken(acksubject.Form, int, kind) bool { return true }

func numeric(_ acksubject.Form, _ int, k kind) bool {
	return k == kindCount || k == kindTimestamp || k == kindPending
}

// mutations lists every single-token mutation the issue names.
func mutations() []mutation {
	at := func(toks []string, i int, f acksubject.Form, r acksubject.Rule) *acksubject.SyntaxError {
		if len(strings.Join(toks, ".")) > acksubject.MaxLen {
			return &acksubject.SyntaxError{Index: -1, Field: acksubject.FieldSubject, Rule: acksubject.RuleTooLong}
		}
		return &acksubject.SyntaxError{Index: i, Field: fieldAt(f, i), Rule: r}
	}
	formOf := func(toks []string) acksubject.Form {
		if len(toks) == acksubject.V2Tokens {
			return acksubject.FormV2
		}
		return acksubject.FormClassic
	}
	set := func(toks []string, i int, v string) []string {
		out := slices.Clone(toks)
		out[i] = v
		return out
	}
	overflow := func(t *rapid.T, k kind) string {
		limit := new(big.Int).SetUint64(math.MaxUint64)
		if k == kindTimestamp {
			limit.SetInt64(math.MaxInt64)
		}
		extra := new(big.Int).SetUint64(rapid.Uint64().Draw(t, "excess"))
		extra.Mul(extra, big.NewInt(rapid.Int64Range(1, 1000).Draw(t, "scale")))
		return limit.Add(limit, extra.Add(extra, big.NewInt(1))).String()
	}
	return []mutation{
		{"dropped", false, anyToken, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			return slices.Delete(slices.Clone(toks), i, i+1), nil
		}},
		{"duplicated", false, anyToken, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			return slices.Insert(slices.Clone(toks), i, toks[i]), nil
		}},
		{"swapped with a fixed token", false, func(_ acksubject.Form, _ int, k kind) bool { return k == kindLiteral },
			func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
				var others []int
				for j := range toks {
					if toks[j] != toks[i] {
						others = append(others, j)
					}
				}
				j := rapid.SampledFrom(others).Draw(t, "swapWith")
				out := slices.Clone(toks)
				out[i], out[j] = out[j], out[i]
				return out, nil
			}},
		{"emptied", false, anyToken, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			out := set(toks, i, "")
			return out, at(out, i, formOf(toks), acksubject.RuleEmpty)
		}},
		{"wildcard", false, anyToken, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			out := set(toks, i, rapid.SampledFrom([]string{"*", ">"}).Draw(t, "wildcard"))
			return out, at(out, i, formOf(toks), acksubject.RuleWildcard)
		}},
		{"whitespace", false, anyToken, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			ws := rapid.SampledFrom([]string{" ", "\t", "\r", "\n", "\f", "\r\n"}).Draw(t, "whitespace")
			p := rapid.IntRange(0, len(toks[i])).Draw(t, "at")
			return set(toks, i, toks[i][:p]+ws+toks[i][p:]), nil
		}},
		{"sign", false, numeric, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			out := set(toks, i, rapid.SampledFrom([]string{"+", "-"}).Draw(t, "sign")+toks[i])
			return out, at(out, i, formOf(toks), acksubject.RuleSign)
		}},
		{"non-ASCII digit", false, numeric, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			d := rapid.SampledFrom([]string{"\u0661", "\u0663", "\u06f1", "\u0967", "\uff11", "\uff10", "\U0001d7d9"}).Draw(t, "digit")
			p := rapid.IntRange(0, len(toks[i])-1).Draw(t, "at")
			out := set(toks, i, toks[i][:p]+d+toks[i][p+1:])
			return out, at(out, i, formOf(toks), acksubject.RuleNotDecimal)
		}},
		{"overflow", false, numeric, func(t *rapid.T, toks []string, i int, k kind) ([]string, *acksubject.SyntaxError) {
			out := set(toks, i, overflow(t, k))
			return out, at(out, i, formOf(toks), acksubject.RuleOverflow)
		}},
		{"leading zero", false, numeric, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			out := set(toks, i, "0"+toks[i])
			return out, at(out, i, formOf(toks), acksubject.RuleLeadingZero)
		}},
		{"zero count", false, func(_ acksubject.Form, _ int, k kind) bool { return k == kindCount },
			func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
				out := set(toks, i, "0")
				return out, at(out, i, formOf(toks), acksubject.RuleZero)
			}},
		{"extra token", false, anyToken, func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
			extra := rapid.OneOf(genName(), rapid.Just("1"), rapid.Just("_")).Draw(t, "extra")
			return slices.Insert(slices.Clone(toks), i+1, extra), nil
		}},
		{"missing token", false, func(f acksubject.Form, i int, _ kind) bool { return i == len(layout(f))-1 },
			func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
				return toks[:i], &acksubject.SyntaxError{Index: -1, Field: acksubject.FieldSubject, Rule: acksubject.RuleTokenCount}
			}},
		{"other prefix", false, func(_ acksubject.Form, i int, _ kind) bool { return i < 2 },
			func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
				other := rapid.SampledFrom([]string{"$KV", "$js", "JS", "$JS$", "ack", "NAK", "FC", "API", "ACKS", "_INBOX", "$O", "$JS\x00"}).Draw(t, "prefix")
				out := set(toks, i, other)
				return out, at(out, i, formOf(toks), acksubject.RulePrefix)
			}},
		{"other domain", true, func(_ acksubject.Form, i int, _ kind) bool { return i == 2 },
			func(t *rapid.T, toks []string, i int, _ kind) ([]string, *acksubject.SyntaxError) {
				d := rapid.OneOf(rapid.SampledFrom([]string{"hub", "leaf", "__", "-", "$G"}), genName()).Filter(func(s string) bool { return s != "_" }).Draw(t, "domain")
				out := set(toks, i, d)
				return out, at(out, i, formOf(toks), acksubject.RuleDomain)
			}},
	}
}

func TestPropertyMutationsRejected(t *testing.T) {
	for _, m := range mutations() {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				forms := genForm()
				if m.v2Only {
					forms = rapid.Just(acksubject.FormV2)
				}
				toks := genSubjectOf(forms).Draw(t, "tokens")
				form := acksubject.FormClassic
				if len(toks) == acksubject.V2Tokens {
					form = acksubject.FormV2
				}
				kinds := layout(form)
				var fits []int
				for i, k := range kinds {
					if m.applies(form, i, k) {
						fits = append(fits, i)
					}
				}
				i := rapid.SampledFrom(fits).Draw(t, "index")
				mutated, want := m.apply(t, toks, i, kinds[i])
				s := strings.Join(mutated, ".")
				got, err := acksubject.Parse(s)
				if err == nil {
					t.Fatalf("mutated subject %q accepted as %+v", s, got)
				}
				se := checkSyntaxError(t, err)
				if want != nil {
					if diff := cmp.Diff(*want, *se); diff != "" {
						t.Fatalf("Parse(%q) error (-want +got):\n%s", s, diff)
					}
				}
			})
		})
	}
}

func TestPropertyNoPanic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, acksubject.MaxLen+2), func(b []byte) string { return string(b) }),
			rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte("$JSACK._.0123456789SC*> -+\x00")), 0, 64), func(b []byte) string { return string(b) }),
			rapid.Custom(func(t *rapid.T) string {
				// A valid subject with a few bytes overwritten.
				b := []byte(strings.Join(genSubject().Draw(t, "tokens"), "."))
				for range rapid.IntRange(1, 3).Draw(t, "edits") {
					b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.Byte().Draw(t, "byte")
				}
				return string(b)
			}),
		).Draw(t, "subject")
		checkSubject(t, s)
	})
}

// syntaxOf returns the *SyntaxError in err, nil for nil or another error.
func syntaxOf(err error) *acksubject.SyntaxError {
	var se *acksubject.SyntaxError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// TestPropertyValidateAgreesWithParse checks that an Info is valid exactly
// when its subject parses back to it.
func TestPropertyValidateAgreesWithParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		info := acksubject.Info{
			Form:        acksubject.Form(rapid.IntRange(0, 3).Draw(t, "form")),
			AccountHash: rapid.OneOf(rapid.Just(""), genHash(), rapid.StringN(0, 9, 12)).Draw(t, "accountHash"),
			Stream:      rapid.OneOf(genName(), rapid.StringN(0, 4, 8)).Draw(t, "stream"),
			Consumer:    rapid.OneOf(genName(), rapid.StringN(0, 4, 8)).Draw(t, "consumer"),
			Delivered:   rapid.Uint64Range(0, 3).Draw(t, "delivered"),
			StreamSeq:   rapid.Uint64Range(0, 3).Draw(t, "streamSeq"),
			ConsumerSeq: rapid.Uint64Range(0, 3).Draw(t, "consumerSeq"),
			Timestamp:   rapid.Int64Range(-2, 2).Draw(t, "timestamp"),
			Pending:     rapid.Uint64().Draw(t, "pending"),
		}
		verr := info.Validate()
		b, aerr := info.Append(nil)
		if diff := cmp.Diff(syntaxOf(verr), syntaxOf(aerr)); diff != "" {
			t.Fatalf("Append() error differs from Validate() (-want +got):\n%s", diff)
		}
		got, perr := acksubject.Parse(string(b))
		roundTrips := perr == nil && cmp.Equal(info, got)
		if roundTrips != (verr == nil) {
			t.Fatalf("Validate() = %v but round trip = %v (Parse error %v)", verr, roundTrips, perr)
		}
	})
}
