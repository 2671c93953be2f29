package jsontree

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreSpans compares trees by content only.
var ignoreSpans = cmpopts.IgnoreFields(Node{}, "Start", "End")

func str(s string) *Node { return &Node{Kind: KindString, Text: s} }
func num(s string) *Node { return &Node{Kind: KindNumber, Text: s} }
func arr(e ...*Node) *Node {
	return &Node{Kind: KindArray, Elems: e}
}
func obj(m ...Member) *Node {
	return &Node{Kind: KindObject, Members: m}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  *Node
	}{
		{"null", `null`, &Node{Kind: KindNull}},
		{"true", `true`, &Node{Kind: KindBool, Bool: true}},
		{"false", `false`, &Node{Kind: KindBool}},
		{"integer", `42`, num("42")},
		{"number text kept", `[1e2,-0,1.50,1E+2]`, arr(num("1e2"), num("-0"), num("1.50"), num("1E+2"))},
		{"string", `"a"`, str("a")},
		{"empty array", `[]`, arr()},
		{"empty object", `{}`, obj()},
		{"white space around", " \t\r\n{\"a\" : [ 1 , 2 ] }\n", obj(Member{"a", arr(num("1"), num("2"))})},
		{"members in input order", `{"b":1,"a":2}`, obj(Member{"b", num("1")}, Member{"a", num("2")})},
		{"duplicate keys kept", `{"a":1,"b":2,"a":"x","a":null}`, obj(
			Member{"a", num("1")}, Member{"b", num("2")}, Member{"a", str("x")}, Member{"a", &Node{Kind: KindNull}})},
		{"duplicate keys nested", `{"a":{"k":1,"k":2}}`, obj(Member{"a", obj(Member{"k", num("1")}, Member{"k", num("2")})})},
		{"empty key", `{"":1}`, obj(Member{"", num("1")})},
		{"escapes", `"\"\\\/\b\f\n\r\t"`, str("\"\\/\b\f\n\r\t")},
		{"unicode escape", `"\u00e9\u0041"`, str("éA")},
		{"surrogate pair", `"\ud83d\ude00"`, str("😀")},
		{"escaped key", `{"\u0061":1}`, obj(Member{"a", num("1")})},
		{"nested", `{"l":[{"k":[true]}]}`, obj(Member{"l", arr(obj(Member{"k", arr(&Node{Kind: KindBool, Bool: true})}))})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.input), 8)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreSpans); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFails(t *testing.T) {
	tests := []struct {
		name  string
		input string
		err   error
		path  string
	}{
		{"empty", ``, ErrSyntax, ""},
		{"white space only", " \n", ErrSyntax, ""},
		{"bare word", `nul`, ErrSyntax, ""},
		{"truncated object", `{"a":1`, ErrSyntax, ""},
		{"truncated inside a member", `{"a":{"b":[1,`, ErrSyntax, "a.b[1]"},
		{"truncated string", `{"a":"x`, ErrSyntax, "a"},
		{"missing comma", `{"a":1 "b":2}`, ErrSyntax, ""},
		{"missing colon", `{"a" 1}`, ErrSyntax, "a"},
		{"trailing comma", `[1,]`, ErrSyntax, "[1]"},
		{"key not a string", `{1:2}`, ErrSyntax, ""},
		{"single quotes", `{'a':1}`, ErrSyntax, ""},
		{"unclosed array", `[[1]`, ErrSyntax, ""},
		{"close without open", `]`, ErrSyntax, ""},
		{"bad escape", `{"a":"\x"}`, ErrSyntax, "a"},
		{"control character in string", "[\"a\nb\"]", ErrSyntax, "[0]"},
		{"leading zero", `[01]`, ErrSyntax, ""},
		{"lone high surrogate", `{"a":["\ud83d"]}`, ErrUTF8, "a[0]"},
		{"lone low surrogate", `["\ude00x"]`, ErrUTF8, "[0]"},
		{"invalid utf-8", "{\"a\":\"a\xffb\"}", ErrUTF8, "a"},
		{"invalid utf-8 in a key", "{\"a\":{\"k\xff\":1}}", ErrUTF8, "a"},
		{"overlong utf-8", "[\"\xc0\xaf\"]", ErrUTF8, "[0]"},
		{"path quotes odd keys", `{"A b":{"\n":[x]}}`, ErrSyntax, `["A b"]["\n"][0]`},
		{"trailing value", `{} {}`, ErrTrailingData, ""},
		{"trailing scalar", `1 2`, ErrTrailingData, ""},
		{"trailing garbage", `[]x`, ErrTrailingData, ""},
		{"trailing close", `{}}`, ErrTrailingData, ""},
		{"too deep", `{"a":[[[[[[[[1]]]]]]]]}`, ErrTooDeep, "a[0][0][0][0][0][0][0][0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, err := Parse([]byte(tc.input), 8)
			if root != nil {
				t.Errorf("Parse returned a tree with an error")
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("Parse error = %v, want %v", err, tc.err)
			}
			pe, ok := errors.AsType[*ParseError](err)
			if !ok {
				t.Fatalf("Parse error %T is not a *ParseError", err)
			}
			if diff := cmp.Diff(tc.path, pe.Path); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
		})
	}
}

