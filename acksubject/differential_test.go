package acksubject_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
	"pgregory.net/rapid"
)

// These tests compare Parse with ReferenceParse, the token-by-token parser
// Parse replaced (kept unchanged in reference_test.go), on inputs of every
// kind: valid subjects, valid subjects edited byte by byte or token by
// token, subjects assembled from boundary tokens, and arbitrary bytes.

// outcome is what a parser made of one subject, in comparable form: the
// Info, and the *SyntaxError by value (nil when accepted).
type outcome struct {
	Info  acksubject.Info
	Error *acksubject.SyntaxError
}

// outcomeOf converts the results of a parse; an error that is not a
// *SyntaxError fails the test.
func outcomeOf(t fataler, info acksubject.Info, err error) outcome {
	if err == nil {
		return outcome{Info: info}
	}
	var se *acksubject.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SyntaxError", err)
	}
	return outcome{Info: info, Error: se}
}

// checkAgainstReference requires Parse to do with s exactly what
// ReferenceParse does: the same Info, and the same error index, field and
// rule; and the one-pass scan alone to accept exactly the subjects the
// reference accepts, into the same Info.
func checkAgainstReference(t fataler, s string) {
	info, err := acksubject.ReferenceParse(s)
	want := outcomeOf(t, info, err)
	info, err = acksubject.Parse(s)
	if diff := cmp.Diff(want, outcomeOf(t, info, err)); diff != "" {
		t.Fatalf("Parse(%q) differs from the reference (-want +got):\n%s", s, diff)
	}
	info, ok := acksubject.Scan(s)
	if ok != (want.Error == nil) {
		t.Fatalf("Scan(%q) accepts = %v, reference error = %v", s, ok, want.Error)
	}
	if diff := cmp.Diff(want.Info, info); ok && diff != "" {
		t.Fatalf("Scan(%q) differs from the reference (-want +got):\n%s", s, diff)
	}
	checkBytes(t, s)
}

// checkBytes requires Binding.ParseBytes to do with s exactly what
// Binding.Parse does, for the binding s names (with and without its
// account hash) and for one it does not name; a refused s is refused by
// both with the same error.
func checkBytes(t fataler, s string) {
	info, err := acksubject.Parse(s)
	want := outcomeOf(t, info, err)
	bindings := []acksubject.Binding{
		{Stream: want.Info.Stream, Consumer: want.Info.Consumer},
		{Stream: want.Info.Stream, Consumer: want.Info.Consumer, AccountHash: want.Info.AccountHash},
		{Stream: want.Info.Stream, Consumer: want.Info.Consumer, AccountHash: acksubject.AccountHash("another")},
		{Stream: want.Info.Stream + "x", Consumer: want.Info.Consumer},
		{Stream: want.Info.Stream, Consumer: want.Info.Consumer + "x"},
	}
	for _, b := range bindings {
		wi, werr := b.Parse(s)
		gi, gerr := b.ParseBytes([]byte(s))
		var wm, gm *acksubject.MismatchError
		if errors.As(werr, &wm) != errors.As(gerr, &gm) || wm != nil && *wm != *gm {
			t.Fatalf("%+v.ParseBytes(%q) = %v, Parse %v", b, s, gerr, werr)
		}
		if wm != nil {
			continue
		}
		if diff := cmp.Diff(outcomeOf(t, wi, werr), outcomeOf(t, gi, gerr)); diff != "" {
			t.Fatalf("%+v.ParseBytes(%q) differs from Binding.Parse (-want +got):\n%s", b, s, diff)
		}
	}
}

// boundaryNumbers returns decimals around every length at which the
// parser changes how it reads digits (eight at a time, one at a time, the
// checked 20th digit), around the largest int64 and uint64, and of every
// length from 1 to 44 digits.
func boundaryNumbers() []string {
	out := []string{
		"0", "00", "01", "007", "12345678", "123456789", "1234567812345678", "12345678123456789",
		"1796050789013316158", "9223372036854775806", "9223372036854775807", "9223372036854775808",
		"9223372036854775810", "12345678901234567890", "18446744073709551609", "18446744073709551610",
		"18446744073709551614", "18446744073709551615", "18446744073709551616", "18446744073709551619",
		"18446744073709551620", "18446744073709552000", "19999999999999999999", "20000000000000000000",
		"184467440737095516150", "000000000000000000001", "0000000000000000000", "00000000000000000000",
	}
	for k := 1; k <= 44; k++ {
		out = append(out, strings.Repeat("9", k), "1"+strings.Repeat("0", k-1))
	}
	return out
}

