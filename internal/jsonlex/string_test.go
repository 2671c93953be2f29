package jsonlex

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStringAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // decoded
		esc      bool
	}{
		{name: "empty", in: `""`, want: ""},
		{name: "plain", in: `"abc"`, want: "abc"},
		{name: "utf-8", in: "\"é€😀\"", want: "é€😀"},
		{name: "replacement character written", in: "\"\uFFFD\"", want: "\uFFFD"},
		{name: "del raw", in: "\"\x7f\"", want: "\x7f"},
		{name: "line separator raw", in: "\"\u2028\"", want: "\u2028"},
		{name: "short escapes", in: `"\"\\\/\b\f\n\r\t"`, want: "\"\\/\b\f\n\r\t", esc: true},
		{name: "unicode escapes", in: `"\u0041\u00e9\u20AC"`, want: "Aé€", esc: true},
		{name: "nul escaped", in: `"\u0000"`, want: "\x00", esc: true},
		{name: "pair", in: `"x\uD834\uDD1Ey"`, want: "x𝄞y", esc: true},
		{name: "pair lower case", in: `"\ud83d\ude00"`, want: "😀", esc: true},
		{name: "utf-8 after escape", in: "\"\\n\u00e9\"", want: "\né", esc: true},
		{name: "followed by more", in: `"a"]`, want: "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.in)
			raw, esc, end, err := String(b, 0)
			if err != nil {
				t.Fatalf("String: %v at %d", err, end)
			}
			if want := strings.LastIndexByte(tc.in, '"') + 1; end != want {
				t.Errorf("end = %d, want %d", end, want)
			}
			if esc != tc.esc {
				t.Errorf("esc = %v, want %v", esc, tc.esc)
			}
			if got := string(AppendUnescaped(nil, raw)); got != tc.want {
				t.Errorf("AppendUnescaped = %q, want %q", got, tc.want)
			}
			if !Equal(raw, esc, tc.want) || Equal(raw, esc, tc.want+"x") {
				t.Errorf("Equal disagrees with the decoded text")
			}
			if cap(raw) != len(raw) {
				t.Errorf("contents have capacity %d past their length %d", cap(raw), len(raw))
			}
		})
	}
}

// TestStringRefuses pins the error and the offset of each fault: at marks
// the first byte of the fault (empty: the end of the input).
func TestStringRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, at string
		err          error
	}{
		{"not a string", `abc`, `abc`, ErrSyntax},
		{"empty input", ``, ``, ErrSyntax},
		{"unterminated", `"abc`, ``, ErrString},
		{"unterminated after escape", `"a\n`, ``, ErrString},
		{"escape at end", `"a\`, ``, ErrString},
		{"control character", "\"a\x01b\"", "\x01", ErrString},
		{"raw newline", "\"a\nb\"", "\n", ErrString},
		{"unknown escape", `"\x41"`, `\`, ErrString},
		{"short unicode escape", `"\u12"`, `\`, ErrString},
		{"short unicode escape at end", `"\u12`, `\`, ErrString},
		{"bad hex", `"\u12g4"`, `\`, ErrString},
		{"invalid utf-8", "\"a\xffb\"", "\xff", ErrUTF8},
		{"invalid utf-8 after escape", "\"\\n\xc3\"", "\xc3", ErrUTF8},
		{"truncated sequence at end", "\"\xe2\x82", "\xe2", ErrUTF8},
		{"encoded surrogate", "\"\xed\xa0\x80\"", "\xed", ErrUTF8},
		{"overlong", "\"\xc0\xaf\"", "\xc0", ErrUTF8},
		{"lone low surrogate", `"a\udc00"`, `\`, ErrUTF8},
		{"high then other", `"\ud800\u0041"`, `\`, ErrUTF8},
		{"high then bad hex", `"\ud800\u12g4"`, `\`, ErrUTF8},
		{"high then short escape", `"\ud800\n"`, `\`, ErrUTF8},
		{"reversed pair", `"\ude00\ud83d"`, `\`, ErrUTF8},
		{"high at end of string", `"\ud800"`, `\`, ErrUTF8},
		{"high at end of input", `"\ud800`, `\`, ErrUTF8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, end, err := String([]byte(tc.in), 0)
			want := len(tc.in)
			if tc.at != "" {
				want = strings.Index(tc.in, tc.at)
			}
			if err != tc.err || end != want {
				t.Errorf("String = %v at %d, want %v at %d", err, end, tc.err, want)
			}
		})
	}
}

func TestRune(t *testing.T) {
	raw := []byte(`a\n\u00e9é\ud83d\ude00😀`)
	type step struct {
		R rune
		N int
	}
	var got []step
	for i := 0; i < len(raw); {
		r, n := Rune(raw, i)
		got = append(got, step{r, n})
		i += n
	}
	want := []step{{'a', 1}, {'\n', 2}, {'é', 6}, {'é', 2}, {'😀', 12}, {'😀', 4}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Rune (-want +got):\n%s", diff)
	}
}

// TestEqualRaw compares contents with and without escapes.
func TestEqualRaw(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`abc`, `abc`, true},
		{`abc`, `abd`, false},
		{`abc`, `ab`, false},
		{`a\u0062c`, `abc`, true},
		{`abc`, `a\u0062c`, true},
		{`\u00e9`, "\u00e9", true},
		{`\ud83d\ude00`, "\U0001F600", true},
		{`\ud83d\ude00`, `\ud83d\ude01`, false},
		{`a\/`, `a/`, true},
		{`a\/`, `a/x`, false},
		{`\n`, `\u000a`, true},
		{`\n`, `\u000A`, true},
		{`\n`, `n`, false},
	} {
		got := EqualRaw([]byte(tc.a), strings.Contains(tc.a, `\`), []byte(tc.b), strings.Contains(tc.b, `\`))
		if got != tc.want {
			t.Errorf("EqualRaw(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		equal     bool
	}{
		{`abc`, "abc", true},
		{`abc`, "ab", false},
		{`a\u0062c`, "abc", true},
		{`a\u0062c`, "abcd", false},
		{`a\u0062c`, "ab", false},
		{`\u00e9`, "é", true},
		{`\u00e9`, "e", false},
		{`\ud83d\ude00!`, "😀!", true},
		{`\ud83d\ude00`, "😁", false},
		{`\t`, "\t", true},
		{``, "", true},
	} {
		if got := Equal([]byte(tc.raw), strings.Contains(tc.raw, `\`), tc.want); got != tc.equal {
			t.Errorf("Equal(%q, %q) = %v, want %v", tc.raw, tc.want, got, tc.equal)
		}
	}
}