// nest returns n arrays nested around inner.
func nest(n int, inner string) string {
	return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
}

func TestParseDepthLimit(t *testing.T) {
	const bound = 4
	tests := []struct {
		name  string
		input string
		err   error  // nil: accepted
		path  string // for ErrTooDeep
		depth int    // for an accepted tree
	}{
		{"scalar at the bound", nest(bound, `1`), nil, "", bound},
		{"empty container at the bound", nest(bound+1, ``), nil, "", bound},
		{"scalar one past the bound", nest(bound+1, `1`), ErrTooDeep, "[0][0][0][0][0]", 0},
		{"empty container one past the bound", nest(bound+2, ``), ErrTooDeep, "[0][0][0][0][0]", 0},
		{"objects at the bound", `{"a":{"b":{"c":{"d":{}}}}}`, nil, "", bound},
		{"objects one past the bound", `{"a":{"b":{"c":{"d":{"e":1}}}}}`, ErrTooDeep, "a.b.c.d.e", 0},
		{"too deep after a sibling", `[` + nest(bound-1, `1`) + `,` + nest(bound, `1`) + `]`, ErrTooDeep, "[1][0][0][0][0]", 0},
		{"far past the bound", nest(10_000, ``), ErrTooDeep, "[0][0][0][0][0]", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, err := Parse([]byte(tc.input), bound)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Parse error = %v, want %v", err, tc.err)
			}
			if tc.err != nil {
				pe, _ := errors.AsType[*ParseError](err)
				if diff := cmp.Diff(tc.path, pe.Path); diff != "" {
					t.Errorf("path (-want +got):\n%s", diff)
				}
				return
			}
			if got := depth(root); got != tc.depth {
				t.Errorf("depth = %d, want %d", got, tc.depth)
			}
		})
	}
}

func TestParseDepthZero(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		maxDepth int
		err      error
	}{
		{"scalar at 0", `"a"`, 0, nil},
		{"empty array at 0", `[]`, 0, nil},
		{"empty object at 0", `{}`, 0, nil},
		{"array at 0", `[1]`, 0, ErrTooDeep},
		{"object at 0", `{"a":1}`, 0, ErrTooDeep},
		{"scalar at -1", `1`, -1, ErrTooDeep},
		{"empty array at -1", `[]`, -1, ErrTooDeep},
		{"array at 1", `[1]`, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse([]byte(tc.input), tc.maxDepth); !errors.Is(err, tc.err) {
				t.Errorf("Parse error = %v, want %v", err, tc.err)
			}
		})
	}
}

func TestSpans(t *testing.T) {
	//              0123456789012345678901234
	const input = ` {"a": [1, "x"] , "b":{}} `
	root, err := Parse([]byte(input), 8)
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ Start, End int64 }
	got := map[string]span{
		"":     {root.Start, root.End},
		"a":    {root.Members[0].Value.Start, root.Members[0].Value.End},
		"a[0]": {root.Members[0].Value.Elems[0].Start, root.Members[0].Value.Elems[0].End},
		"a[1]": {root.Members[0].Value.Elems[1].Start, root.Members[0].Value.Elems[1].End},
		"b":    {root.Members[1].Value.Start, root.Members[1].Value.End},
	}
	want := map[string]span{
		"":     {0, 25},  // the leading space, not the trailing one
		"a":    {5, 15},  // ": [1, \"x\"]"
		"a[0]": {8, 9},   // "1"
		"a[1]": {9, 14},  // ", \"x\""
		"b":    {21, 24}, // ":{}"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

func TestLocate(t *testing.T) {
	//              0         1         2         3
	//              0123456789012345678901234567890123456
	const input = `{"a":[1,{"k":true}],"B c":"v","a":2}`
	root, err := Parse([]byte(input), 8)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		off  int64
		want string
	}{
		{0, ""},                 // '{'
		{1, ""},                 // the key "a" belongs to the object
		{4, "a"},                // ':'
		{5, "a"},                // '['
		{6, "a[0]"},             // '1'
		{7, "a[1]"},             // ','
		{12, "a[1].k"},          // ':'
		{16, "a[1].k"},          // 'e'
		{17, "a[1]"},            // '}'
		{18, "a"},               // ']'
		{19, ""},                // ','
		{25, `["B c"]`},         // ':'
		{28, `["B c"]`},         // '"'
		{33, "a"},               // the duplicate "a" has its own span
		{35, ""},                // '}'
		{36, ""},                // past the end
		{-1, ""},                // before the start
		{int64(len(input)), ""}, // at the end
	}
	for _, tc := range tests {
		if got := root.Locate(tc.off); got != tc.want {
			t.Errorf("Locate(%d) = %q, want %q", tc.off, got, tc.want)
		}
	}
	var none *Node
	if got := none.Locate(3); got != "" {
		t.Errorf("nil Locate = %q, want \"\"", got)
	}
}

