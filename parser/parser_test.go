package parser

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	jsReply   = "$JS.ACK.ORDERS.worker-1.1.42.42.1767225600000000000.0"
	jsReplyV2 = "$JS.ACK._.a1b2c3.ORDERS.worker-1.1.42.42.1767225600000000000.0.x9"
	infoJSON  = `{"server_id":"NCX","version":"2.14.6","proto":1,"headers":true,"max_payload":1048576}`
)

func TestNextValid(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []copied
	}{
		{"INFO", "INFO " + infoJSON + " \r\n", []copied{{Op: OpInfo, Info: infoJSON}}},
		{"INFO empty object", "INFO {} \r\n", []copied{{Op: OpInfo, Info: "{}"}}},
		{"PING", "PING\r\n", []copied{{Op: OpPing}}},
		{"PONG", "PONG\r\n", []copied{{Op: OpPong}}},
		{"+OK", "+OK\r\n", []copied{{Op: OpOK}}},
		{"-ERR", "-ERR 'Authorization Violation'\r\n", []copied{{Op: OpErr, ErrText: "Authorization Violation"}}},
		{"-ERR with double quotes", "-ERR 'Permissions Violation for Publish to \"a.b\"'\r\n",
			[]copied{{Op: OpErr, ErrText: `Permissions Violation for Publish to "a.b"`}}},
		{"-ERR empty", "-ERR ''\r\n", []copied{{Op: OpErr}}},
		{"MSG", "MSG foo.bar 9 5\r\nhello\r\n",
			[]copied{{Op: OpMsg, Subject: "foo.bar", SID: "9", Payload: "hello"}}},
		{"MSG with reply", msg("ORDERS.new", "1", jsReply, strings.Repeat("x", 256)),
			[]copied{{Op: OpMsg, Subject: "ORDERS.new", SID: "1", Reply: jsReply, Payload: strings.Repeat("x", 256)}}},
		{"MSG empty payload", "MSG a 1 0\r\n\r\n", []copied{{Op: OpMsg, Subject: "a", SID: "1"}}},
		{"MSG leading zeros", "MSG foo.a 9 007\r\nabcdefg\r\n",
			[]copied{{Op: OpMsg, Subject: "foo.a", SID: "9", Payload: "abcdefg"}}},
		{"MSG nine digit zero size", "MSG a 1 000000000\r\n\r\n", []copied{{Op: OpMsg, Subject: "a", SID: "1"}}},
		{"MSG payload holding CRLF and op names", msg("a", "1", "", "PING\r\nMSG x 1 0\r\n"),
			[]copied{{Op: OpMsg, Subject: "a", SID: "1", Payload: "PING\r\nMSG x 1 0\r\n"}}},
		{"MSG subject with asset-name bytes", msg("a.b@%~", "s-1", "", "z"),
			[]copied{{Op: OpMsg, Subject: "a.b@%~", SID: "s-1", Payload: "z"}}},
		{"HMSG", hmsg("a", "1", "", "NATS/1.0\r\nK: v\r\n\r\n", "body"),
			[]copied{{Op: OpHMsg, Subject: "a", SID: "1", Header: "NATS/1.0\r\nK: v\r\n\r\n", Payload: "body"}}},
		{"HMSG with reply", hmsg("ORDERS.new", "1", jsReplyV2, "NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n", "{}"),
			[]copied{{Op: OpHMsg, Subject: "ORDERS.new", SID: "1", Reply: jsReplyV2,
				Header: "NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n", Payload: "{}"}}},
		{"HMSG minimal block", hmsg("a", "1", "", "NATS/1.0\r\n\r\n", ""),
			[]copied{{Op: OpHMsg, Subject: "a", SID: "1", Header: "NATS/1.0\r\n\r\n"}}},
		{"HMSG 404 No Messages", "HMSG _INBOX.x 1 28 28\r\nNATS/1.0 404 No Messages\r\n\r\n\r\n",
			[]copied{{Op: OpHMsg, Subject: "_INBOX.x", SID: "1", Header: "NATS/1.0 404 No Messages\r\n\r\n",
				Status: 404, Description: "No Messages"}}},
		{"HMSG 503 without description", hmsg("_INBOX.x", "1", "", "NATS/1.0 503\r\nNats-Subject: a.b\r\n\r\n", ""),
			[]copied{{Op: OpHMsg, Subject: "_INBOX.x", SID: "1", Header: "NATS/1.0 503\r\nNats-Subject: a.b\r\n\r\n", Status: 503}}},
		{"HMSG 408 with pending fields", hmsg("_INBOX.x", "1", "",
			"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\nNats-Pending-Bytes: 0\r\n\r\n", ""),
			[]copied{{Op: OpHMsg, Subject: "_INBOX.x", SID: "1",
				Header: "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\nNats-Pending-Bytes: 0\r\n\r\n",
				Status: 408, Description: "Request Timeout"}}},
		{"HMSG leading zeros", "HMSG a 1 012 0014\r\nNATS/1.0\r\n\r\nhi\r\n",
			[]copied{{Op: OpHMsg, Subject: "a", SID: "1", Header: "NATS/1.0\r\n\r\n", Payload: "hi"}}},
		// nats-server writes a present but empty reply as an empty token
		// (server/client.go msgHeader), as its system services answer.
		{"MSG empty reply", "MSG _INBOX.x.1 1  5\r\nhello\r\n",
			[]copied{{Op: OpMsg, Subject: "_INBOX.x.1", SID: "1", Payload: "hello"}}},
		{"MSG empty reply empty payload", "MSG a 1  0\r\n\r\n", []copied{{Op: OpMsg, Subject: "a", SID: "1"}}},
		{"MSG empty reply nine digit size", "MSG a s-9  000000002\r\n{}\r\n",
			[]copied{{Op: OpMsg, Subject: "a", SID: "s-9", Payload: "{}"}}},
		{"HMSG empty reply", "HMSG _INBOX.x.1 1  12 14\r\nNATS/1.0\r\n\r\nhi\r\n",
			[]copied{{Op: OpHMsg, Subject: "_INBOX.x.1", SID: "1", Header: "NATS/1.0\r\n\r\n", Payload: "hi"}}},
		{"HMSG empty reply with status", "HMSG a 1  30 30\r\nNATS/1.0 503 No Responders\r\n\r\n\r\n",
			[]copied{{Op: OpHMsg, Subject: "a", SID: "1", Header: "NATS/1.0 503 No Responders\r\n\r\n",
				Status: 503, Description: "No Responders"}}},
		{"empty reply between other frames", "PING\r\nMSG a 1  1\r\nx\r\n" + msg("a", "2", "r", "y") + "MSG a 3  1\r\nz\r\n",
			[]copied{{Op: OpPing}, {Op: OpMsg, Subject: "a", SID: "1", Payload: "x"},
				{Op: OpMsg, Subject: "a", SID: "2", Reply: "r", Payload: "y"}, {Op: OpMsg, Subject: "a", SID: "3", Payload: "z"}}},
		{"sequence", "INFO {} \r\nPONG\r\nINFO {\"connect_info\":true} \r\nPING\r\n" + msg("a", "1", "r", "x") + "+OK\r\n",
			[]copied{{Op: OpInfo, Info: "{}"}, {Op: OpPong}, {Op: OpInfo, Info: `{"connect_info":true}`}, {Op: OpPing},
				{Op: OpMsg, Subject: "a", SID: "1", Reply: "r", Payload: "x"}, {Op: OpOK}}},
	}
	for _, tt := range tests {
		for _, rd := range readers() {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				got, err := readAll(rd.wrap(tt.input), testLimits)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("ended with %v, want io.EOF", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("frames (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestNextShouldFail(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  error
	}{
		// Unknown ops.
		{"empty line", "\r\n", ErrUnknownOp},
		{"lower case op", "msg a 1 0\r\n\r\n", ErrUnknownOp},
		{"mixed case op", "Ping\r\n", ErrUnknownOp},
		{"client op PUB", "PUB a 1\r\nx\r\n", ErrUnknownOp},
		{"client op CONNECT", "CONNECT {}\r\n", ErrUnknownOp},
		{"route op RMSG", "RMSG $G a 1\r\nx\r\n", ErrUnknownOp},
		{"op glued to argument", "MSGa 1 0\r\n\r\n", ErrUnknownOp},
		{"leading space", " PING\r\n", ErrUnknownOp},
		{"tab after op", "MSG\ta 1 0\r\n\r\n", ErrUnknownOp},
		{"PINGX", "PINGX\r\n", ErrUnknownOp},
		{"TLS record", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", ErrUnknownOp},
		{"HTTP", "HTTP/1.1 400 Bad Request\r\n", ErrUnknownOp},
		{"garbage without LF", strings.Repeat("z", 100), ErrUnknownOp},
		{"bare LF empty line", "\n", ErrUnknownOp},

		// Truncated.
		{"truncated op", "PIN", io.ErrUnexpectedEOF},
		{"truncated before LF", "PING\r", io.ErrUnexpectedEOF},
		{"truncated MSG line", "MSG a 1 5", io.ErrUnexpectedEOF},
		{"truncated MSG payload", "MSG a 1 5\r\nhel", io.ErrUnexpectedEOF},
		{"truncated MSG before CRLF", "MSG a 1 5\r\nhello", io.ErrUnexpectedEOF},
		{"truncated MSG before LF", "MSG a 1 5\r\nhello\r", io.ErrUnexpectedEOF},
		{"truncated HMSG header", "HMSG a 1 12 12\r\nNATS/1.0\r\n", io.ErrUnexpectedEOF},
		{"truncated INFO", "INFO {\"a\":1", io.ErrUnexpectedEOF},
		{"truncated after a frame", "PING\r\nPO", io.ErrUnexpectedEOF},

		// Bare LF and CR.
		{"bare LF PING", "PING\n", ErrMalformed},
		{"bare LF MSG", "MSG a 1 0\n\r\n", ErrMalformed},
		{"bare LF INFO", "INFO {} \n", ErrMalformed},
		{"CR in MSG arguments", "MSG a\r1 0\r\n\r\n", ErrMalformed},
		{"CR in -ERR text", "-ERR 'a\rb'\r\n", ErrMalformed},
		{"CR in INFO", "INFO {\r} \r\n", ErrMalformed},

		// Missing or extra arguments.
		{"MSG no arguments", "MSG\r\n", ErrMalformed},
		{"MSG space only", "MSG \r\n", ErrMalformed},
		{"MSG one argument", "MSG a\r\n", ErrMalformed},
		{"MSG two arguments", "MSG a 1\r\n", ErrMalformed},
		{"MSG five arguments", "MSG a 1 r x 0\r\n\r\n", ErrMalformed},
		{"MSG six arguments", "MSG a 1 r x y 0\r\n\r\n", ErrMalformed},
		{"MSG double space", "MSG a  1 0\r\n\r\n", ErrMalformed},
		{"MSG trailing space", "MSG a 1 0 \r\n\r\n", ErrMalformed},
		{"MSG tab separator", "MSG a\t1 0\r\n\r\n", ErrMalformed},
		{"HMSG three arguments", "HMSG a 12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG six arguments", "HMSG a 1 r x 12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG no arguments", "HMSG\r\n", ErrMalformed},

		// Empty tokens other than the server's empty reply (two spaces
		// between sid and the first size).
		{"MSG three spaces before size", "MSG a 1   5\r\nhello\r\n", ErrMalformed},
		{"MSG four spaces before size", "MSG a 1    5\r\nhello\r\n", ErrMalformed},
		{"MSG double space after op", "MSG  a 1 5\r\nhello\r\n", ErrMalformed},
		{"MSG double space after subject with empty reply", "MSG a  1  5\r\nhello\r\n", ErrMalformed},
		{"MSG double space before size after reply", "MSG a 1 r  5\r\nhello\r\n", ErrMalformed},
		{"MSG double space after size", "MSG a 1 5  \r\nhello\r\n", ErrMalformed},
		{"MSG empty reply then reply", "MSG a 1  r 5\r\nhello\r\n", ErrMalformed},
		{"MSG empty reply without size", "MSG a 1  \r\n", ErrMalformed},
		{"MSG empty reply as trailing space", "MSG a 1 \r\n", ErrMalformed},
		{"MSG space tab before size", "MSG a 1 \t5\r\nhello\r\n", ErrMalformed},
		{"MSG tab space before size", "MSG a 1\t 5\r\nhello\r\n", ErrMalformed},
		{"MSG two tabs before size", "MSG a 1\t\t5\r\nhello\r\n", ErrMalformed},
		{"HMSG three spaces before sizes", "HMSG a 1   12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG double space after op", "HMSG  a 1 12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG double space after subject", "HMSG a  1 12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG double space between sizes", "HMSG a 1 12  12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG double space between sizes after empty reply", "HMSG a 1  12  12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG double space after reply", "HMSG a 1 r  12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG empty reply then reply", "HMSG a 1  r 12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG empty reply with one size", "HMSG a 1  12\r\nNATS/1.0\r\n\r\n", ErrMalformed},
		{"HMSG space tab before sizes", "HMSG a 1 \t12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG tab space before sizes", "HMSG a 1\t 12 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"PING with argument", "PING x\r\n", ErrMalformed},
		{"PING trailing space", "PING \r\n", ErrMalformed},
		{"PONG with argument", "PONG 1\r\n", ErrMalformed},
		{"+OK with argument", "+OK x\r\n", ErrMalformed},
		{"INFO without space before CRLF", "INFO {}\r\n", ErrMalformed},
		{"INFO two spaces before CRLF", "INFO {}  \r\n", ErrMalformed},
		{"INFO not an object", "INFO [] \r\n", ErrMalformed},
		{"INFO empty", "INFO \r\n", ErrMalformed},
		{"INFO no argument", "INFO\r\n", ErrMalformed},
		{"INFO two spaces after op", "INFO  {} \r\n", ErrMalformed},
		{"-ERR unquoted", "-ERR Authorization Violation\r\n", ErrMalformed},
		{"-ERR unterminated quote", "-ERR 'abc\r\n", ErrMalformed},
		{"-ERR no text", "-ERR\r\n", ErrMalformed},
		{"-ERR lone quote", "-ERR '\r\n", ErrMalformed},

		// Sizes.
		{"MSG negative size", "MSG a 1 -1\r\n\r\n", ErrMalformed},
		{"MSG plus size", "MSG a 1 +1\r\nx\r\n", ErrMalformed},
		{"MSG hex size", "MSG a 1 0x1\r\nx\r\n", ErrMalformed},
		{"MSG size ten digits", "MSG a 1 0000000001\r\nx\r\n", ErrMalformed},
		{"MSG size overflow", "MSG a 1 99999999999999999999\r\n", ErrMalformed},
		{"MSG size int64 wrap", "MSG a 1 18446744073709551617\r\n", ErrMalformed},
		{"HMSG negative header size", "HMSG a 1 -12 12\r\n", ErrMalformed},
		{"HMSG negative total", "HMSG a 1 12 -12\r\n", ErrMalformed},
		{"HMSG header over total", "HMSG a 1 14 12\r\nNATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"HMSG header below minimum", "HMSG a 1 2 2\r\n\r\n\r\n", ErrMalformed},
		{"HMSG zero header", "HMSG a 1 0 0\r\n\r\n", ErrMalformed},
		{"HMSG total overflow", "HMSG a 1 12 99999999999\r\n", ErrMalformed},

		// Framing after the payload.
		{"MSG payload longer than size", "MSG a 1 3\r\nhello\r\n", ErrMalformed},
		{"MSG payload shorter than size", "MSG a 1 6\r\nhello\r\nPING\r\n", ErrMalformed},
		{"MSG payload then bare LF", "MSG a 1 5\r\nhello\n\r", ErrMalformed},
		{"MSG payload then LF CR", "MSG a 1 5\r\nhello\n\r\n", ErrMalformed},
		{"HMSG payload longer than total", "HMSG a 1 12 13\r\nNATS/1.0\r\n\r\nxy\r\n", ErrMalformed},

		// Header blocks.
		{"status one digit", hmsg("a", "1", "", "NATS/1.0 5\r\n\r\n", ""), ErrMalformed},
		{"status glued to version", hmsg("a", "1", "", "NATS/1.0418\r\n\r\n", ""), ErrMalformed},
		{"version 2.0", hmsg("a", "1", "", "NATS/2.0 404\r\n\r\n", ""), ErrMalformed},
		{"status four digits", hmsg("a", "1", "", "NATS/1.0 4040\r\n\r\n", ""), ErrMalformed},
		{"status leading zero", hmsg("a", "1", "", "NATS/1.0 099\r\n\r\n", ""), ErrMalformed},
		{"status letters", hmsg("a", "1", "", "NATS/1.0 4x4\r\n\r\n", ""), ErrMalformed},
		{"status empty description", hmsg("a", "1", "", "NATS/1.0 404 \r\n\r\n", ""), ErrMalformed},
		{"status two spaces", hmsg("a", "1", "", "NATS/1.0  404\r\n\r\n", ""), ErrMalformed},
		{"version only with space", hmsg("a", "1", "", "NATS/1.0 \r\n\r\n", ""), ErrMalformed},
		{"lower case version", hmsg("a", "1", "", "nats/1.0\r\n\r\n", ""), ErrMalformed},
		{"header no blank line", hmsg("a", "1", "", "NATS/1.0\r\nK: v\r\n", ""), ErrMalformed},
		{"header bare LF", hmsg("a", "1", "", "NATS/1.0\nK: v\r\n\r\n", ""), ErrMalformed},
		{"header field bare LF", hmsg("a", "1", "", "NATS/1.0\r\nK: v\n\r\n", ""), ErrMalformed},
		{"header field without colon", hmsg("a", "1", "", "NATS/1.0\r\nKv\r\n\r\n", ""), ErrMalformed},
		{"header empty name", hmsg("a", "1", "", "NATS/1.0\r\n: v\r\n\r\n", ""), ErrMalformed},
		{"header name with space", hmsg("a", "1", "", "NATS/1.0\r\nK k: v\r\n\r\n", ""), ErrMalformed},
		{"header continuation line", hmsg("a", "1", "", "NATS/1.0\r\nK: v\r\n w\r\n\r\n", ""), ErrMalformed},
		{"header CR in value", hmsg("a", "1", "", "NATS/1.0\r\nK: v\rw\r\n\r\n", ""), ErrMalformed},
		{"header bytes after blank line", "HMSG a 1 14 14\r\nNATS/1.0\r\n\r\nxy\r\n", ErrMalformed},
		{"header split across payload", "HMSG a 1 16 18\r\nNATS/1.0\r\nK: v\r\n\r\n\r\n", ErrMalformed},
	}
	for _, tt := range tests {
		for _, rd := range readers() {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				_, err := readAll(rd.wrap(tt.input), testLimits)
				if !errors.Is(err, tt.want) {
					t.Fatalf("got %v, want %v", err, tt.want)
				}
			})
		}
	}
}

// TestShouldFailPrefixedByValidFrames checks that each failure is found after
// valid frames too, at the right offset.
func TestShouldFailOffset(t *testing.T) {
	prefix := "PING\r\n" + msg("a", "1", "", "xyz")
	p := New(&onceReader{s: prefix + "MSG a 1 -1\r\n"}, testLimits)
	for range 2 {
		_, err := p.Next()
		mustNotFail(t, err)
	}
	_, err := p.Next()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("got %T %v, want *Error", err, err)
	}
	want := Error{Op: OpMsg, Offset: int64(len(prefix)), Reason: pe.Reason, Err: ErrMalformed}
	if diff := cmp.Diff(want, *pe, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestErrorsAreFinal(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  error
	}{
		{"malformed then valid", "PING x\r\nPING\r\n", ErrMalformed},
		{"unknown then valid", "NOPE\r\nPING\r\n", ErrUnknownOp},
		{"clean EOF", "PING\r\n", io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, first := readAll(&onceReader{s: tt.input}, testLimits)
			p := New(&onceReader{s: tt.input}, testLimits)
			var errs []error
			for range 5 {
				_, err := p.Next()
				errs = append(errs, err)
			}
			got := errs[len(errs)-3:]
			want := []error{first, first, first}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return errors.Is(a, tt.want) && errors.Is(b, tt.want) })); diff != "" {
				t.Errorf("later errors (-want +got):\n%s", diff)
			}
		})
	}
}

