package fuzz

import (
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
)

const maxPayload = 1 << 16

// message is what a publisher sent and a subscriber must read back.
type message struct {
	Subject, Reply, Header, Payload string
	Status                          int
	Values                          map[string]string
}

// onceReader is a plain reader over a byte string.
type onceReader struct {
	b []byte
}

func (r *onceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// splitReader returns the input in two reads cut at k, then in chunks of n.
type splitReader struct {
	b    []byte
	k, n int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	lim := r.n
	if r.k > 0 {
		lim, r.k = r.k, 0
	}
	lim = min(lim, len(p), len(r.b))
	copy(p, r.b[:lim])
	r.b = r.b[lim:]
	return lim, nil
}

func readMessages(r io.Reader) ([]message, error) {
	p := parser.New(r, parser.DefaultLimits(maxPayload))
	var out []message
	for range 64 {
		f, err := p.Next()
		if err != nil {
			return out, err
		}
		if f.Op != parser.OpMsg && f.Op != parser.OpHMsg {
			continue
		}
		m := message{Subject: string(f.Subject), Reply: string(f.Reply), Header: string(f.Header),
			Payload: string(f.Payload), Status: f.Status, Values: map[string]string{}}
		for _, k := range []string{"Nats-Msg-Id", "K"} {
			if v, ok := f.HeaderValue(k); ok {
				m.Values[k] = string(v)
			}
		}
		out = append(out, m)
	}
	return out, errors.New("fuzz: too many frames")
}

// FuzzWireToParser publishes through wire (PUB, or HPUB with a header block
// from AppendHeader), relays the bytes as the server would, and checks that
// parser reads back exactly what was published, whole, one byte at a time
// and split at any point.
func FuzzWireToParser(f *testing.F) {
	f.Add("orders.new", "", []byte("hello"), "", "", "", "", uint16(3), uint8(1))
	f.Add("orders.new", "$JS.ACK.S.C.1.2.3.4.5", []byte(`{"a":1}`), "Nats-Msg-Id", "7", "K", "v", uint16(40), uint8(5))
	f.Add("a", "_INBOX.x.1", []byte{}, "K", "a", "K", "b", uint16(0), uint8(0))
	f.Add("a.b@%~", "r", []byte("PING\r\nMSG x 1 0\r\n"), "X-Y", "\xc3\xa9", "", "", uint16(17), uint8(2))
	f.Fuzz(func(t *testing.T, subject, reply string, payload []byte, k1, v1, k2, v2 string, cut uint16, chunk uint8) {
		var kv []string
		if k1 != "" {
			kv = append(kv, k1, v1)
		}
		if k2 != "" {
			kv = append(kv, k2, v2)
		}
		var pub []byte
		var err error
		want := message{Subject: subject, Reply: reply, Payload: string(payload), Values: map[string]string{}}
		if len(kv) == 0 {
			pub, err = wire.AppendPubText(nil, subject, reply, payload, maxPayload)
		} else {
			var hdr []byte
			hdr, err = wire.AppendHeader(nil, kv...)
			if err != nil {
				return
			}
			want.Header = string(hdr)
			for i := len(kv) - 2; i >= 0; i -= 2 {
				if kv[i] == "Nats-Msg-Id" || kv[i] == "K" {
					want.Values[kv[i]] = kv[i+1]
				}
			}
			pub, err = wire.AppendHPubText(nil, subject, reply, hdr, payload, maxPayload)
		}
		if err != nil {
			return
		}
		// The same message twice, with the ops a server interleaves.
		var stream []byte
		rest := append(append(append([]byte{}, pub...), pub...), "PING\r\n"...)
		for range 2 {
			var frame []byte
			frame, rest, err = relay(rest, "1")
			if err != nil {
				t.Fatalf("wire wrote %q, which the server would refuse", pub)
			}
			stream = append(append(stream, frame...), "PONG\r\n"...)
		}
		wants := []message{want, want}
		readers := map[string]io.Reader{
			"whole":    &onceReader{b: stream},
			"one byte": iotest.OneByteReader(&onceReader{b: stream}),
			"split":    &splitReader{b: stream, k: int(cut) % (len(stream) + 1), n: 1 + int(chunk)},
		}
		for name, r := range readers {
			got, err := readMessages(r)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: ended with %v on %q", name, err, stream)
			}
			if diff := cmp.Diff(wants, got); diff != "" {
				t.Fatalf("%s: (-published +read):\n%s", name, diff)
			}
		}
	})
}
