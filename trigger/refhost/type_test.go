package refhost_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

func TestTypeConstructorsString(t *testing.T) {
	u8 := refhost.U8()
	str := refhost.String()
	cases := []struct {
		typ  refhost.Type
		want string
	}{
		{refhost.Bool(), "bool"},
		{refhost.S8(), "s8"},
		{refhost.S16(), "s16"},
		{refhost.S32(), "s32"},
		{refhost.S64(), "s64"},
		{refhost.U8(), "u8"},
		{refhost.U16(), "u16"},
		{refhost.U32(), "u32"},
		{refhost.U64(), "u64"},
		{refhost.F32(), "f32"},
		{refhost.F64(), "f64"},
		{refhost.Char(), "char"},
		{refhost.String(), "string"},
		{refhost.List(refhost.U8()), "list<u8>"},
		{refhost.Option(refhost.Option(refhost.Bool())), "option<option<bool>>"},
		{refhost.Tuple(refhost.U8(), refhost.String()), "tuple<u8, string>"},
		{refhost.Record(refhost.Field{Name: "id", Type: refhost.U64()}, refhost.Field{Name: "tags", Type: refhost.List(refhost.String())}),
			"record{id: u64, tags: list<string>}"},
		{refhost.Enum("a", "b-c"), "enum{a, b-c}"},
		{refhost.Variant(refhost.Case{Name: "none"}, refhost.Case{Name: "some", Payload: &u8}), "variant{none, some(u8)}"},
		{refhost.Result(nil, nil), "result"},
		{refhost.Result(&u8, nil), "result<u8>"},
		{refhost.Result(nil, &str), "result<_, string>"},
		{refhost.Result(&u8, &str), "result<u8, string>"},
		{refhost.Type{}, "Kind(0)"},
		{refhost.Type{Kind: refhost.KindList}, "list<?>"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.typ.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTypeAccepts(t *testing.T) {
	cases := []struct{ in, want string }{
		{"u8", "u8"},
		{" list < u8 > ", "list<u8>"},
		{"record{ id:u64 ,name : string}", "record{id: u64, name: string}"},
		{"record{HTTP-code: u16, max-len2: u8}", "record{HTTP-code: u16, max-len2: u8}"},
		{"variant{a,b(list<u8>)}", "variant{a, b(list<u8>)}"},
		{"result<_ , u8>", "result<_, u8>"},
		{"result < u8 >", "result<u8>"},
		{"result", "result"},
		{"tuple<u8>", "tuple<u8>"},
		{"\tenum{x}\n", "enum{x}"},
		{"option<option<option<char>>>", "option<option<option<char>>>"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			typ, err := refhost.ParseType(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := typ.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTypeRefuses(t *testing.T) {
	deep := strings.Repeat("list<", refhost.MaxTypeDepth-1) + "u8" + strings.Repeat(">", refhost.MaxTypeDepth-1)
	cases := []struct {
		name string
		in   string
		want *refhost.TypeError
	}{
		{"empty", "", &refhost.TypeError{Param: -1, Offset: 0, Rule: refhost.RuleSyntax}},
		{"unknown scalar", "u128", &refhost.TypeError{Param: -1, Offset: 0, Rule: refhost.RuleSyntax}},
		{"upper case kind", "U8", &refhost.TypeError{Param: -1, Offset: 0, Rule: refhost.RuleSyntax}},
		{"unclosed", "list<u8", &refhost.TypeError{Param: -1, Offset: 7, Rule: refhost.RuleSyntax}},
		{"empty list", "list<>", &refhost.TypeError{Param: -1, Offset: 5, Rule: refhost.RuleSyntax}},
		{"empty tuple", "tuple<>", &refhost.TypeError{Param: -1, Offset: 6, Rule: refhost.RuleSyntax}},
		{"empty record", "record{}", &refhost.TypeError{Param: -1, Offset: 7, Rule: refhost.RuleSyntax}},
		{"empty enum", "enum{ }", &refhost.TypeError{Param: -1, Offset: 6, Rule: refhost.RuleSyntax}},
		{"trailing", "u8 u8", &refhost.TypeError{Param: -1, Offset: 3, Rule: refhost.RuleSyntax}},
		{"trailing comma", "tuple<u8,>", &refhost.TypeError{Param: -1, Offset: 9, Rule: refhost.RuleSyntax}},
		{"missing colon", "record{a u8}", &refhost.TypeError{Param: -1, Offset: 9, Rule: refhost.RuleSyntax}},
		{"underscore name", "record{a_b: u8}", &refhost.TypeError{Param: -1, Offset: 8, Rule: refhost.RuleSyntax}},
		{"digit name", "record{1a: u8}", &refhost.TypeError{Param: -1, Offset: 7, Rule: refhost.RuleInvalidName}},
		{"mixed case word", "enum{aB}", &refhost.TypeError{Param: -1, Offset: 5, Rule: refhost.RuleInvalidName}},
		{"double dash", "enum{a--b}", &refhost.TypeError{Param: -1, Offset: 5, Rule: refhost.RuleInvalidName}},
		{"trailing dash", "enum{a-}", &refhost.TypeError{Param: -1, Offset: 5, Rule: refhost.RuleInvalidName}},
		{"enum payload", "enum{a(u8)}", &refhost.TypeError{Param: -1, Offset: 6, Rule: refhost.RuleSyntax}},
		{"result underscore only", "result<_>", &refhost.TypeError{Param: -1, Offset: 8, Rule: refhost.RuleSyntax}},
		{"result three", "result<u8, u8, u8>", &refhost.TypeError{Param: -1, Offset: 13, Rule: refhost.RuleSyntax}},
		{"duplicate field", "record{a: u8, a: u8}", &refhost.TypeError{Param: -1, Path: ".a", Offset: -1, Rule: refhost.RuleDuplicateName}},
		{"duplicate case", "variant{a, b, a(u8)}", &refhost.TypeError{Param: -1, Path: ".a", Offset: -1, Rule: refhost.RuleDuplicateName}},
		{"too deep", "list<" + deep + ">", &refhost.TypeError{Param: -1, Offset: 5 * refhost.MaxTypeDepth, Rule: refhost.RuleTooDeep}},
		{"too long", strings.Repeat(" ", refhost.MaxTypeTextBytes-1) + "u8", &refhost.TypeError{Param: -1, Offset: 0, Rule: refhost.RuleTooLarge}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := refhost.ParseType(tc.in)
			checkTypeErr(t, tc.want, err)
		})
	}
	t.Run("depth at the limit", func(t *testing.T) {
		if _, err := refhost.ParseType(deep); err != nil {
			t.Errorf("ParseType at MaxTypeDepth: %v", err)
		}
	})
	t.Run("length at the limit", func(t *testing.T) {
		if _, err := refhost.ParseType(strings.Repeat(" ", refhost.MaxTypeTextBytes-2) + "u8"); err != nil {
			t.Errorf("ParseType at MaxTypeTextBytes: %v", err)
		}
	})
}

// checkTypeErr checks that err is want and matches ErrInvalidType and
// want's rule.
func checkTypeErr(t *testing.T, want *refhost.TypeError, err error) {
	t.Helper()
	var got *refhost.TypeError
	if !errors.As(err, &got) {
		t.Fatalf("error %v is not a *TypeError", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if !errors.Is(err, refhost.ErrInvalidType) || !errors.Is(err, want.Rule) {
		t.Errorf("errors.Is(%v, ErrInvalidType / %v) = false", err, want.Rule)
	}
}

func TestTypeValidate(t *testing.T) {
	u8 := refhost.U8()
	cyclic := refhost.Type{Kind: refhost.KindList}
	cyclic.Elem = &cyclic
	badName := refhost.Record(refhost.Field{Name: "ok", Type: u8}, refhost.Field{Name: "not ok", Type: u8})
	cases := []struct {
		name string
		typ  refhost.Type
		want *refhost.TypeError
	}{
		{"zero kind", refhost.Type{}, &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleUnknownKind}},
		{"kind past the end", refhost.Type{Kind: 99}, &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleUnknownKind}},
		{"list without elem", refhost.Type{Kind: refhost.KindList}, &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleShape}},
		{"bool with fields", refhost.Type{Kind: refhost.KindBool, Fields: []refhost.Field{}}, &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleShape}},
		{"record with elem", refhost.Type{Kind: refhost.KindRecord, Fields: []refhost.Field{{Name: "a", Type: u8}}, Elem: &u8}, &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleShape}},
		{"result with cases", refhost.Type{Kind: refhost.KindResult, Cases: []refhost.Case{}}, &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleShape}},
		{"enum with payload", refhost.Type{Kind: refhost.KindEnum, Cases: []refhost.Case{{Name: "a", Payload: &u8}}}, &refhost.TypeError{Param: -1, Path: ".a", Offset: -1, Rule: refhost.RuleShape}},
		{"empty tuple", refhost.Tuple(), &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleEmpty}},
		{"empty record", refhost.Record(), &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleEmpty}},
		{"empty enum", refhost.Enum(), &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleEmpty}},
		{"empty variant", refhost.Variant(), &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleEmpty}},
		{"bad field name", badName, &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleInvalidName}},
		{"name too long", refhost.Enum(strings.Repeat("a", refhost.MaxFieldNameLen+1)), &refhost.TypeError{Param: -1, Offset: -1, Rule: refhost.RuleInvalidName}},
		{"bad nested", refhost.List(refhost.Option(refhost.Type{})), &refhost.TypeError{Param: -1, Path: ".elem.elem", Offset: -1, Rule: refhost.RuleUnknownKind}},
		{"bad tuple member", refhost.Tuple(u8, refhost.Type{}), &refhost.TypeError{Param: -1, Path: "[1]", Offset: -1, Rule: refhost.RuleUnknownKind}},
		{"bad result side", refhost.Result(nil, &refhost.Type{}), &refhost.TypeError{Param: -1, Path: ".err", Offset: -1, Rule: refhost.RuleUnknownKind}},
		{"cyclic", cyclic, &refhost.TypeError{Param: -1, Path: strings.Repeat(".elem", refhost.MaxTypeDepth), Offset: -1, Rule: refhost.RuleTooDeep}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkTypeErr(t, tc.want, tc.typ.Validate())
		})
	}
	t.Run("name at the limit", func(t *testing.T) {
		if err := refhost.Enum(strings.Repeat("a", refhost.MaxFieldNameLen)).Validate(); err != nil {
			t.Errorf("Validate: %v", err)
		}
	})
}