// errReader returns data and then a fixed error.
type errReader struct {
	data string
	err  error
}

func (r *errReader) Read(b []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(b, r.data)
	r.data = r.data[n:]
	return n, nil
}

var errBoom = errors.New("test: boom")

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name   string
		r      io.Reader
		frames int
		want   error
	}{
		{"error between frames", &errReader{data: "PING\r\n", err: errBoom}, 1, errBoom},
		{"error inside a frame", &errReader{data: "MSG a 1 5\r\nhe", err: errBoom}, 0, errBoom},
		{"no progress", &errReader{data: "PING\r\n", err: nil}, 1, io.ErrNoProgress},
		{"bad count", badCountReader{}, 0, ErrBadReadCount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(tt.r, testLimits)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if len(got) != tt.frames {
				t.Errorf("got %d frames, want %d", len(got), tt.frames)
			}
		})
	}
}

type badCountReader struct{}

func (badCountReader) Read(b []byte) (int, error) { return len(b) + 1, nil }

func TestReset(t *testing.T) {
	p := New(&onceReader{s: "BAD\r\n"}, testLimits)
	if _, err := p.Next(); !errors.Is(err, ErrUnknownOp) {
		t.Fatalf("got %v, want ErrUnknownOp", err)
	}
	p.Reset(&onceReader{s: "PONG\r\n"})
	f, err := p.Next()
	mustNotFail(t, err)
	if diff := cmp.Diff(copied{Op: OpPong}, detach(f)); diff != "" {
		t.Errorf("frame (-want +got):\n%s", diff)
	}
	if got := p.Offset(); got != 6 {
		t.Errorf("offset %d, want 6", got)
	}
}