// genNumberToken draws a decimal token, valid or nearly so.
func genNumberToken() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom(boundaryNumbers()),
		rapid.Map(rapid.Uint64(), func(n uint64) string { return strconv.FormatUint(n, 10) }),
		rapid.Map(rapid.Uint64Range(0, 1000), func(n uint64) string { return strconv.FormatUint(n, 10) }),
		rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte("0123456789")), 0, 44), func(b []byte) string { return string(b) }),
		rapid.Custom(func(t *rapid.T) string {
			// Digits with one other byte among them, at any place.
			digits := []byte(rapid.SampledFrom(boundaryNumbers()).Draw(t, "digits"))
			at := rapid.IntRange(0, len(digits)).Draw(t, "at")
			other := rapid.SampledFrom([]byte("+- x/:\x00\t\xff*>")).Draw(t, "other")
			return string(digits[:at]) + string(other) + string(digits[at:])
		}),
	)
}

// genToken draws one token of any kind the grammar knows, valid or not.
func genToken() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"$JS", "ACK", "_", "", "*", ">", "$js", "ACK ", "__", "hub"}),
		genHash(),
		rapid.SampledFrom([]string{"szMpdr", "szMpdrwDD", "szMp-rwD", "szMpdrw\xff"}),
		genName(),
		rapid.Map(rapid.SliceOfN(rapid.SampledFrom(nameBytes()), acksubject.MaxNameLen+1, acksubject.MaxNameLen+2),
			func(b []byte) string { return string(b) }),
		rapid.Custom(func(t *rapid.T) string {
			// A name with one forbidden byte at any place.
			name := []byte(genName().Draw(t, "name"))
			at := rapid.IntRange(0, len(name)).Draw(t, "at")
			bad := rapid.SampledFrom([]byte(" \t\r\n\f*>\\/\x00")).Draw(t, "bad")
			return string(name[:at]) + string(bad) + string(name[at:])
		}),
		genNumberToken(),
	)
}

// genAssembled draws a subject put together from genToken, mostly in the
// layout of one of the two forms with the right prefix, sometimes with a
// token too few or too many.
func genAssembled() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		form := genForm().Draw(t, "form")
		n := len(layout(form)) + rapid.SampledFrom([]int{0, 0, 0, 0, -1, 1, -2, 2}).Draw(t, "extra")
		toks := []string{"$JS", "ACK"}
		if form == acksubject.FormV2 {
			toks = append(toks, rapid.OneOf(rapid.Just("_"), genToken()).Draw(t, "domain"),
				rapid.OneOf(genHash(), genToken()).Draw(t, "hash"))
		}
		for len(toks) < n-5 {
			toks = append(toks, rapid.OneOf(genName(), genToken()).Draw(t, "name"))
		}
		for len(toks) < n {
			toks = append(toks, rapid.OneOf(genNumberToken(), genToken()).Draw(t, "number"))
		}
		if rapid.IntRange(0, 9).Draw(t, "prefixed") == 0 {
			toks[rapid.IntRange(0, 1).Draw(t, "prefixToken")] = genToken().Draw(t, "prefix")
		}
		return strings.Join(toks[:n], ".")
	})
}

// genEdited draws a valid subject with one to four byte edits: a byte
// overwritten, inserted or deleted, or the subject cut short.
func genEdited() *rapid.Generator[string] {
	interesting := []byte(".0123456789_*> \t\r\n\f\x00+-/\\aZ\xff")
	return rapid.Custom(func(t *rapid.T) string {
		b := []byte(strings.Join(genSubject().Draw(t, "tokens"), "."))
		for range rapid.IntRange(1, 4).Draw(t, "edits") {
			at := rapid.IntRange(0, len(b)).Draw(t, "at")
			c := rapid.OneOf(rapid.SampledFrom(interesting), rapid.Byte()).Draw(t, "byte")
			switch rapid.IntRange(0, 3).Draw(t, "edit") {
			case 0:
				if at < len(b) {
					b[at] = c
				}
			case 1:
				b = append(b[:at], append([]byte{c}, b[at:]...)...)
			case 2:
				if at < len(b) {
					b = append(b[:at], b[at+1:]...)
				}
			default:
				b = b[:at]
			}
		}
		return string(b)
	})
}

// genMutated draws a valid subject with one of the single-token mutations
// of TestPropertyMutationsRejected.
func genMutated() *rapid.Generator[string] {
	all := mutations()
	return rapid.Custom(func(t *rapid.T) string {
		m := all[rapid.IntRange(0, len(all)-1).Draw(t, "mutation")]
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
		mutated, _ := m.apply(t, toks, i, kinds[i])
		return strings.Join(mutated, ".")
	})
}

// genAnyBytes draws arbitrary bytes, or bytes from the grammar's alphabet.
func genAnyBytes() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, acksubject.MaxLen+2), func(b []byte) string { return string(b) }),
		rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte("$JSACK._.0123456789szMpdrwD*> -+\x00")), 0, 96),
			func(b []byte) string { return string(b) }),
		rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte("..0123456789")), 0, 64),
			func(b []byte) string { return "$JS.ACK." + string(b) }),
	)
}

