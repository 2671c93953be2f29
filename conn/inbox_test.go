package conn

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
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
	first := string(ib.next())
	second := ib.next()
	if diff := cmp.Diff([]string{ib.base + "1", ib.base + "2"}, []string{first, string(second)}); diff != "" {
		t.Errorf("reply subjects (-want +got):\n%s", diff)
	}
	if cap(second) != len(second) {
		t.Errorf("reply subject has capacity %d past its length %d: appending would write into the inbox", cap(second), len(second))
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

// TestInboxEarlier pins which status-only frames a request may skip as
// answers to an earlier request: the reply subject of an issued request
// before the current one, its number in canonical decimal form; and which
// ones Check may skip between requests: any issued one. The digits
// are parsed in place (they used to be formatted back to a string to
// refuse leading zeros, an allocation per trailing "409 Batch Completed").
func TestInboxEarlier(t *testing.T) {
	ib, err := newInbox(nil, "_INBOX")
	if err != nil {
		t.Fatalf("newInbox: %v", err)
	}
	for range 3 {
		ib.next() // requests 1, 2 and 3; 3 is the current one
	}
	tests := []struct {
		name, subject string
		want          bool // earlier: before the current request
		issued        bool // issued: any request so far
	}{
		{"first request", ib.base + "1", true, true},
		{"previous request", ib.base + "2", true, true},
		{"current request", ib.base + "3", false, true},
		{"not yet issued", ib.base + "4", false, false},
		{"far from issued", ib.base + "99", false, false},
		{"zero", ib.base + "0", false, false},
		{"leading zero", ib.base + "01", false, false},
		{"leading zeros", ib.base + "0002", false, false},
		{"sign", ib.base + "+1", false, false},
		{"negative", ib.base + "-1", false, false},
		{"letter after digits", ib.base + "1a", false, false},
		{"space", ib.base + "1 ", false, false},
		{"another token", ib.base + "1.2", false, false},
		{"largest uint64", ib.base + "18446744073709551615", false, false},
		{"overflow", ib.base + "18446744073709551616", false, false},
		{"21 digits", ib.base + "100000000000000000000", false, false},
		{"no number", ib.base, false, false},
		{"other inbox", "_INBOX.other.1", false, false},
		{"prefix only", ib.base[:len(ib.base)-1], false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ib.earlier([]byte(tt.subject)); got != tt.want {
				t.Errorf("earlier(%q) = %v, want %v", tt.subject, got, tt.want)
			}
			if got := ib.issued([]byte(tt.subject)); got != tt.issued {
				t.Errorf("issued(%q) = %v, want %v", tt.subject, got, tt.issued)
			}
		})
	}
	ib.unnext() // request 3 never written: 3 is issued again next
	if ib.earlier([]byte(ib.base + "2")) {
		t.Error("earlier(2) after unnext = true, want false: 2 is the current request")
	}
}

