package jsonlex

import (
	"strings"
	"testing"
)

func TestSpace(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"x", 0}, {" \t\r\nx", 4}, {"  ", 2}, {"\fx", 0}, {"\u00a0x", 0},
	} {
		if got := Space([]byte(tc.in), 0); got != tc.want {
			t.Errorf("Space(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		in, lit string
		want    bool
	}{
		{"true", "true", true}, {"true,", "true", true}, {"tru", "true", false},
		{"True", "true", false}, {"null", "null", true}, {"nul", "null", false},
		{"", "false", false},
	} {
		if got := Literal([]byte(tc.in), 0, tc.lit); got != tc.want {
			t.Errorf("Literal(%q, %q) = %v, want %v", tc.in, tc.lit, got, tc.want)
		}
	}
}

// TestSkipAccepts: the value ends where its text does; what follows is
// the caller's.
func TestSkipAccepts(t *testing.T) {
	for _, tc := range []struct{ name, value, after string }{
		{"object", `{"a":1,"b":[true,false,null],"c":{}}`, ""},
		{"white space everywhere", " { \"a\" : [ 1 , 2 ] , \"b\" :\t\"x\" } ", " "},
		{"empty array", `[]`, ",1"},
		{"empty object with space", "{ \n}", "}"},
		{"string", `"a\u0062"`, `"`},
		{"number", `-1.5e3`, `]`},
		{"literal", `null`, `x`},
		{"duplicate keys", `{"a":1,"a":2}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.value + tc.after
			end, err := Skip([]byte(in), 0, 0, 4)
			if err != nil || end != len(strings.TrimRight(tc.value, " ")) {
				t.Errorf("Skip = %d, %v; want %d", end, err, len(strings.TrimRight(tc.value, " ")))
			}
		})
	}
}

// TestSkipRefuses: at marks the fault (empty: the end of the input).
func TestSkipRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, at string
		err          error
	}{
		{"empty", "", "", ErrSyntax},
		{"space only", "  ", "", ErrSyntax},
		{"unknown token", "x", "x", ErrSyntax},
		{"truncated literal", "tru", "tru", ErrSyntax},
		{"capital literal", "True", "True", ErrSyntax},
		{"trailing comma in array", "[1,]", "]", ErrSyntax},
		{"trailing comma in object", `{"a":1,}`, "}", ErrSyntax},
		{"missing comma", "[1 2]", "2", ErrSyntax},
		{"missing colon", `{"a" 1}`, "1", ErrSyntax},
		{"key not a string", `{a:1}`, "a", ErrSyntax},
		{"unterminated array", "[1", "", ErrSyntax},
		{"unterminated object", `{"a":1`, "", ErrSyntax},
		{"bad number", "[-]", "]", ErrSyntax},
		{"bad escape in key", `{"\q":1}`, `\`, ErrString},
		{"lone surrogate in value", `["\udc00"]`, `\`, ErrUTF8},
		{"invalid utf-8 in key", "{\"\xff\":1}", "\xff", ErrUTF8},
		{"single quotes", `'a'`, `'`, ErrSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end, err := Skip([]byte(tc.in), 0, 0, 4)
			want := len(tc.in)
			if tc.at != "" {
				want = strings.Index(tc.in, tc.at)
			}
			if err != tc.err || end != want {
				t.Errorf("Skip = %v at %d, want %v at %d", err, end, tc.err, want)
			}
		})
	}
}

// TestSkipDepth: a value at the bound passes, scalar or container; one
// past it fails, even a scalar.
func TestSkipDepth(t *testing.T) {
	const maxDepth = 3
	for _, tc := range []struct {
		name string
		in   string
		err  error
	}{
		{"scalar at the bound", "[[[1]]]", nil},
		{"empty container at the bound", "[[[[]]]]", nil},
		{"object at the bound", `{"a":{"b":{"c":{}}}}`, nil},
		{"scalar past the bound", "[[[[1]]]]", ErrDepth},
		{"container past the bound", "[[[[[]]]]]", ErrDepth},
		{"object member past the bound", `{"a":{"b":{"c":{"d":1}}}}`, ErrDepth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Skip([]byte(tc.in), 0, 0, maxDepth); err != tc.err {
				t.Errorf("Skip = %v, want %v", err, tc.err)
			}
		})
	}
	if _, err := Skip([]byte("1"), 0, maxDepth+1, maxDepth); err != ErrDepth {
		t.Errorf("Skip of a scalar past the bound = %v, want ErrDepth", err)
	}
}

func TestNextAndKey(t *testing.T) {
	in := []byte(`{ "a\u0062" : 1 , "c":2 }`)
	i, more, err := Next(in, 1, true, '}')
	if err != nil || !more || i != 2 {
		t.Fatalf("Next first = %d, %v, %v", i, more, err)
	}
	key, esc, i, err := Key(in, i)
	if err != nil || !esc || !Equal(key, esc, "ab") || in[i] != ' ' || in[i+1] != '1' {
		t.Fatalf("Key = %q, %v, %d, %v", key, esc, i, err)
	}
	i, more, err = Next(in, i+2, false, '}')
	if err != nil || !more || in[i] != ' ' {
		t.Fatalf("Next after a member = %d, %v, %v", i, more, err)
	}
	key, _, i, err = Key(in, i)
	if err != nil || string(key) != "c" || in[i] != '2' {
		t.Fatalf("second Key = %q, %d, %v", key, i, err)
	}
	i, more, err = Next(in, i+1, false, '}')
	if err != nil || more || i != len(in) {
		t.Fatalf("Next at the end = %d, %v, %v", i, more, err)
	}
	if _, _, err := Next([]byte(`1 2`), 1, false, ']'); err != ErrSyntax {
		t.Errorf("Next without a comma = %v, want ErrSyntax", err)
	}
}
