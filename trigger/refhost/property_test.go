package refhost_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/latent-systems/latent-nats/internal/wittest"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// genType draws a valid type of at most depth levels from the shared
// generator (internal/wittest).
func genType(t *rapid.T, depth int) refhost.Type {
	var g wittest.Gen
	return g.Type(t, depth)
}

// genValue draws a Go value of typ, any float (NaNs included).
func genValue(t *rapid.T, typ refhost.Type) any {
	var g wittest.Gen
	return g.Value(t, &typ)
}

// genCase draws a signature and arguments for it.
func genCase(t *rapid.T) (*refhost.Signature, []any) {
	n := rapid.IntRange(1, 3).Draw(t, "params")
	params := make([]refhost.Type, n)
	args := make([]any, n)
	for i := range params {
		params[i] = genType(t, 4)
		args[i] = genValue(t, params[i])
	}
	sig, err := refhost.NewSignature(params...)
	if err != nil {
		t.Fatalf("NewSignature(%v): %v", params, err)
	}
	return sig, args
}

// TestPropertyRoundTrip: values encode, decode to the same values and
// re-encode to the same bytes.
func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sig, args := genCase(t)
		enc, err := sig.Append(nil, args)
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		got, err := sig.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(%s): %v", enc, err)
		}
		if diff := cmp.Diff(args, got, valueOpts()); diff != "" {
			t.Fatalf("%s: Decode(Append(v)) (-v +got):\n%s", sig, diff)
		}
		again, err := sig.Append(nil, got)
		if err != nil || string(again) != string(enc) {
			t.Fatalf("Append(Decode(%s)) = %s, %v", enc, again, err)
		}
	})
}

// TestPropertyPrefixesFail: every strict prefix of an encoding is
// refused with ErrInvalidArguments.
func TestPropertyPrefixesFail(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sig, args := genCase(t)
		enc, err := sig.Append(nil, args)
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		for i := range len(enc) {
			if _, err := sig.Decode(enc[:i]); !errors.Is(err, refhost.ErrInvalidArguments) {
				t.Fatalf("Decode(%q) = %v, want ErrInvalidArguments", enc[:i], err)
			}
		}
	})
}

// TestPropertyWhitespace: whitespace after any structural character
// outside strings changes nothing.
func TestPropertyWhitespace(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sig, args := genCase(t)
		enc, err := sig.Append(nil, args)
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		ws := rapid.SampledFrom([]string{" ", "\t", "\n", "\r\n", "  "})
		var b strings.Builder
		b.WriteString(ws.Draw(t, "lead"))
		inString, escaped := false, false
		for _, c := range enc {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case c == '"':
				inString = !inString
			case !inString && strings.IndexByte("[]{},:", c) >= 0 && rapid.Bool().Draw(t, "space"):
				b.WriteString(ws.Draw(t, "ws"))
			}
		}
		spaced := b.String()
		got, err := sig.Decode([]byte(spaced))
		if err != nil {
			t.Fatalf("Decode(%q): %v", spaced, err)
		}
		again, err := sig.Append(nil, got)
		if err != nil || string(again) != string(enc) {
			t.Fatalf("Append(Decode(%q)) = %s, %v; want %s", spaced, again, err, enc)
		}
	})
}

// TestPropertyTypeText: ParseType reads back what String writes.
func TestPropertyTypeText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		typ := genType(t, 5)
		got, err := refhost.ParseType(typ.String())
		if err != nil {
			t.Fatalf("ParseType(%q): %v", typ.String(), err)
		}
		if diff := cmp.Diff(typ, got); diff != "" {
			t.Fatalf("ParseType(%q) (-want +got):\n%s", typ.String(), diff)
		}
	})
}

// TestDecodeAtMaxDepth decodes a value nested as deep as a type may be.
func TestDecodeAtMaxDepth(t *testing.T) {
	n := refhost.MaxTypeDepth - 1
	typ := strings.Repeat("list<", n) + "u8" + strings.Repeat(">", n)
	sig := mustSig(t, typ)
	in := strings.Repeat("[", n+1) + "7" + strings.Repeat("]", n+1)
	got, err := sig.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := sig.Append(nil, got)
	if err != nil || string(enc) != in {
		t.Errorf("Append(Decode(%s)) = %s, %v", in, enc, err)
	}
}

// floatForms returns JSON number texts of f: strconv's forms and the
// digits of its shortest form with the point moved and the exponent
// adjusted.
func floatForms(f float64, bits int) []string {
	forms := []string{
		strconv.FormatFloat(f, 'e', -1, bits),
		strconv.FormatFloat(f, 'E', -1, bits),
		strconv.FormatFloat(f, 'f', -1, bits),
		strconv.FormatFloat(f, 'g', -1, bits),
		strconv.FormatFloat(f, 'e', 17, bits),
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(math.Abs(f), 'e', -1, bits), "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	if digits == "0" {
		return forms
	}
	for at := 1; at <= len(digits); at++ {
		m := digits[:at]
		if at < len(digits) {
			m += "." + digits[at:]
		}
		forms = append(forms,
			sign+m+"e"+strconv.Itoa(x-(at-1)),
			sign+"0."+digits+"e"+strconv.Itoa(x+1),
			sign+digits+"0e"+strconv.Itoa(x-len(digits)))
	}
	return forms
}

// TestPropertyFloatCanonicalShortest: the canonical text of a float is no
// longer than any other JSON number that reads as the same value.
func TestPropertyFloatCanonicalShortest(t *testing.T) {
	f64, f32 := mustSig(t, "f64"), mustSig(t, "f32")
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.Float64().Filter(func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }).Draw(t, "f")
		canon, err := f64.Append(nil, []any{f})
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range floatForms(f, 64) {
			got, err := f64.Decode([]byte("[" + form + "]"))
			if err != nil || got[0].(float64) != f {
				t.Fatalf("Decode(%s) = %v, %v; want %v", form, got, err, f)
			}
			if len(canon)-2 > len(form) {
				t.Fatalf("canonical %s is longer than %s", canon, form)
			}
		}
		g := rapid.Float32().Filter(func(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }).Draw(t, "g")
		canon, err = f32.Append(nil, []any{g})
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range floatForms(float64(g), 32) {
			got, err := f32.Decode([]byte("[" + form + "]"))
			if err != nil || got[0].(float32) != g {
				t.Fatalf("Decode(%s) = %v, %v; want %v", form, got, err, g)
			}
			if len(canon)-2 > len(form) {
				t.Fatalf("canonical %s is longer than %s", canon, form)
			}
		}
	})
}