func TestParseSeq(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"1", 1, true},
		{"9", 9, true},
		{"10", 10, true},
		{"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false},
		{"18446744073709551620", 0, false},
		{"99999999999999999999", 0, false},
		{"100000000000000000000", 0, false},
		{"", 0, false},
		{"0", 0, false},
		{"00", 0, false},
		{"07", 0, false},
		{"1/", 0, false},
		{"1:", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, ok := parseSeq([]byte(tt.in))
			if n != tt.want || ok != tt.ok {
				t.Errorf("parseSeq(%q) = %d, %v; want %d, %v", tt.in, n, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestNewInboxPrefixLimit(t *testing.T) {
	if _, err := newInbox(nil, strings.Repeat("p", MaxInboxPrefixLen)); err != nil {
		t.Errorf("prefix at the limit: %v", err)
	}
	if _, err := newInbox(nil, strings.Repeat("p", MaxInboxPrefixLen+1)); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("prefix past the limit: %v, want ErrInvalidConfig", err)
	}
	ib, err := newInbox(nil, strings.Repeat("p", MaxInboxPrefixLen))
	if err != nil {
		t.Fatal(err)
	}
	ib.seq = math.MaxUint64 - 1
	if got := ib.next(); len(got) != maxReplyLen {
		t.Errorf("longest reply subject is %d bytes, want maxReplyLen %d", len(got), maxReplyLen)
	}
	if maxReplyLen != 124 {
		t.Errorf("maxReplyLen = %d, want 124 (80 + 1 + 22 + 1 + 20)", maxReplyLen)
	}
}

// TestLongestRequestFits: the longest request (a subject of maxRequestSubjectLen
// bytes, the longest reply subject of the longest inbox prefix, the largest
// header block and payload) is encoded within wire.MaxControlLine and into the
// write buffer without growing it.
func TestLongestRequestFits(t *testing.T) {
	ib, err := newInbox(nil, strings.Repeat("p", MaxInboxPrefixLen))
	if err != nil {
		t.Fatal(err)
	}
	ib.seq = math.MaxUint64 - 1
	wbuf := make([]byte, 0, writeBufferSize(MaxPayloadLimit))
	c := &Conn{inbox: ib, wbuf: wbuf, maxPayload: MaxPayloadLimit, serverMax: MaxPayloadLimit + wire.MaxOutboundHeader}
	reply := c.inbox.next()
	if len(reply) != maxReplyLen {
		t.Fatalf("reply subject %d bytes, want %d", len(reply), maxReplyLen)
	}
	subject := strings.Repeat("s", maxRequestSubjectLen)
	header := "NATS/1.0\r\nX: " + strings.Repeat("v", wire.MaxOutboundHeader-len("NATS/1.0\r\nX: \r\n\r\n")) + "\r\n\r\n"
	payload := make([]byte, MaxPayloadLimit)
	out, err := appendPub(c, subject, reply, []byte(header), payload)
	if err != nil {
		t.Fatalf("appendPub: %v", err)
	}
	line := out[:bytes.Index(out, []byte("\r\n"))+2]
	if len(line) > wire.MaxControlLine {
		t.Errorf("control line %d bytes, over wire.MaxControlLine %d", len(line), wire.MaxControlLine)
	}
	if &out[0] != &wbuf[:1][0] || cap(out) != cap(wbuf) {
		t.Error("the longest request grew the write buffer")
	}
}

// TestRequestPathAllocations covers what a request does besides the socket
// and TLS: issue a reply subject, encode the PUB or HPUB with it, match
// the reply's subject, and skip a trailing status of an earlier request.
// None of it allocates. (A whole request against the fake server cannot
// be counted: the server's goroutines allocate.)
func TestRequestPathAllocations(t *testing.T) {
	ib, err := newInbox(nil, "_INBOX")
	if err != nil {
		t.Fatal(err)
	}
	c := &Conn{inbox: ib, wbuf: make([]byte, 0, writeBufferSize(defaultMaxPayload)), maxPayload: defaultMaxPayload, serverMax: defaultMaxPayload}
	subject := []byte("$JS.ACK.ORDERS.worker.1.17.40.1767322245000000000.3")
	header := []byte("NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n")
	payload := []byte(`{"batch":1,"no_wait":true,"expires":100000000,"max_bytes":10240}`)
	trailing := []byte(c.inbox.base + "1")
	c.inbox.next()
	var matched, skipped int
	allocs := testing.AllocsPerRun(100, func() {
		reply := c.inbox.next()
		if _, err := appendPub(c, "$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker", reply, nil, payload); err != nil {
			t.Fatal(err)
		}
		out, err := appendPub(c, subject, reply, header, []byte("+ACK"))
		if err != nil {
			t.Fatal(err)
		}
		if string(out[len("HPUB ")+len(subject)+1:][:len(reply)]) == string(reply) {
			matched++
		}
		if c.inbox.earlier(trailing) {
			skipped++
		}
	})
	if allocs != 0 {
		t.Errorf("a request's own work allocates %v times, want 0", allocs)
	}
	if matched == 0 || skipped == 0 {
		t.Errorf("matched %d, skipped %d: want the reply found in the HPUB and the trailing status skipped", matched, skipped)
	}
}

// TestBufferSizes pins the per-connection memory the package documentation
// states.
func TestBufferSizes(t *testing.T) {
	for _, p := range []int{1, defaultMaxPayload, MaxPayloadLimit} {
		v := validated{maxPayload: p, maxLine: parser.MaxLine, maxHeader: parser.MaxHeaderBlock}
		got := [2]int{v.parserLimits().BufferSize(), writeBufferSize(p)}
		want := [2]int{16<<10 + p + 2, max(12<<10+p+2, MaxConnectLen)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("payload %d: [read, write] buffer bytes (-want +got):\n%s", p, diff)
		}
	}
	small := validated{maxPayload: 1, maxLine: MinReadCap, maxHeader: MinReadCap}
	if got, want := small.parserLimits().BufferSize(), 2*MinReadCap+1+2; got != want {
		t.Errorf("smallest caps: read buffer %d bytes, want %d", got, want)
	}
}
