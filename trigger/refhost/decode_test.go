package refhost_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

func TestDecodeBool(t *testing.T) {
	runAccept(t, []accept{
		{name: "true", typ: "bool", in: "true", want: true},
		{name: "false", typ: "bool", in: "false", want: false},
		{name: "whitespace", typ: "bool", in: " \t\r\ntrue\n", want: true, canon: "true"},
	})
	runRefuse(t, []refuse{
		{name: "number", typ: "bool", in: "1", rule: refhost.RuleWrongType},
		{name: "string", typ: "bool", in: `"true"`, rule: refhost.RuleWrongType},
		{name: "null", typ: "bool", in: "null", rule: refhost.RuleWrongType},
		{name: "truncated", typ: "bool", in: "tru", rule: refhost.RuleSyntax},
		{name: "upper case", typ: "bool", in: "True", rule: refhost.RuleSyntax},
		{name: "trailing letter", typ: "bool", in: "truex", rule: refhost.RuleSyntax, at: "x", whole: true},
	})
}

// intBounds lists each integer kind's range as decimal text.
type intBound struct {
	typ, min, max, below, above string
	minV, maxV                  any
}

func intBounds() []intBound {
	return []intBound{
		{"s8", "-128", "127", "-129", "128", int8(math.MinInt8), int8(math.MaxInt8)},
		{"s16", "-32768", "32767", "-32769", "32768", int16(math.MinInt16), int16(math.MaxInt16)},
		{"s32", "-2147483648", "2147483647", "-2147483649", "2147483648", int32(math.MinInt32), int32(math.MaxInt32)},
		{"s64", "-9223372036854775808", "9223372036854775807", "-9223372036854775809", "9223372036854775808", int64(math.MinInt64), int64(math.MaxInt64)},
		{"u8", "0", "255", "-1", "256", uint8(0), uint8(math.MaxUint8)},
		{"u16", "0", "65535", "-1", "65536", uint16(0), uint16(math.MaxUint16)},
		{"u32", "0", "4294967295", "-1", "4294967296", uint32(0), uint32(math.MaxUint32)},
		{"u64", "0", "18446744073709551615", "-1", "18446744073709551616", uint64(0), uint64(math.MaxUint64)},
	}
}

func TestDecodeIntegerBounds(t *testing.T) {
	var acc []accept
	var ref []refuse
	for _, b := range intBounds() {
		acc = append(acc,
			accept{name: b.typ + " min", typ: b.typ, in: b.min, want: b.minV},
			accept{name: b.typ + " max", typ: b.typ, in: b.max, want: b.maxV})
		ref = append(ref,
			refuse{name: b.typ + " below min", typ: b.typ, in: b.below, rule: refhost.RuleOutOfRange},
			refuse{name: b.typ + " above max", typ: b.typ, in: b.above, rule: refhost.RuleOutOfRange})
	}
	runAccept(t, acc)
	runRefuse(t, ref)
}

func TestDecodeInteger(t *testing.T) {
	runAccept(t, []accept{
		{name: "zero", typ: "s32", in: "0", want: int32(0)},
		{name: "negative", typ: "s16", in: "-7", want: int16(-7)},
		{name: "u64 above 2^53", typ: "u64", in: "9007199254740993", want: uint64(9007199254740993)},
	})
	runRefuse(t, []refuse{
		{name: "fraction", typ: "u8", in: "1.0", rule: refhost.RuleNotInteger},
		{name: "exponent", typ: "u32", in: "1e2", rule: refhost.RuleNotInteger},
		{name: "exponent upper", typ: "s64", in: "1E2", rule: refhost.RuleNotInteger},
		{name: "negative zero", typ: "s8", in: "-0", rule: refhost.RuleNotInteger},
		{name: "negative zero unsigned", typ: "u8", in: "-0", rule: refhost.RuleNotInteger},
		{name: "leading zero", typ: "u8", in: "01", rule: refhost.RuleSyntax, at: "1", whole: true},
		{name: "plus", typ: "u8", in: "+1", rule: refhost.RuleSyntax},
		{name: "minus alone", typ: "s8", in: "-", rule: refhost.RuleSyntax, at: "]"},
		{name: "minus space", typ: "s8", in: "- 1", rule: refhost.RuleSyntax, at: " "},
		{name: "string", typ: "u64", in: `"1"`, rule: refhost.RuleWrongType},
		{name: "null", typ: "s32", in: "null", rule: refhost.RuleWrongType},
		{name: "overflows uint64", typ: "u64", in: "100000000000000000000", rule: refhost.RuleOutOfRange},
		{name: "overflows far", typ: "s64", in: "-" + strings.Repeat("9", 40), rule: refhost.RuleOutOfRange},
		{name: "dot without digits", typ: "u8", in: "1.", rule: refhost.RuleSyntax, at: "]"},
		{name: "hex", typ: "u8", in: "0x1", rule: refhost.RuleSyntax, at: "x", whole: true},
	})
}

