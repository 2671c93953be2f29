package jsonlex

import (
	"bytes"
	"testing"
)

// TestNoAllocations: reading a value, its strings and its numbers, and
// comparing strings, allocates nothing.
func TestNoAllocations(t *testing.T) {
	in := []byte(` {"k\u00e9y":[1,-2.5e3,true,false,null,"a\ud83d\ude00\n"],"n":18446744073709551615} `)
	raw := []byte(`a\u0062\ud83d\ude00`)
	num := bytes.Index(in, []byte("-2.5e3"))
	big := bytes.Index(in, []byte("1844"))
	allocs := testing.AllocsPerRun(100, func() {
		end, err := Skip(in, 0, 0, 4)
		if err != nil || Space(in, end) != len(in) {
			t.Fatalf("Skip: %d, %v", end, err)
		}
		if _, _, _, err := Key(in, 2); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := Number(in, num); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := Integer(in[big : big+20]); !ok {
			t.Fatal("Integer")
		}
		if !Equal(raw, true, "ab\U0001F600") || !EqualRaw(raw, true, []byte("ab\U0001F600"), false) {
			t.Fatal("Equal")
		}
	})
	if allocs != 0 {
		t.Errorf("allocations: %v, want 0", allocs)
	}
}
