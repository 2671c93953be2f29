package conn

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestRandomToken(t *testing.T) {
	// Bytes 248..255 are rejected; 0..247 map to base62[b%62].
	src := append(bytes.Repeat([]byte{255, 248}, 8), 0, 61, 62, 247)
	src = append(src, make([]byte, 64)...)
	var tok [4]byte
	if err := randomToken(bytes.NewReader(src[:64]), tok[:]); err != nil {
		t.Fatalf("randomToken: %v", err)
	}
	if diff := cmp.Diff("0z0z", string(tok[:])); diff != "" {
		t.Errorf("token (-want +got):\n%s", diff)
	}
}

func TestRandomTokenFailures(t *testing.T) {
	var tok [inboxTokenLen]byte
	readErr := errors.New("entropy gone")
	if err := randomToken(iotest.ErrReader(readErr), tok[:]); !errors.Is(err, ErrRandom) || !errors.Is(err, readErr) {
		t.Errorf("reader failure: error = %v, want ErrRandom wrapping it", err)
	}
	// A source that only ever yields rejected bytes stops after randRounds.
	rejected := bytes.NewReader(bytes.Repeat([]byte{255}, 64*randRounds+64))
	if err := randomToken(rejected, tok[:]); !errors.Is(err, ErrRandom) {
		t.Errorf("all rejected: error = %v, want ErrRandom", err)
	}
	if got := rejected.Len(); got != 64 {
		t.Errorf("read %d rounds, want %d", (64*randRounds+64-got)/64, randRounds)
	}
}

func TestInbox(t *testing.T) {
	ib, err := newInbox(nil, "_INBOX")
	if err != nil {
		t.Fatalf("newInbox: %v", err)
	}
	if !strings.HasPrefix(ib.base, "_INBOX.") || len(ib.base) != len("_INBOX.")+inboxTokenLen+1 {
		t.Fatalf("base = %q", ib.base)
	}
	if got, want := ib.subject(), ib.base+"*"; got != want {
		t.Errorf("subject = %q, want %q", got, want)
	}
	first, second := ib.next(), ib.next()
	if diff := cmp.Diff([]string{ib.base + "1", ib.base + "2"}, []string{first, second}); diff != "" {
		t.Errorf("reply subjects (-want +got):\n%s", diff)
	}
	tests := []struct {
		subject string
		want    bool
	}{
		{first, true},
		{ib.base + "99", true},
		{ib.base, false},
		{ib.base[:len(ib.base)-1], false},
		{"_INBOX.other.1", false},
		{"orders.created", false},
	}
	for _, tt := range tests {
		if got := ib.under([]byte(tt.subject)); got != tt.want {
			t.Errorf("under(%q) = %v, want %v", tt.subject, got, tt.want)
		}
	}
	other, err := newInbox(nil, "_INBOX")
	if err != nil {
		t.Fatalf("newInbox: %v", err)
	}
	if other.base == ib.base {
		t.Errorf("two inboxes share the token %q", ib.base)
	}
}

// TestBufferSizes pins the per-connection memory the package documentation
// states.
func TestBufferSizes(t *testing.T) {
	for _, p := range []int{1, DefaultMaxPayload, MaxPayloadLimit} {
		v := validated{maxPayload: p}
		got := [2]int{v.parserLimits().BufferSize(), writeBufferSize(p)}
		want := [2]int{16<<10 + p + 2, max(12<<10+p+2, MaxConnectLen)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("payload %d: [read, write] buffer bytes (-want +got):\n%s", p, diff)
		}
	}
}