func TestDecodeFloat(t *testing.T) {
	runAccept(t, []accept{
		{name: "f64 integer form", typ: "f64", in: "1", want: 1.0},
		{name: "f64 fraction", typ: "f64", in: "1.5", want: 1.5},
		{name: "f64 exponent", typ: "f64", in: "2.5E+3", want: 2500.0, canon: "2500"},
		{name: "f64 negative zero", typ: "f64", in: "-0.0", want: math.Copysign(0, -1), canon: "-0"},
		{name: "f64 max", typ: "f64", in: "1.7976931348623157e308", want: math.MaxFloat64, canon: "17976931348623157e292"},
		{name: "f64 rounds to max", typ: "f64", in: "1.7976931348623158e308", want: math.MaxFloat64, canon: "17976931348623157e292"},
		{name: "f64 smallest", typ: "f64", in: "5e-324", want: math.SmallestNonzeroFloat64},
		{name: "f64 underflow is zero", typ: "f64", in: "1e-400", want: 0.0, canon: "0"},
		{name: "f64 nan", typ: "f64", in: `"nan"`, want: math.NaN()},
		{name: "f64 inf", typ: "f64", in: `"inf"`, want: math.Inf(1)},
		{name: "f64 -inf", typ: "f64", in: `"-inf"`, want: math.Inf(-1)},
		{name: "f64 escaped nan", typ: "f64", in: `"\u006ean"`, want: math.NaN(), canon: `"nan"`},
		{name: "f64 plain shorter", typ: "f64", in: "1e2", want: 100.0, canon: "100"},
		{name: "f64 exponent shorter", typ: "f64", in: "100000", want: 1e5, canon: "1e5"},
		{name: "f64 integer mantissa", typ: "f64", in: "1.23e7", want: 1.23e7, canon: "123e5"},
		{name: "f64 small", typ: "f64", in: "0.001", want: 0.001, canon: "1e-3"},
		{name: "f64 tie keeps plain", typ: "f64", in: "0.01", want: 0.01},
		{name: "f64 fraction plain", typ: "f64", in: "-1234.5", want: -1234.5},
		{name: "f32 tenth", typ: "f32", in: "0.1", want: float32(0.1)},
		{name: "f32 max", typ: "f32", in: "3.4028234663852886e38", want: float32(math.MaxFloat32), canon: "34028235e31"},
		{name: "f32 smallest", typ: "f32", in: "1e-45", want: float32(math.SmallestNonzeroFloat32)},
		{name: "f32 rounds", typ: "f32", in: "16777217", want: float32(16777216), canon: "16777216"},
		{name: "f32 nan", typ: "f32", in: `"nan"`, want: float32(math.NaN())},
		{name: "f32 -inf", typ: "f32", in: `"-inf"`, want: float32(math.Inf(-1))},
	})
	runRefuse(t, []refuse{
		{name: "f64 overflow", typ: "f64", in: "1e309", rule: refhost.RuleOutOfRange},
		{name: "f64 overflow negative", typ: "f64", in: "-2e308", rule: refhost.RuleOutOfRange},
		{name: "f32 overflow", typ: "f32", in: "3.5e38", rule: refhost.RuleOutOfRange},
		{name: "f32 overflow from f64 max", typ: "f32", in: "1.7976931348623157e308", rule: refhost.RuleOutOfRange},
		{name: "NaN spelling", typ: "f64", in: `"NaN"`, rule: refhost.RuleWrongType},
		{name: "Infinity spelling", typ: "f64", in: `"Infinity"`, rule: refhost.RuleWrongType},
		{name: "number in string", typ: "f64", in: `"1.5"`, rule: refhost.RuleWrongType},
		{name: "bare nan", typ: "f64", in: "nan", rule: refhost.RuleSyntax},
		{name: "leading dot", typ: "f64", in: ".5", rule: refhost.RuleSyntax},
		{name: "trailing dot", typ: "f64", in: "5.", rule: refhost.RuleSyntax, at: "]"},
		{name: "exponent without digits", typ: "f64", in: "5e+", rule: refhost.RuleSyntax, at: "]"},
		{name: "bool", typ: "f32", in: "true", rule: refhost.RuleWrongType},
	})
}