// tupleOf returns tuple<u8, ...> with n members: n+1 types.
func tupleOf(n int) refhost.Type {
	elems := make([]refhost.Type, n)
	for i := range elems {
		elems[i] = refhost.U8()
	}
	return refhost.Tuple(elems...)
}

func TestSignatureBounds(t *testing.T) {
	t.Run("nodes at the limit", func(t *testing.T) {
		if _, err := refhost.NewSignature(tupleOf(refhost.MaxTypeNodes - 1)); err != nil {
			t.Errorf("NewSignature with MaxTypeNodes types: %v", err)
		}
	})
	t.Run("nodes past the limit", func(t *testing.T) {
		_, err := refhost.NewSignature(tupleOf(refhost.MaxTypeNodes))
		checkTypeErr(t, &refhost.TypeError{Param: 0, Path: "[1023]", Offset: -1, Rule: refhost.RuleTooLarge}, err)
	})
	t.Run("nodes counted across parameters", func(t *testing.T) {
		_, err := refhost.NewSignature(tupleOf(refhost.MaxTypeNodes/2-1), tupleOf(refhost.MaxTypeNodes/2))
		checkTypeErr(t, &refhost.TypeError{Param: 1, Path: "[511]", Offset: -1, Rule: refhost.RuleTooLarge}, err)
	})
	params := make([]refhost.Type, refhost.MaxParams+1)
	for i := range params {
		params[i] = refhost.Bool()
	}
	t.Run("params at the limit", func(t *testing.T) {
		if _, err := refhost.NewSignature(params[:refhost.MaxParams]...); err != nil {
			t.Errorf("NewSignature with MaxParams parameters: %v", err)
		}
	})
	t.Run("params past the limit", func(t *testing.T) {
		_, err := refhost.NewSignature(params...)
		checkTypeErr(t, &refhost.TypeError{Param: refhost.MaxParams, Offset: -1, Rule: refhost.RuleParamCount}, err)
	})
	t.Run("invalid parameter", func(t *testing.T) {
		_, err := refhost.NewSignature(refhost.U8(), refhost.List(refhost.Type{}))
		checkTypeErr(t, &refhost.TypeError{Param: 1, Path: ".elem", Offset: -1, Rule: refhost.RuleUnknownKind}, err)
	})
}

