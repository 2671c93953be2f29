package jsontree

import (
	"strings"
	"testing"
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
