package jsonlex

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// fuzzMaxDepth bounds the nesting FuzzLex reads; deeper inputs are only
// checked not to be accepted.
const fuzzMaxDepth = 64

// FuzzLex reads the input as one JSON value with Skip and compares with
// encoding/json:
//
//   - accepted: json.Valid agrees, and the value read again with Next,
//     Key, String and Number decodes to what encoding/json decodes (with
//     UseNumber); every string's contents compare Equal to its decoded
//     text and EqualRaw to encoding/json's re-encoding of it; every
//     integer's sign and magnitude are those of strconv and encoding/json;
//   - refused while json.Valid accepts: only ErrUTF8 (or ErrDepth), and
//     at its offset stands invalid UTF-8 or an unpaired surrogate escape,
//     which encoding/json would have replaced with U+FFFD.
//
// The committed corpus is in testdata/fuzz/FuzzLex.
func FuzzLex(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e3,true,false,null,"x\ud83d\ude00\n"],"b":{}}`,
		`"\u00e9\u20AC\"\\\/\b\f\n\r\t"`,
		"\"\xff\"", "\"\xed\xa0\x80\"", `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`,
		`18446744073709551615`, `18446744073709551616`, `-9223372036854775808`,
		`-0`, `0.5e-7`, `01`, `1.`, `[1,]`, `{"a":1,"a":2}`, " [ ] ", `[[[[]]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end, err := Skip(b, 0, 0, fuzzMaxDepth)
		trailing := err == nil && Space(b, end) != len(b)
		valid := json.Valid(b)
		switch {
		case trailing && valid:
			t.Fatalf("Skip ended at %d of %q, which encoding/json reads whole", end, b)
		case trailing:
		case err == nil && !valid:
			t.Fatalf("accepted %q, which encoding/json refuses", b)
		case err == nil:
			compareDecoded(t, b)
		case err == ErrDepth:
		case !valid:
		case err != ErrUTF8:
			t.Fatalf("refused %q (%v at %d), which encoding/json accepts", b, err, end)
		case !unpaired(b, end) && !invalidUTF8(b, end):
			t.Fatalf("ErrUTF8 at %d of %q, where neither invalid UTF-8 nor an unpaired surrogate stands", end, b)
		}
	})
}

// compareDecoded decodes an accepted value with this package and with
// encoding/json and requires the same result.
func compareDecoded(t *testing.T, b []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("encoding/json refuses %q: %v", b, err)
	}
	got, _ := decodeValue(t, b, 0)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decoded %q (-encoding/json +jsonlex):\n%s", b, diff)
	}
}

// decodeValue decodes the value at or after i of an input Skip accepted,
// checking each string and number on the way.
func decodeValue(t *testing.T, b []byte, i int) (any, int) {
	i = Space(b, i)
	switch c := b[i]; {
	case c == '{':
		m := map[string]any{}
		i++
		for first := true; ; first = false {
			var more bool
			if i, more, _ = Next(b, i, first, '}'); !more {
				return m, i
			}
			var key []byte
			var esc bool
			key, esc, i, _ = Key(b, i)
			k := checkString(t, key, esc)
			m[k], i = decodeValue(t, b, i)
		}
	case c == '[':
		s := []any{}
		i++
		for first := true; ; first = false {
			var more bool
			if i, more, _ = Next(b, i, first, ']'); !more {
				return s, i
			}
			var v any
			v, i = decodeValue(t, b, i)
			s = append(s, v)
		}
	case c == '"':
		raw, esc, end, _ := String(b, i)
		return checkString(t, raw, esc), end
	case c == 't':
		return true, i + len("true")
	case c == 'f':
		return false, i + len("false")
	case c == 'n':
		return nil, i + len("null")
	}
	end, frac, exp, _ := Number(b, i)
	tok := b[i:end]
	checkNumber(t, tok, frac, exp)
	return json.Number(tok), end
}

// checkString returns the decoded text of accepted contents, checking
// Equal, and EqualRaw against encoding/json's encoding of that text.
func checkString(t *testing.T, raw []byte, esc bool) string {
	t.Helper()
	s := string(AppendUnescaped(nil, raw))
	if !utf8.ValidString(s) {
		t.Fatalf("contents %q decode to invalid UTF-8 %q", raw, s)
	}
	if esc != (bytes.IndexByte(raw, '\\') >= 0) {
		t.Fatalf("contents %q: esc %v", raw, esc)
	}
	if !Equal(raw, esc, s) || Equal(raw, esc, s+"\x00") || (s != "" && Equal(raw, esc, s[:len(s)-1])) {
		t.Fatalf("Equal(%q) disagrees with the decoded text %q", raw, s)
	}
	enc, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	encRaw, encEsc, end, err := String(enc, 0)
	if err != nil || end != len(enc) {
		t.Fatalf("String refuses encoding/json's %s: %v", enc, err)
	}
	if !EqualRaw(raw, esc, encRaw, encEsc) || !EqualRaw(encRaw, encEsc, raw, esc) {
		t.Fatalf("EqualRaw(%q, %q) = false", raw, encRaw)
	}
	return s
}

// checkNumber compares a number's flags with its text and, for an
// integer, Integer with strconv and encoding/json.
func checkNumber(t *testing.T, tok []byte, frac, exp bool) {
	t.Helper()
	if frac != bytes.Contains(tok, []byte(".")) || exp != bytes.ContainsAny(tok, "eE") {
		t.Fatalf("Number(%s): frac %v, exp %v", tok, frac, exp)
	}
	if _, err := strconv.ParseFloat(string(tok), 64); err != nil && err.(*strconv.NumError).Err != strconv.ErrRange {
		t.Fatalf("ParseFloat(%s): %v", tok, err)
	}
	if frac || exp {
		return
	}
	neg, mag, ok := Integer(tok)
	u, err := strconv.ParseUint(string(bytes.TrimPrefix(tok, []byte("-"))), 10, 64)
	if neg != (tok[0] == '-') || ok != (err == nil) || ok && mag != u {
		t.Fatalf("Integer(%s) = %v, %d, %v; strconv %d, %v", tok, neg, mag, ok, u, err)
	}
	if neg {
		var v int64
		err := json.Unmarshal(tok, &v)
		if fits := ok && mag <= 1<<63; fits != (err == nil) || fits && v != int64(-mag) {
			t.Fatalf("Integer(%s) = %d, %v; encoding/json int64 %d, %v", tok, mag, ok, v, err)
		}
		return
	}
	var v uint64
	if err := json.Unmarshal(tok, &v); ok != (err == nil) || ok && v != mag {
		t.Fatalf("Integer(%s) = %d, %v; encoding/json uint64 %d, %v", tok, mag, ok, v, err)
	}
}

// invalidUTF8 reports whether b[i] starts an invalid UTF-8 sequence.
func invalidUTF8(b []byte, i int) bool {
	r, size := utf8.DecodeRune(b[i:])
	return r == utf8.RuneError && size == 1
}

// unpaired reports whether b[i:] starts with a \u escape of a surrogate
// that is not a high half followed by an escaped low half.
func unpaired(b []byte, i int) bool {
	hi, ok := escapedCode(b, i)
	if !ok || hi < 0xD800 || hi > 0xDFFF {
		return false
	}
	if hi >= 0xDC00 {
		return true
	}
	lo, ok := escapedCode(b, i+6)
	return !ok || lo < 0xDC00 || lo > 0xDFFF
}

// escapedCode reads the code of a \u escape at b[i] with strconv.
func escapedCode(b []byte, i int) (uint64, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
	return v, err == nil
}