// TestSignatureCopies checks that a signature keeps its own copy of the
// types it was given and hands out copies.
func TestSignatureCopies(t *testing.T) {
	rec := refhost.Record(refhost.Field{Name: "a", Type: refhost.List(refhost.U8())})
	sig, err := refhost.NewSignature(rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.Fields[0].Name = "b"
	rec.Fields[0].Type.Elem.Kind = refhost.KindString
	if got := sig.String(); got != "(record{a: list<u8>})" {
		t.Errorf("after changing the caller's type: %s", got)
	}
	p := sig.Params()
	p[0].Fields[0].Type.Elem.Kind = refhost.KindBool
	if got := sig.String(); got != "(record{a: list<u8>})" {
		t.Errorf("after changing Params(): %s", got)
	}
	if _, err := sig.Decode([]byte(`[{"a":[1]}]`)); err != nil {
		t.Errorf("Decode after changes: %v", err)
	}
}

func TestErrorMessages(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&refhost.ArgumentError{Arg: 1, Path: ".items[3]", Offset: 42, Rule: refhost.RuleOutOfRange}, "refhost: argument 1 .items[3]: out of range (offset 42)"},
		{&refhost.ArgumentError{Arg: 0, Offset: -1, Rule: refhost.RuleWrongType}, "refhost: argument 0: wrong type"},
		{&refhost.ArgumentError{Arg: -1, Offset: 0, Rule: refhost.RuleTooLarge}, "refhost: payload: too large (offset 0)"},
		{&refhost.TypeError{Param: 0, Path: ".items.elem", Offset: -1, Rule: refhost.RuleUnknownKind}, "refhost: parameter 0 .items.elem: unknown kind"},
		{&refhost.TypeError{Param: 2, Offset: -1, Rule: refhost.RuleEmpty}, "refhost: parameter 2: no members"},
		{&refhost.TypeError{Param: -1, Offset: 4, Rule: refhost.RuleSyntax}, "refhost: type: syntax error (offset 4)"},
		{&refhost.TypeError{Param: -1, Path: ".a", Offset: -1, Rule: refhost.RuleDuplicateName}, "refhost: .a: duplicate name"},
		{&refhost.UnavailableError{Resource: refhost.ResourceInput}, "refhost: input allocation unavailable"},
		{&refhost.ApplicationError{Code: "not-found"}, "refhost: application failure not-found"},
		{&refhost.ApplicationError{Code: "secret value"}, "refhost: application failure"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}
