package frametest

import (
	"strconv"
	"strings"
)

// Reply subjects of JetStream deliveries: the classic nine-token form and
// the v2 form with domain "_" that 2.14.6 emits under js_ack_fc_v2.
const (
	AckReply   = "$JS.ACK.ORDERS.worker-durable-1.1.184467.184467.1767225600123456789.0"
	AckReplyV2 = "$JS.ACK._.ZFK4PJX3C2QD7UZGBD4BJD.ORDERS.worker-durable-1.1.184467.184467.1767225600123456789.0.L7wR0k"
)

// Shape is one frame, byte for byte as the server writes it.
type Shape struct {
	// Name identifies the shape in benchmark names, e.g. "MSG/1KiB".
	Name string
	// Frame is the complete frame, control line through the trailing CRLF.
	Frame []byte
	// Subject, SID and Reply are the control-line arguments.
	Subject, SID, Reply string
	// Header is the header block (HMSG only).
	Header string
	// Payload is the body.
	Payload []byte
}

// Msg builds "MSG subject sid [reply] size\r\npayload\r\n".
func Msg(subject, sid, reply string, payload []byte) []byte {
	return Frame(subject, sid, reply, "", payload)
}

// Frame builds a MSG frame when header is empty and an HMSG frame otherwise.
func Frame(subject, sid, reply, header string, payload []byte) []byte {
	var b strings.Builder
	if header == "" {
		b.WriteString("MSG ")
	} else {
		b.WriteString("HMSG ")
	}
	b.WriteString(subject)
	b.WriteByte(' ')
	b.WriteString(sid)
	b.WriteByte(' ')
	if reply != "" {
		b.WriteString(reply)
		b.WriteByte(' ')
	}
	if header != "" {
		b.WriteString(strconv.Itoa(len(header)))
		b.WriteByte(' ')
	}
	b.WriteString(strconv.Itoa(len(header) + len(payload)))
	b.WriteString("\r\n")
	b.WriteString(header)
	b.Write(payload)
	b.WriteString("\r\n")
	return []byte(b.String())
}

// Payload returns n bytes of JSON-looking text.
func Payload(n int) []byte {
	const unit = `{"order":1234567,"sku":"AB-1234","qty":3},`
	p := []byte(strings.Repeat(unit, n/len(unit)+1)[:n])
	return p
}

// SID is the subscription id every shape uses: the first one a client
// allocates.
const SID = "1"

// Shapes returns the benchmark shapes: MSG and HMSG with one header at 128 B,
// 1 KiB and 32 KiB, and JetStream-shaped deliveries (256-byte body with an
// $JS.ACK reply, with and without a Nats-Msg-Id header, and the status
// frames of a pull: 404, 408 and a 100 heartbeat).
func Shapes() []Shape {
	const (
		subject  = "orders.eu.created"
		inbox    = "_INBOX.ZFK4PJX3C2QD7UZGBD4BJD.1"
		msgID    = "NATS/1.0\r\nNats-Msg-Id: 5d0c3b7e-2f4e-4a51-9c55-0b3d9c1e7a42\r\n\r\n"
		s404     = "NATS/1.0 404 No Messages\r\n\r\n"
		s408     = "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 256\r\n\r\n"
		s100     = "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 184467\r\nNats-Last-Stream: 184467\r\n\r\n"
		jsSubj   = "ORDERS.eu.created"
		jsBody   = 256
		kib      = 1024
		oneLineH = "NATS/1.0\r\nNats-Msg-Id: 5d0c3b7e\r\n\r\n"
	)
	var out []Shape
	add := func(name, subject, reply, header string, payload []byte) {
		out = append(out, Shape{
			Name: name, Frame: Frame(subject, SID, reply, header, payload),
			Subject: subject, SID: SID, Reply: reply, Header: header, Payload: payload,
		})
	}
	for _, sz := range []struct {
		name string
		n    int
	}{{"128B", 128}, {"1KiB", kib}, {"32KiB", 32 * kib}} {
		add("MSG/"+sz.name, subject, "", "", Payload(sz.n))
	}
	for _, sz := range []struct {
		name string
		n    int
	}{{"128B", 128}, {"1KiB", kib}, {"32KiB", 32 * kib}} {
		add("HMSG/"+sz.name, subject, "", oneLineH, Payload(sz.n))
	}
	add("JS/MSG-256B-ack", jsSubj, AckReply, "", Payload(jsBody))
	add("JS/MSG-256B-ackv2", jsSubj, AckReplyV2, "", Payload(jsBody))
	add("JS/HMSG-256B-ack-msgid", jsSubj, AckReply, msgID, Payload(jsBody))
	add("JS/status-404", inbox, "", s404, nil)
	add("JS/status-408", inbox, "", s408, nil)
	add("JS/status-100", inbox, "", s100, nil)
	return out
}

// Lookup returns the shape with the given name.
func Lookup(name string) (Shape, bool) {
	for _, s := range Shapes() {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// LoopReader replays a stream endlessly: every Read fills its whole buffer
// with the next bytes of the stream, wrapping at the end. It never returns an
// error.
type LoopReader struct {
	data []byte
	off  int
}

// NewLoopReader replays frame repeated enough times to make a stream of at
// least 64 KiB, so every Read is a large copy, as from a socket buffer.
func NewLoopReader(frame []byte) *LoopReader {
	n := (64<<10)/len(frame) + 1
	data := make([]byte, 0, n*len(frame))
	for range n {
		data = append(data, frame...)
	}
	return &LoopReader{data: data}
}

// Read implements io.Reader.
func (r *LoopReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		c := copy(b[n:], r.data[r.off:])
		n += c
		r.off += c
		if r.off == len(r.data) {
			r.off = 0
		}
	}
	return n, nil
}