// depth returns the depth of the deepest value under n, n itself being
// at depth 0 and the elements or members of a container at depth d at
// d+1. An empty container adds no depth.
func depth(n *Node) int {
	d := 0
	for _, m := range n.Members {
		d = max(d, 1+depth(m.Value))
	}
	for _, e := range n.Elems {
		d = max(d, 1+depth(e))
	}
	return d
}

func TestDepth(t *testing.T) {
	tests := []struct {
		input string
		want  int
	}{
		{`1`, 0},
		{`[]`, 0},
		{`{}`, 0},
		{`[1]`, 1},
		{`[[]]`, 1},
		{`{"a":[1,[2]],"b":3}`, 3},
		{`[[[[1]]],2]`, 4},
	}
	for _, tc := range tests {
		root, err := Parse([]byte(tc.input), 8)
		if err != nil {
			t.Fatal(err)
		}
		if got := depth(root); got != tc.want {
			t.Errorf("depth(%s) = %d, want %d", tc.input, got, tc.want)
		}
	}
}

func TestKindString(t *testing.T) {
	want := []string{"null", "bool", "number", "string", "array", "object"}
	var got []string
	for k := KindNull; k < kindEnd; k++ {
		got = append(got, k.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kind names (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		k    Kind
		want string
	}{{0, "Kind(0)"}, {kindEnd, "Kind(7)"}} {
		if got := tc.k.String(); got != tc.want {
			t.Errorf("Kind(%d).String() = %q, want %q", tc.k, got, tc.want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, sentinel := range []error{ErrSyntax, ErrUTF8, ErrTooDeep, ErrTrailingData} {
		if !strings.HasPrefix(sentinel.Error(), "jsontree: ") {
			t.Errorf("%q lacks the package prefix", sentinel.Error())
		}
		err := error(&ParseError{Path: `["secret"]`, Err: sentinel})
		if !errors.Is(err, sentinel) {
			t.Errorf("*ParseError does not match %v", sentinel)
		}
		if err.Error() != sentinel.Error() {
			t.Errorf("*ParseError message %q is not the sentinel's", err.Error())
		}
	}
}

func TestParseErrorOffset(t *testing.T) {
	tests := []struct {
		input string
		err   error
		off   int64
	}{
		{``, ErrSyntax, 0},
		{`{"a":1 "b":2}`, ErrSyntax, 7},
		{`{"a" 1}`, ErrSyntax, 5},
		{"[\"ok\",\"a\xffb\"]", ErrUTF8, 8},
		{`["\ud83d"]`, ErrUTF8, 2},
		{`[[[1]]]`, ErrTooDeep, 2},
		{`{} x`, ErrTrailingData, 3},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(tc.input), 1)
		pe, ok := errors.AsType[*ParseError](err)
		if !ok || pe.Err != tc.err || pe.Offset != tc.off {
			t.Errorf("Parse(%q) = %v (%+v), want %v at offset %d", tc.input, err, pe, tc.err, tc.off)
		}
	}
}

// TestInt: a number written as an integer within bitSize is its value; a
// fraction, an exponent or another kind is ErrWrongType; past the range,
// strconv's ErrRange.
func TestInt(t *testing.T) {
	for _, tt := range []struct {
		doc     string
		bits    int
		want    int64
		wantErr error
	}{
		{"0", 64, 0, nil},
		{"-0", 64, 0, nil},
		{"-12", 64, -12, nil},
		{"9223372036854775807", 64, 1<<63 - 1, nil},
		{"-9223372036854775808", 64, -1 << 63, nil},
		{"9223372036854775808", 64, 1<<63 - 1, strconv.ErrRange},
		{"2147483648", 32, 1<<31 - 1, strconv.ErrRange},
		{"1.0", 64, 0, ErrWrongType},
		{"1e3", 64, 0, ErrWrongType},
		{"1E3", 64, 0, ErrWrongType},
		{`"1"`, 64, 0, ErrWrongType},
		{"true", 64, 0, ErrWrongType},
	} {
		n, err := Parse([]byte(tt.doc), 0)
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.doc, err)
		}
		got, err := n.Int(tt.bits)
		if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("Int(%d) of %s = %d, %v; want %d, %v", tt.bits, tt.doc, got, err, tt.want, tt.wantErr)
		}
	}
}