func TestDifferentialTable(t *testing.T) {
	longName := strings.Repeat("n", acksubject.MaxNameLen)
	tests := []struct {
		name    string
		subject string
	}{
		{"live classic", liveClassic},
		{"live redelivery", liveRedelivery},
		{"live v2", liveV2NoDomain},
		{"longest classic", maxInfo(acksubject.FormClassic).String()},
		{"longest v2", maxInfo(acksubject.FormV2).String()},
		{"longest v2 and one digit", maxInfo(acksubject.FormV2).String() + "9"},
		{"classic on stream _ with a hash-like consumer", "$JS.ACK._.szMpdrwD.1.1.1.0.0"},
		{"v2 whose names are numbers", "$JS.ACK._.szMpdrwD.1.1.1.1.1.0.0"},
		{"v2 that is one token short", "$JS.ACK._.szMpdrwD.S.C.1.1.1.0"},
		{"classic that is one token long", "$JS.ACK._.szMpdrwD.1.1.1.0.0.0"},
		{"name of MaxNameLen", "$JS.ACK." + longName + ".C.1.1.1.0.0"},
		{"name of MaxNameLen+1", "$JS.ACK." + longName + "n.C.1.1.1.0.0"},
		{"name running to the end", "$JS.ACK." + longName},
		{"name with a control byte the broker allows", "$JS.ACK.a\x01\x0b\x7f.C.1.1.1.0.0"},
		{"forbidden byte at the ninth name byte", "$JS.ACK.abcdefgh*.C.1.1.1.0.0"},
		{"twenty-digit pending at the end", "$JS.ACK.S.C.1.1.1.0.18446744073709551615"},
		{"twenty-one-digit pending at the end", "$JS.ACK.S.C.1.1.1.0.184467440737095516150"},
		{"eight digits then a letter", "$JS.ACK.S.C.12345678x.1.1.0.0"},
		{"sixteen digits then a letter", "$JS.ACK.S.C.1234567812345678x.1.1.0.0"},
		{"nineteen-digit count", "$JS.ACK.S.C.9999999999999999999.1.1.0.0"},
		{"twenty-digit timestamp", "$JS.ACK.S.C.1.1.1.10000000000000000000.0"},
		{"prefix only", acksubject.Prefix},
		{"seven bytes", "$JS.ACK"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkAgainstReference(t, tt.subject)
		})
	}
}

// TestDifferentialBoundaryNumbers puts every boundary decimal in every
// number token of a valid subject of each form.
func TestDifferentialBoundaryNumbers(t *testing.T) {
	for _, form := range []acksubject.Form{acksubject.FormClassic, acksubject.FormV2} {
		valid := strings.Split(map[acksubject.Form]string{acksubject.FormClassic: liveClassic, acksubject.FormV2: liveV2NoDomain}[form], ".")
		for i := len(valid) - 5; i < len(valid); i++ {
			t.Run(form.String()+"/"+strconv.Itoa(i), func(t *testing.T) {
				for _, n := range boundaryNumbers() {
					toks := slices.Clone(valid)
					toks[i] = n
					checkAgainstReference(t, strings.Join(toks, "."))
				}
			})
		}
	}
}

func TestPropertyDifferential(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(genAssembled(), genEdited(), genMutated(), genAnyBytes(),
			rapid.Map(genSubject(), func(toks []string) string { return strings.Join(toks, ".") }),
		).Draw(t, "subject")
		checkAgainstReference(t, s)
	})
}

// TestPropertyDifferentialPrefixes compares every prefix of a valid
// subject, and the subject with each of a few bytes appended: the ends of
// tokens and of the subject at every offset.
func TestPropertyDifferentialPrefixes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(genAssembled(),
			rapid.Map(genSubject(), func(toks []string) string { return strings.Join(toks, ".") }),
		).Draw(t, "subject")
		for k := range len(s) + 1 {
			checkAgainstReference(t, s[:k])
		}
		for _, tail := range []string{".", "0", "9", ".0", "x", "\x00"} {
			checkAgainstReference(t, s+tail)
		}
	})
}

// FuzzParseDifferential compares Parse with the reference parser on
// arbitrary bytes (see checkAgainstReference). Its committed corpus, in
// testdata/fuzz/FuzzParseDifferential, starts as FuzzParse's.
func FuzzParseDifferential(f *testing.F) {
	f.Add([]byte(liveClassic))
	f.Add([]byte(liveV2NoDomain))
	f.Add([]byte(maxInfo(acksubject.FormV2).String()))
	f.Add([]byte(maxInfo(acksubject.FormClassic).String()))
	f.Add([]byte("$JS.ACK._.szMpdrwD.1.1.1.0.0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAgainstReference(t, string(b))
	})
}
