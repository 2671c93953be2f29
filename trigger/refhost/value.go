package refhost

// OptionValue is the Go value of an option: none when Some is false (and
// Value is then nil), some(Value) otherwise. The zero OptionValue is none.
type OptionValue struct {
	Some  bool
	Value any
}

// Some returns some(v).
func Some(v any) OptionValue { return OptionValue{Some: true, Value: v} }

// VariantValue is the Go value of a variant: the case's name and its
// payload, nil for a case without payload.
type VariantValue struct {
	Case  string
	Value any
}

// ResultValue is the Go value of a result: ok(Value) when Err is false,
// err(Value) otherwise; Value is nil for a side without payload.
type ResultValue struct {
	Err   bool
	Value any
}
