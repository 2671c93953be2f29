package trigger

import (
	"strings"
	"testing"
)

// BenchmarkParseConfig measures ParseConfig on valid input (small and at
// MaxConfigBytes) and on hostile input of the same size.
func BenchmarkParseConfig(b *testing.B) {
	for _, bc := range []struct {
		name  string
		input []byte
	}{
		{"valid/small", validConfig(b).encode()},
		{"valid/max", sizedConfig(b, MaxConfigBytes).encode()},
		{"hostile/empty_bindings", []byte(`{"bindings":[` + strings.Repeat(`{},`, 170_000) + `{}]}`)},
		{"hostile/int_bindings", []byte(`{"bindings":[` + strings.Repeat(`1,`, 250_000) + `1]}`)},
		{"hostile/unknown_keys", []byte(`{` + strings.Repeat(`"a":1,`, 80_000) + `"a":1}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.input)))
			for b.Loop() {
				_, _ = ParseConfig(bc.input)
			}
		})
	}
}
