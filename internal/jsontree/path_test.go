package jsontree

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPath(t *testing.T) {
	atBound := strings.Repeat("k", MaxPathKeyBytes)
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"field at the document", Field("", "a"), "a"},
		{"field", Field("a", "b"), "a.b"},
		{"field does not quote", Field("a", "B c"), "a.B c"},
		{"index at the document", Index("", 3), "[3]"},
		{"index", Index("a", 0), "a[0]"},
		{"plain key", Key("a", "ack_wait_ms2"), "a.ack_wait_ms2"},
		{"plain key at the document", Key("", "a"), "a"},
		{"empty key", Key("a", ""), `a[""]`},
		{"upper case", Key("", "A"), `["A"]`},
		{"dot", Key("a", "b.c"), `a["b.c"]`},
		{"control characters", Key("a", "\n\x00\x7f"), `a["\n\x00\x7f"]`},
		{"non-ascii", Key("a", "é"), `a["\u00e9"]`},
		{"invalid utf-8", Key("a", "\xff"), `a["\xff"]`},
		{"plain key at the bound", Key("a", atBound), "a." + atBound},
		{"plain key one past the bound", Key("a", atBound+"k"), `a["` + atBound + `"]`},
		{"quoted key cut at the bound", Key("", strings.Repeat("K", MaxPathKeyBytes+10)), `["` + strings.Repeat("K", MaxPathKeyBytes) + `"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

// TestCut: a string within the bound is whole; a longer one is cut at the
// bound, or before it when the cut would split a rune; bytes that are not
// UTF-8 are cut at the bound.
func TestCut(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"ab€", 4, "ab"}, // € is 3 bytes: cutting at 4 would split it
		{"a€b", 4, "a€"}, // the cut falls after the rune
		{"\xff\xfe\xfd\xfc\xfb\xfa", 3, "\xff\xfe\xfd"},
		{"\x80\x80\x80\x80\x80\x80", 5, "\x80\x80\x80\x80\x80"}, // continuation bytes only
		{"", 0, ""},
		{"\xf0\x9f\x98\x80\x80", 4, "\xf0\x9f\x98\x80"}, // a whole emoji, then a stray byte
		{"ab\xc3\xa9\x80\x80", 5, "ab\xc3\xa9\x80"},     // é kept, the stray byte cut like any other
		{"ab\xff\x80\x80", 4, "ab\xff\x80"},             // no valid rune at the cut
	}
	for _, tt := range tests {
		if got := Cut(tt.s, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// FuzzCut: the cut is a prefix of the input of at most n bytes, keeps
// valid UTF-8 valid, and gives up fewer than utf8.UTFMax bytes of the bound.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"", "abc", "ab€", "\xf0\x9f\x98\x80\x80", "\xff\x80\x80", strings.Repeat("é", 40)} {
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<10 {
			return
		}
		got := Cut(s, n)
		if !strings.HasPrefix(s, got) || len(got) > n {
			t.Fatalf("Cut(%q, %d) = %q: not a prefix of at most %d bytes", s, n, got, n)
		}
		if len(s) > n && len(got) <= n-utf8.UTFMax {
			t.Fatalf("Cut(%q, %d) = %q: gave up %d bytes", s, n, got, n-len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Cut(%q, %d) = %q: split a rune", s, n, got)
		}
	})
}
