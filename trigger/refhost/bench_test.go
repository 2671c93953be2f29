package refhost_test

import (
	"strings"
	"testing"
)

// BenchmarkDecode decodes representative payloads.
func BenchmarkDecode(b *testing.B) {
	cases := []struct {
		name    string
		types   []string
		payload string
	}{
		{"scalars", []string{"u64", "s32", "bool", "f64", "string"}, `[18446744073709551615,-5,true,2.5,"hello"]`},
		{"record", []string{"record{id: u64, sku: string, qty: u32, tags: list<string>, note: option<string>}"},
			`[{"id":1,"sku":"A-1","qty":2,"tags":["a","b","c"],"note":null}]`},
		{"bytes-32KiB", []string{"list<u8>"}, "[[" + strings.Repeat("255,", 6552) + "255]]"},
		{"string-32KiB", []string{"string"}, `["` + strings.Repeat("abcdefgh", 4095) + `"]`},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			sig := mustSig(b, tc.types...)
			in := []byte(tc.payload)
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := sig.Decode(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