func TestDecodeChar(t *testing.T) {
	runAccept(t, []accept{
		{name: "ascii", typ: "char", in: `"a"`, want: 'a'},
		{name: "two-byte", typ: "char", in: `"é"`, want: 'é'},
		{name: "escaped pair", typ: "char", in: `"\ud83d\ude00"`, want: '😀', canon: `"😀"`},
		{name: "nul", typ: "char", in: `"\u0000"`, want: rune(0)},
		{name: "quote", typ: "char", in: `"\""`, want: '"'},
		{name: "max scalar", typ: "char", in: "\"\U0010FFFF\"", want: rune(0x10FFFF)},
	})
	runRefuse(t, []refuse{
		{name: "empty", typ: "char", in: `""`, rule: refhost.RuleNotOneChar},
		{name: "two", typ: "char", in: `"ab"`, rule: refhost.RuleNotOneChar},
		{name: "combining sequence", typ: "char", in: "\"e\u0301\"", rule: refhost.RuleNotOneChar},
		{name: "lone high surrogate", typ: "char", in: `"\ud800"`, rule: refhost.RuleInvalidUTF8, at: `\`},
		{name: "number", typ: "char", in: "97", rule: refhost.RuleWrongType},
	})
}

func TestDecodeString(t *testing.T) {
	runAccept(t, []accept{
		{name: "empty", typ: "string", in: `""`, want: ""},
		{name: "plain", typ: "string", in: `"hello"`, want: "hello"},
		{name: "utf-8", typ: "string", in: `"grüße 😀"`, want: "grüße 😀"},
		{name: "short escapes", typ: "string", in: `"\"\\\/\b\f\n\r\t"`, want: "\"\\/\b\f\n\r\t", canon: `"\"\\/\b\f\n\r\t"`},
		{name: "unicode escapes", typ: "string", in: `"\u0041\u00e9\u20AC"`, want: "Aé€", canon: `"Aé€"`},
		{name: "control escape", typ: "string", in: `"\u001f\u0000"`, want: "\x1f\x00"},
		{name: "del is raw", typ: "string", in: `"\u007f"`, want: "\x7f", canon: "\"\x7f\""},
		{name: "pair", typ: "string", in: `"x\uD834\uDD1Ey"`, want: "x𝄞y", canon: `"x𝄞y"`},
		{name: "line separator raw", typ: "string", in: "\"\u2028\"", want: "\u2028"},
	})
	runRefuse(t, []refuse{
		{name: "raw control", typ: "string", in: "\"a\tb\"", rule: refhost.RuleSyntax, at: "\t"},
		{name: "raw newline", typ: "string", in: "\"a\nb\"", rule: refhost.RuleSyntax, at: "\n"},
		{name: "raw control after escape", typ: "string", in: "\"\\n\x01\"", rule: refhost.RuleSyntax, at: "\x01"},
		{name: "invalid utf-8", typ: "string", in: "\"a\xffb\"", rule: refhost.RuleInvalidUTF8, at: "\xff"},
		{name: "invalid utf-8 after escape", typ: "string", in: "\"\\n\xc3\"", rule: refhost.RuleInvalidUTF8, at: "\xc3"},
		{name: "raw surrogate", typ: "string", in: "\"\xed\xa0\x80\"", rule: refhost.RuleInvalidUTF8, at: "\xed"},
		{name: "overlong", typ: "string", in: "\"\xc0\xaf\"", rule: refhost.RuleInvalidUTF8, at: "\xc0"},
		{name: "lone low surrogate", typ: "string", in: `"a\udc00"`, rule: refhost.RuleInvalidUTF8, at: `\`},
		{name: "high then other", typ: "string", in: `"\ud800\u0041"`, rule: refhost.RuleInvalidUTF8, at: `\`},
		{name: "reversed pair", typ: "string", in: `"\ude00\ud83d"`, rule: refhost.RuleInvalidUTF8, at: `\`},
		{name: "high at end", typ: "string", in: `"\ud800"`, rule: refhost.RuleInvalidUTF8, at: `\`},
		{name: "short unicode escape", typ: "string", in: `"\u12"`, rule: refhost.RuleSyntax, at: `\`},
		{name: "bad hex", typ: "string", in: `"\u12g4"`, rule: refhost.RuleSyntax, at: `\`},
		{name: "unknown escape", typ: "string", in: `"\x41"`, rule: refhost.RuleSyntax, at: `\`},
		{name: "single quotes", typ: "string", in: `'a'`, rule: refhost.RuleSyntax},
		{name: "number", typ: "string", in: "1", rule: refhost.RuleWrongType},
		{name: "array", typ: "string", in: `["a"]`, rule: refhost.RuleWrongType},
	})
}

func TestDecodeUnterminated(t *testing.T) {
	cases := []struct {
		name, typ, in string
		arg, at       int
	}{
		{"string", "string", `["abc`, 0, 5},
		{"string after escape", "string", `["a\n`, 0, 5},
		{"escape at end", "string", `["a\`, 0, 4},
		{"list", "list<u8>", `[[1,2`, 0, 5},
		{"record", "record{a: u8}", `[{"a":1`, 0, 7},
		{"array", "u8", `[1`, -1, 2},
		{"empty", "u8", ``, -1, 0},
		{"whitespace only", "u8", " \n", -1, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mustSig(t, tc.typ).Decode([]byte(tc.in))
			checkArgErr(t, &refhost.ArgumentError{Arg: tc.arg, Offset: tc.at, Rule: refhost.RuleSyntax}, err)
		})
	}
}

func TestDecodeList(t *testing.T) {
	runAccept(t, []accept{
		{name: "empty", typ: "list<u8>", in: "[]", want: []any{}},
		{name: "empty spaced", typ: "list<u8>", in: "[ ]", want: []any{}, canon: "[]"},
		{name: "bytes", typ: "list<u8>", in: "[1, 2,3]", want: []any{uint8(1), uint8(2), uint8(3)}, canon: "[1,2,3]"},
		{name: "nested", typ: "list<list<string>>", in: `[[],["a"]]`, want: []any{[]any{}, []any{"a"}}},
	})
	runRefuse(t, []refuse{
		{name: "element out of range", typ: "list<u8>", in: "[1,256]", rule: refhost.RuleOutOfRange, path: "[1]", at: "256"},
		{name: "nested path", typ: "list<list<u8>>", in: "[[],[0,0,-1]]", rule: refhost.RuleOutOfRange, path: "[1][2]", at: "-1"},
		{name: "trailing comma", typ: "list<u8>", in: "[1,]", rule: refhost.RuleSyntax, path: "[1]", at: "]"},
		{name: "leading comma", typ: "list<u8>", in: "[,1]", rule: refhost.RuleSyntax, path: "[0]", at: ","},
		{name: "missing comma", typ: "list<u8>", in: "[1 2]", rule: refhost.RuleSyntax, at: "2"},
		{name: "object", typ: "list<u8>", in: "{}", rule: refhost.RuleWrongType},
		{name: "string", typ: "list<u8>", in: `"AQI="`, rule: refhost.RuleWrongType},
	})
}

func TestDecodeTuple(t *testing.T) {
	runAccept(t, []accept{
		{name: "pair", typ: "tuple<u8, string>", in: `[1,"a"]`, want: []any{uint8(1), "a"}},
		{name: "single", typ: "tuple<bool>", in: "[ true ]", want: []any{true}, canon: "[true]"},
	})
	runRefuse(t, []refuse{
		{name: "empty", typ: "tuple<u8, u8>", in: "[]", rule: refhost.RuleLength, at: "]"},
		{name: "short", typ: "tuple<u8, u8>", in: "[1]", rule: refhost.RuleLength, at: "]"},
		{name: "long", typ: "tuple<u8, u8>", in: "[1,2,3]", rule: refhost.RuleLength, at: ",3"},
		{name: "member type", typ: "tuple<u8, string>", in: "[1,2]", rule: refhost.RuleWrongType, path: "[1]", at: "2"},
		{name: "separator", typ: "tuple<u8, u8>", in: "[1;2]", rule: refhost.RuleSyntax, at: ";"},
		{name: "end", typ: "tuple<u8>", in: "[1}", rule: refhost.RuleSyntax, at: "}"},
		{name: "object", typ: "tuple<u8>", in: `{"0":1}`, rule: refhost.RuleWrongType},
	})
}

func TestDecodeRecord(t *testing.T) {
	const typ = "record{id: u64, name: string}"
	want := map[string]any{"id": uint64(7), "name": "x"}
	runAccept(t, []accept{
		{name: "declared order", typ: typ, in: `{"id":7,"name":"x"}`, want: want},
		{name: "other order", typ: typ, in: `{ "name" : "x" , "id" : 7 }`, want: want, canon: `{"id":7,"name":"x"}`},
		{name: "escaped key", typ: typ, in: `{"\u0069d":7,"name":"x"}`, want: want, canon: `{"id":7,"name":"x"}`},
		{name: "kebab names", typ: "record{max-len: u8, HTTP-code: u16}", in: `{"max-len":1,"HTTP-code":200}`,
			want: map[string]any{"max-len": uint8(1), "HTTP-code": uint16(200)}},
		{name: "nested", typ: "record{inner: record{v: bool}}", in: `{"inner":{"v":true}}`,
			want: map[string]any{"inner": map[string]any{"v": true}}},
	})
	runRefuse(t, []refuse{
		{name: "missing", typ: typ, in: `{"id":7}`, rule: refhost.RuleMissingField, path: ".name", at: "}"},
		{name: "empty", typ: typ, in: `{}`, rule: refhost.RuleMissingField, path: ".id", at: "}"},
		{name: "unknown", typ: typ, in: `{"id":7,"name":"x","extra":1}`, rule: refhost.RuleUnknownField, at: `"extra"`},
		{name: "case differs", typ: typ, in: `{"ID":7,"name":"x"}`, rule: refhost.RuleUnknownField, at: `"ID"`},
		{name: "duplicate", typ: typ, in: `{"id":7,"name":"x","id":8}`, rule: refhost.RuleDuplicateKey, path: ".id", at: `"id":8`},
		{name: "duplicate escaped", typ: typ, in: `{"id":7,"\u0069d":8}`, rule: refhost.RuleDuplicateKey, path: ".id", at: `"\`},
		{name: "field type", typ: typ, in: `{"id":"7","name":"x"}`, rule: refhost.RuleWrongType, path: ".id", at: `"7"`},
		{name: "nested path", typ: "record{a: list<record{b: u8}>}", in: `{"a":[{"b":1},{"b":1.5}]}`, rule: refhost.RuleNotInteger, path: ".a[1].b", at: "1.5"},
		{name: "missing colon", typ: typ, in: `{"id" 7}`, rule: refhost.RuleSyntax, at: "7"},
		{name: "trailing comma", typ: typ, in: `{"id":7,}`, rule: refhost.RuleSyntax, at: "}"},
		{name: "unquoted key", typ: typ, in: `{id:7}`, rule: refhost.RuleSyntax, at: "id"},
		{name: "separator", typ: typ, in: `{"id":7;`, rule: refhost.RuleSyntax, at: ";"},
		{name: "array", typ: typ, in: `[7,"x"]`, rule: refhost.RuleWrongType},
		{name: "null", typ: typ, in: `null`, rule: refhost.RuleWrongType},
	})
}

func TestDecodeOption(t *testing.T) {
	runAccept(t, []accept{
		{name: "none", typ: "option<u8>", in: "null", want: refhost.OptionValue{}},
		{name: "some", typ: "option<u8>", in: "3", want: refhost.Some(uint8(3))},
		{name: "some string", typ: "option<string>", in: `"x"`, want: refhost.Some("x")},
		{name: "nested none", typ: "option<option<u8>>", in: "null", want: refhost.OptionValue{}},
		{name: "nested some none", typ: "option<option<u8>>", in: `{"some":null}`, want: refhost.Some(refhost.OptionValue{})},
		{name: "nested some some", typ: "option<option<u8>>", in: `{ "some" : 3 }`, want: refhost.Some(refhost.Some(uint8(3))), canon: `{"some":3}`},
		{name: "triple some some none", typ: "option<option<option<u8>>>", in: `{"some":{"some":null}}`,
			want: refhost.Some(refhost.Some(refhost.OptionValue{}))},
		{name: "triple some some some", typ: "option<option<option<u8>>>", in: `{"some":{"some":4}}`,
			want: refhost.Some(refhost.Some(refhost.Some(uint8(4))))},
		{name: "option of list", typ: "option<list<u8>>", in: `[]`, want: refhost.Some([]any{})},
		{name: "list of options", typ: "list<option<bool>>", in: `[null,true]`, want: []any{refhost.OptionValue{}, refhost.Some(true)}},
	})
	runRefuse(t, []refuse{
		{name: "some type", typ: "option<u8>", in: `"3"`, rule: refhost.RuleWrongType, path: ".some"},
		{name: "nested bare value", typ: "option<option<u8>>", in: "3", rule: refhost.RuleWrongType},
		{name: "nested wrong key", typ: "option<option<u8>>", in: `{"Some":3}`, rule: refhost.RuleUnknownCase, at: `"`},
		{name: "nested empty", typ: "option<option<u8>>", in: `{}`, rule: refhost.RuleMemberCount, at: "}"},
		{name: "nested two members", typ: "option<option<u8>>", in: `{"some":3,"x":1}`, rule: refhost.RuleMemberCount, at: `"x"`},
		{name: "nested duplicate", typ: "option<option<u8>>", in: `{"some":3,"some":4}`, rule: refhost.RuleDuplicateKey, at: `"some":4`},
		{name: "nested inner type", typ: "option<option<u8>>", in: `{"some":true}`, rule: refhost.RuleWrongType, path: ".some.some", at: "true"},
		{name: "non-nested wrapper", typ: "option<u8>", in: `{"some":3}`, rule: refhost.RuleWrongType, path: ".some"},
		{name: "null misspelt", typ: "option<u8>", in: "nul", rule: refhost.RuleSyntax},
	})
}

func TestDecodeEnum(t *testing.T) {
	const typ = "enum{red, green, blue-ish}"
	runAccept(t, []accept{
		{name: "first", typ: typ, in: `"red"`, want: "red"},
		{name: "kebab", typ: typ, in: `"blue-ish"`, want: "blue-ish"},
	})
	runRefuse(t, []refuse{
		{name: "unknown", typ: typ, in: `"purple"`, rule: refhost.RuleUnknownCase},
		{name: "case differs", typ: typ, in: `"Red"`, rule: refhost.RuleUnknownCase},
		{name: "index", typ: typ, in: `0`, rule: refhost.RuleWrongType},
		{name: "object", typ: typ, in: `{"red":null}`, rule: refhost.RuleWrongType},
	})
}

func TestDecodeVariant(t *testing.T) {
	const typ = "variant{none, num(u32), pair(tuple<u8, u8>), opt(option<u8>)}"
	runAccept(t, []accept{
		{name: "no payload", typ: typ, in: `{"none":null}`, want: refhost.VariantValue{Case: "none"}},
		{name: "payload", typ: typ, in: `{"num": 5}`, want: refhost.VariantValue{Case: "num", Value: uint32(5)}, canon: `{"num":5}`},
		{name: "tuple payload", typ: typ, in: `{"pair":[1,2]}`, want: refhost.VariantValue{Case: "pair", Value: []any{uint8(1), uint8(2)}}},
		{name: "option payload none", typ: typ, in: `{"opt":null}`, want: refhost.VariantValue{Case: "opt", Value: refhost.OptionValue{}}},
		{name: "option payload some", typ: typ, in: `{"opt":1}`, want: refhost.VariantValue{Case: "opt", Value: refhost.Some(uint8(1))}},
	})
	runRefuse(t, []refuse{
		{name: "payload on no-payload case", typ: typ, in: `{"none":1}`, rule: refhost.RuleWrongType, path: ".none", at: "1"},
		{name: "null on payload case", typ: typ, in: `{"num":null}`, rule: refhost.RuleWrongType, path: ".num", at: "null"},
		{name: "unknown case", typ: typ, in: `{"other":1}`, rule: refhost.RuleUnknownCase, at: `"`},
		{name: "empty object", typ: typ, in: `{}`, rule: refhost.RuleMemberCount, at: "}"},
		{name: "two cases", typ: typ, in: `{"num":1,"none":null}`, rule: refhost.RuleMemberCount, at: `"none"`},
		{name: "duplicate case", typ: typ, in: `{"num":1,"num":2}`, rule: refhost.RuleDuplicateKey, at: `"num":2`},
		{name: "bare name", typ: typ, in: `"none"`, rule: refhost.RuleWrongType},
		{name: "payload path", typ: typ, in: `{"pair":[1,"x"]}`, rule: refhost.RuleWrongType, path: ".pair[1]", at: `"x"`},
		{name: "null misspelt", typ: typ, in: `{"none":nil}`, rule: refhost.RuleSyntax, path: ".none", at: "nil"},
		{name: "not closed", typ: typ, in: `{"none":null]`, rule: refhost.RuleSyntax, at: "]"},
		{name: "comma then garbage", typ: typ, in: `{"none":null,1}`, rule: refhost.RuleSyntax, at: "1"},
	})
}

func TestDecodeResult(t *testing.T) {
	runAccept(t, []accept{
		{name: "ok", typ: "result<u8, string>", in: `{"ok":1}`, want: refhost.ResultValue{Value: uint8(1)}},
		{name: "err", typ: "result<u8, string>", in: `{"err":"no"}`, want: refhost.ResultValue{Err: true, Value: "no"}},
		{name: "bare ok", typ: "result", in: `{"ok":null}`, want: refhost.ResultValue{}},
		{name: "bare err", typ: "result", in: `{"err":null}`, want: refhost.ResultValue{Err: true}},
		{name: "ok only err", typ: "result<u8>", in: `{"err":null}`, want: refhost.ResultValue{Err: true}},
		{name: "err only ok", typ: "result<_, u8>", in: `{"ok":null}`, want: refhost.ResultValue{}},
	})
	runRefuse(t, []refuse{
		{name: "both", typ: "result<u8, u8>", in: `{"ok":1,"err":2}`, rule: refhost.RuleMemberCount, at: `"err"`},
		{name: "unknown side", typ: "result<u8, u8>", in: `{"Ok":1}`, rule: refhost.RuleUnknownCase, at: `"`},
		{name: "payload on empty side", typ: "result<u8>", in: `{"err":1}`, rule: refhost.RuleWrongType, path: ".err", at: "1"},
		{name: "ok type", typ: "result<u8, u8>", in: `{"ok":-1}`, rule: refhost.RuleOutOfRange, path: ".ok", at: "-1"},
		{name: "empty", typ: "result", in: `{}`, rule: refhost.RuleMemberCount, at: "}"},
	})
}

func TestDecodeArray(t *testing.T) {
	sig2 := mustSig(t, "u8", "string")
	sig0 := mustSig(t)
	cases := []struct {
		name string
		sig  *refhost.Signature
		in   string
		want *refhost.ArgumentError
	}{
		{"empty input", sig2, "", &refhost.ArgumentError{Arg: -1, Offset: 0, Rule: refhost.RuleSyntax}},
		{"object", sig2, "{}", &refhost.ArgumentError{Arg: -1, Offset: 0, Rule: refhost.RuleWrongType}},
		{"bare value", sig2, "1", &refhost.ArgumentError{Arg: -1, Offset: 0, Rule: refhost.RuleWrongType}},
		{"byte order mark", sig2, "\ufeff[1,\"a\"]", &refhost.ArgumentError{Arg: -1, Offset: 0, Rule: refhost.RuleSyntax}},
		{"too few", sig2, "[1]", &refhost.ArgumentError{Arg: -1, Offset: 2, Rule: refhost.RuleArgCount}},
		{"none for two", sig2, "[ ]", &refhost.ArgumentError{Arg: -1, Offset: 2, Rule: refhost.RuleArgCount}},
		{"too many", sig2, `[1,"a",2]`, &refhost.ArgumentError{Arg: -1, Offset: 7, Rule: refhost.RuleArgCount}},
		{"one for none", sig0, `[1]`, &refhost.ArgumentError{Arg: -1, Offset: 1, Rule: refhost.RuleArgCount}},
		{"trailing comma", sig2, `[1,"a",]`, &refhost.ArgumentError{Arg: -1, Offset: 7, Rule: refhost.RuleSyntax}},
		{"second argument", sig2, `[1,2]`, &refhost.ArgumentError{Arg: 1, Offset: 3, Rule: refhost.RuleWrongType}},
		{"trailing data", sig2, `[1,"a"] x`, &refhost.ArgumentError{Arg: -1, Offset: 8, Rule: refhost.RuleTrailingData}},
		{"two arrays", sig2, `[1,"a"][1,"a"]`, &refhost.ArgumentError{Arg: -1, Offset: 7, Rule: refhost.RuleTrailingData}},
		{"trailing nul", sig2, "[1,\"a\"]\x00", &refhost.ArgumentError{Arg: -1, Offset: 7, Rule: refhost.RuleTrailingData}},
		{"separator", sig2, `[1;"a"]`, &refhost.ArgumentError{Arg: -1, Offset: 2, Rule: refhost.RuleSyntax}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.sig.Decode([]byte(tc.in))
			checkArgErr(t, tc.want, err)
		})
	}
	t.Run("no parameters", func(t *testing.T) {
		got, err := sig0.Decode([]byte(" [ ] \n"))
		if err != nil || len(got) != 0 {
			t.Fatalf("Decode = %v, %v; want no values", got, err)
		}
	})
}

// TestDecodePayloadLimit checks MaxPayloadBytes at the limit and one past
// it, whitespace counted.
func TestDecodePayloadLimit(t *testing.T) {
	sig := mustSig(t, "string")
	body := `["` + strings.Repeat("a", refhost.MaxPayloadBytes-4) + `"]`
	if len(body) != refhost.MaxPayloadBytes {
		t.Fatalf("test payload is %d bytes", len(body))
	}
	if _, err := sig.Decode([]byte(body)); err != nil {
		t.Errorf("Decode at the limit: %v", err)
	}
	_, err := sig.Decode([]byte(body + " "))
	checkArgErr(t, &refhost.ArgumentError{Arg: -1, Offset: 0, Rule: refhost.RuleTooLarge}, err)
}

// TestDecodeDeepPayload feeds nesting far past MaxTypeDepth: the decoder
// follows the declared type and stops where the payload leaves it.
func TestDecodeDeepPayload(t *testing.T) {
	sig := mustSig(t, "list<list<u8>>")
	in := "[" + strings.Repeat("[", refhost.MaxPayloadBytes-2) + "]"
	_, err := sig.Decode([]byte(in))
	checkArgErr(t, &refhost.ArgumentError{Arg: 0, Path: "[0][0]", Offset: 3, Rule: refhost.RuleWrongType}, err)
}

// TestDecodeDoesNotAlias checks that decoded strings survive a change of
// the payload buffer (Activation.Payload is valid only during the call).
func TestDecodeDoesNotAlias(t *testing.T) {
	sig := mustSig(t, "string", "record{k: string}")
	payload := []byte(`["abc",{"k":"de\nf"}]`)
	got, err := sig.Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	for i := range payload {
		payload[i] = 'z'
	}
	want := []any{"abc", map[string]any{"k": "de\nf"}}
	if diff := cmp.Diff(want, got, valueOpts()); diff != "" {
		t.Errorf("values after the payload changed (-want +got):\n%s", diff)
	}
}

// TestIntegerEveryWidthRoundTrip checks each bound's canonical text.
func TestIntegerEveryWidthRoundTrip(t *testing.T) {
	for _, b := range intBounds() {
		t.Run(b.typ, func(t *testing.T) {
			sig := mustSig(t, b.typ, b.typ)
			enc, err := sig.Append(nil, []any{b.minV, b.maxV})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(enc), "["+b.min+","+b.max+"]"; got != want {
				t.Errorf("Append = %s, want %s", got, want)
			}
		})
	}
}