func TestOpString(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{OpInfo, "INFO"}, {OpMsg, "MSG"}, {OpHMsg, "HMSG"}, {OpPing, "PING"},
		{OpPong, "PONG"}, {OpOK, "+OK"}, {OpErr, "-ERR"}, {0, "Op(0)"}, {OpErr + 1, "Op(8)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.op.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestEmptyReplyIsNil pins that the server's empty reply token leaves
// Frame.Reply nil, exactly as an absent reply does, so callers see no
// difference between the two forms.
func TestEmptyReplyIsNil(t *testing.T) {
	tests := []struct {
		name  string
		input string
	}{
		{"MSG", "MSG a 1  2\r\n{}\r\n"},
		{"HMSG", "HMSG a 1  12 12\r\nNATS/1.0\r\n\r\n\r\n"},
		{"MSG without reply", "MSG a 1 2\r\n{}\r\n"},
		{"HMSG without reply", "HMSG a 1 12 12\r\nNATS/1.0\r\n\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(&onceReader{s: tt.input}, testLimits)
			f, err := p.Next()
			mustNotFail(t, err)
			if f.Reply != nil {
				t.Errorf("Reply = %q (len %d, cap %d), want nil", f.Reply, len(f.Reply), cap(f.Reply))
			}
			if got := p.Offset(); got != int64(len(tt.input)) {
				t.Errorf("offset %d, want %d", got, len(tt.input))
			}
		})
	}
}

func TestFrameSlicesAreCapped(t *testing.T) {
	p := New(&onceReader{s: hmsg("a", "1", "r", "NATS/1.0 408 Request Timeout\r\nK: v\r\n\r\n", "pay")}, testLimits)
	f, err := p.Next()
	mustNotFail(t, err)
	v, _ := f.HeaderValue("K")
	for name, b := range map[string][]byte{
		"subject": f.Subject, "sid": f.SID, "reply": f.Reply, "header": f.Header,
		"description": f.Description, "payload": f.Payload, "value": v,
	} {
		if cap(b) != len(b) {
			t.Errorf("%s: cap %d, len %d", name, cap(b), len(b))
		}
	}
}

func TestErrorMessagesCarryNoInput(t *testing.T) {
	secret := "s3cr3t"
	inputs := []string{
		"-ERR '" + secret + "\r\n",
		"MSG " + secret + " 1 " + secret + "\r\n",
		hmsg("a", "1", "", "NATS/1.0 404 "+secret+"\rx\r\n\r\n", ""),
		secret + "\r\n",
		"INFO {\"" + secret + "\"}\r\n",
	}
	for _, in := range inputs {
		_, err := readAll(&onceReader{s: in}, testLimits)
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("error %q carries input bytes", err)
		}
	}
}
