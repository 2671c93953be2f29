package jsonlex

import (
	"strings"
	"testing"
)

func TestNumberAccepts(t *testing.T) {
	for _, tc := range []struct {
		in, tok   string
		frac, exp bool
	}{
		{"0", "0", false, false},
		{"-0", "-0", false, false},
		{"7", "7", false, false},
		{"1234567890", "1234567890", false, false},
		{"-12", "-12", false, false},
		{"1.5", "1.5", true, false},
		{"0.000", "0.000", true, false},
		{"1e5", "1e5", false, true},
		{"1E+5", "1E+5", false, true},
		{"-2.5e-3", "-2.5e-3", true, true},
		{"12,", "12", false, false},
		{"1]", "1", false, false},
		{"01", "0", false, false},
		{"0x1", "0", false, false},
		{"1.5.", "1.5", true, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			end, frac, exp, err := Number([]byte(tc.in), 0)
			if err != nil || tc.in[:end] != tc.tok || frac != tc.frac || exp != tc.exp {
				t.Errorf("Number = %q, %v, %v, %v; want %q, %v, %v", tc.in[:end], frac, exp, err, tc.tok, tc.frac, tc.exp)
			}
		})
	}
}

// TestNumberRefuses: at marks where a digit was wanted (empty: the end of
// the input).
func TestNumberRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, at string }{
		{"empty", "", ""},
		{"minus alone", "-", ""},
		{"minus then letter", "-a", "a"},
		{"plus", "+1", "+"},
		{"leading dot", ".5", "."},
		{"trailing dot", "1.", ""},
		{"dot then exponent", "1.e5", "e"},
		{"exponent without digits", "1e", ""},
		{"exponent sign without digits", "1e+", ""},
		{"exponent sign then letter", "1e-x", "x"},
		{"letters", "NaN", "NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end, _, _, err := Number([]byte(tc.in), 0)
			want := len(tc.in)
			if tc.at != "" {
				want = strings.Index(tc.in, tc.at)
			}
			if err != ErrSyntax || end != want {
				t.Errorf("Number = %v at %d, want ErrSyntax at %d", err, end, want)
			}
		})
	}
}

// TestInteger: the limit (max uint64) passes, one past it fails, signed or
// not.
func TestInteger(t *testing.T) {
	for _, tc := range []struct {
		tok string
		neg bool
		mag uint64
		ok  bool
	}{
		{"0", false, 0, true},
		{"-0", true, 0, true},
		{"42", false, 42, true},
		{"-42", true, 42, true},
		{"9223372036854775808", false, 1 << 63, true},
		{"-9223372036854775808", true, 1 << 63, true},
		{"18446744073709551615", false, 1<<64 - 1, true},
		{"18446744073709551616", false, 0, false},
		{"-18446744073709551616", true, 0, false},
		{"99999999999999999999", false, 0, false},
		{"100000000000000000000", false, 0, false},
	} {
		neg, mag, ok := Integer([]byte(tc.tok))
		if neg != tc.neg || mag != tc.mag || ok != tc.ok {
			t.Errorf("Integer(%s) = %v, %d, %v; want %v, %d, %v", tc.tok, neg, mag, ok, tc.neg, tc.mag, tc.ok)
		}
	}
}
