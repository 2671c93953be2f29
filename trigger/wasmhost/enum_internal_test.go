package wasmhost

import (
	"strings"
	"testing"
)

// TestEnumStrings: every Problem and Cause has its own words; the values
// outside the list print their number.
func TestEnumStrings(t *testing.T) {
	seen := map[string]bool{}
	for p := Problem(1); p < problemEnd; p++ {
		s := p.String()
		if strings.HasPrefix(s, "Problem(") || seen[s] {
			t.Errorf("Problem %d prints %q", p, s)
		}
		seen[s] = true
	}
	for c := Cause(1); c < causeEnd; c++ {
		s := c.String()
		if strings.HasPrefix(s, "Cause(") || seen[s] {
			t.Errorf("Cause %d prints %q", c, s)
		}
		seen[s] = true
	}
	for _, s := range []string{Problem(0).String(), problemEnd.String(), Cause(0).String(), causeEnd.String()} {
		if !strings.Contains(s, "(") {
			t.Errorf("a value outside the list prints %q", s)
		}
	}
}

// TestSinkBound: output is kept up to maxOutputBytes exactly; the byte
// past it is counted as dropped.
func TestSinkBound(t *testing.T) {
	var s sink
	s.Write(make([]byte, maxOutputBytes-1))
	s.Write([]byte{1, 2})
	if len(s.buf) != maxOutputBytes || s.dropped != 1 {
		t.Errorf("kept %d, dropped %d; want %d and 1", len(s.buf), s.dropped, maxOutputBytes)
	}
}
