package acksubject

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestByteClass checks every entry of byteClass against the rules it
// encodes, as the reference parser states them.
func TestByteClass(t *testing.T) {
	var got, want []string
	for c := range 256 {
		b := byte(c)
		got = append(got, strconv.Itoa(c)+": notName="+strconv.FormatBool(byteClass[b]&classNotName != 0)+
			" base62="+strconv.FormatBool(byteClass[b]&classBase62 != 0))
		want = append(want, strconv.Itoa(c)+": notName="+strconv.FormatBool(refCheckName("a"+string(b)+"a") == RuleNameByte)+
			" base62="+strconv.FormatBool(refIsBase62(b)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("byteClass (-want +got):\n%s", diff)
	}
}

func TestLoad64(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 8, 8).Draw(t, "bytes")
		if got, want := load64(string(b)), binary.LittleEndian.Uint64(b); got != want {
			t.Fatalf("load64(%q) = %#x, want %#x", b, got, want)
		}
	})
}

// TestEightDigits puts every byte value at every place of a run of eight
// digits.
func TestEightDigits(t *testing.T) {
	type result struct {
		Digits bool
		Value  uint64
	}
	for at := range 8 {
		t.Run(strconv.Itoa(at), func(t *testing.T) {
			var got, want []result
			for c := range 256 {
				w := []byte("98765432")
				w[at] = byte(c)
				r := result{Digits: eightDigits(load64(string(w)))}
				if r.Digits {
					r.Value = eightDigitsValue(load64(string(w)))
				}
				got = append(got, r)
				n, err := strconv.ParseUint(string(w), 10, 64)
				want = append(want, result{Digits: err == nil && '0' <= c && c <= '9', Value: n})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("eightDigits, eightDigitsValue (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPropertyEightDigits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.StringOfN(rapid.RuneFrom([]rune("0123456789")), 8, 8, 8),
			rapid.Map(rapid.SliceOfN(rapid.Byte(), 8, 8), func(b []byte) string { return string(b) }),
			rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte("/0123456789:*\xb0\xb9\xff")), 8, 8), func(b []byte) string { return string(b) }),
		).Draw(t, "word")
		w := load64(s)
		all := strings.Trim(s, "0123456789") == ""
		if eightDigits(w) != all {
			t.Fatalf("eightDigits(%q) = %v, want %v", s, eightDigits(w), all)
		}
		if !all {
			return
		}
		want, _ := strconv.ParseUint(s, 10, 64)
		if got := eightDigitsValue(w); got != want {
			t.Fatalf("eightDigitsValue(%q) = %d, want %d", s, got, want)
		}
	})
}

// TestPropertyNameLen compares nameLen with a byte-by-byte search.
func TestPropertyNameLen(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 40), func(b []byte) string { return string(b) }),
			rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]byte("ab.\x00 *\x01\xff")), 0, 40), func(b []byte) string { return string(b) }),
		).Draw(t, "s")
		i := rapid.IntRange(0, len(s)).Draw(t, "i")
		want := i
		for want < len(s) && refCheckName("a"+s[want:want+1]) == 0 {
			want++
		}
		if got := nameLen(s, i); got != want {
			t.Fatalf("nameLen(%q, %d) = %d, want %d", s, i, got, want)
		}
	})
}
