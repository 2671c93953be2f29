package parser

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplitArgs pins the token rules of control-line arguments, the empty
// reply token among them, independently of the checks msg and hmsg make
// afterwards (an empty token at the end of the line, or a second empty
// token, must be refused here, not only later as a missing size).
func TestSplitArgs(t *testing.T) {
	tests := []struct {
		name  string
		args  string
		limit int
		want  []string // nil: malformed
	}{
		{"three tokens", "a 1 5", maxMsgArgs, []string{"a", "1", "5"}},
		{"four tokens", "a 1 r 5", maxMsgArgs, []string{"a", "1", "r", "5"}},
		{"five tokens", "a 1 r 12 14", maxArgs, []string{"a", "1", "r", "12", "14"}},
		{"control byte inside a token", "a\x01b 1 5", maxMsgArgs, []string{"a\x01b", "1", "5"}},
		{"empty reply token skipped", "a 1  5", maxMsgArgs, []string{"a", "1", "5"}},
		{"empty reply token before two sizes", "a 1  12 14", maxArgs, []string{"a", "1", "12", "14"}},
		{"empty reply token then reply", "a 1  r 5", maxMsgArgs, nil},
		{"empty reply token then reply and two sizes", "a 1  r 12 14", maxArgs, nil},
		{"empty first token", " a 1 5", maxMsgArgs, nil},
		{"empty second token", "a  1 5", maxMsgArgs, nil},
		{"empty fourth token", "a 1 r  5", maxMsgArgs, nil},
		{"empty fourth token after empty reply", "a 1  12  14", maxArgs, nil},
		{"two empty tokens", "a 1   5", maxMsgArgs, nil},
		{"three empty tokens", "a 1    5", maxMsgArgs, nil},
		{"empty reply token at the end", "a 1 ", maxMsgArgs, nil},
		{"empty reply token then empty end", "a 1  ", maxMsgArgs, nil},
		{"empty line", "", maxMsgArgs, nil},
		{"tab", "a 1\t5", maxMsgArgs, nil},
		{"space tab", "a 1 \t5", maxMsgArgs, nil},
		{"CR", "a 1\r5", maxMsgArgs, nil},
		{"LF", "a 1\n5", maxMsgArgs, nil},
		{"over the limit", "a 1 r x 5", maxMsgArgs, nil},
		{"over maxArgs", "a 1 r x 12 14", maxArgs, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dst [maxArgs]span
			n, reason := splitArgs([]byte(tt.args), 0, tt.limit, &dst)
			if diff := cmp.Diff(tt.want, tokens(tt.args, dst[:], n)); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			if (n < 0) != (reason != "") {
				t.Errorf("count %d with reason %q", n, reason)
			}
		})
	}
}

// tokens returns the text of the first n spans of s, nil when n < 0.
func tokens(s string, spans []span, n int) []string {
	if n < 0 {
		return nil
	}
	out := make([]string, 0, n)
	for _, sp := range spans[:n] {
		out = append(out, s[sp.start:sp.end])
	}
	return out
}
