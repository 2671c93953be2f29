package conn

import (
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// maxInfoDepth bounds the nesting of an INFO's JSON. nats-server 2.14.6
// nests one level (connect_urls, tls_available...); the bound leaves room
// for a later release's fields, which are read through and ignored.
const maxInfoDepth = 8

// serverInfo holds the INFO fields the connection reads. host, port,
// connect_urls, ws_connect_urls, ip and client_ip are deliberately absent:
// nothing a server advertises is ever dialled.
type serverInfo struct {
	Proto       int
	Version     string
	Headers     bool
	MaxPayload  int64
	Nonce       string
	JetStream   bool
	Cluster     string
	LameDuck    bool
	ConnectInfo bool
}

// decodeInfo reads an INFO's JSON with the project's one strict JSON
// path (internal/jsontree on internal/jsonlex): keys matched exactly, case
// included; any key given twice, a key the connection reads given a value
// of another type (or a number that is not an integer in range), invalid
// UTF-8 and nesting past maxInfoDepth are ErrMalformedInfo; keys it does
// not read are skipped, since every release adds some.
func decodeInfo(b []byte) (serverInfo, error) {
	root, err := jsontree.Parse(b, maxInfoDepth)
	if err != nil {
		return serverInfo{}, ErrMalformedInfo
	}
	var si serverInfo
	bad := false
	integer := func(dst *int64) func(string, *jsontree.Node) {
		return func(_ string, n *jsontree.Node) {
			v, err := n.Int(64)
			bad = bad || err != nil
			*dst = v
		}
	}
	var proto int64
	str := func(dst *string) func(string, *jsontree.Node) {
		return func(_ string, n *jsontree.Node) { *dst = n.Text }
	}
	boolean := func(dst *bool) func(string, *jsontree.Node) {
		return func(_ string, n *jsontree.Node) { *dst = n.Bool }
	}
	w := jsontree.Walker{Report: func(_ string, err error) {
		bad = bad || err != jsontree.ErrUnknownKey
	}}
	w.Object("", root, []jsontree.Want{
		{Name: "proto", Kind: jsontree.KindNumber, Optional: true, Set: integer(&proto)},
		{Name: "version", Kind: jsontree.KindString, Optional: true, Set: str(&si.Version)},
		{Name: "headers", Kind: jsontree.KindBool, Optional: true, Set: boolean(&si.Headers)},
		{Name: "max_payload", Kind: jsontree.KindNumber, Optional: true, Set: integer(&si.MaxPayload)},
		{Name: "nonce", Kind: jsontree.KindString, Optional: true, Set: str(&si.Nonce)},
		{Name: "jetstream", Kind: jsontree.KindBool, Optional: true, Set: boolean(&si.JetStream)},
		{Name: "cluster", Kind: jsontree.KindString, Optional: true, Set: str(&si.Cluster)},
		{Name: "ldm", Kind: jsontree.KindBool, Optional: true, Set: boolean(&si.LameDuck)},
		{Name: "connect_info", Kind: jsontree.KindBool, Optional: true, Set: boolean(&si.ConnectInfo)},
	})
	if bad || proto > maxInfoProto {
		return serverInfo{}, ErrMalformedInfo
	}
	si.Proto = int(proto)
	return si, nil
}

// maxInfoProto is the largest protocol number read; the protocol is a
// small integer (1 since nats-server 1.2).
const maxInfoProto = 1 << 16

// parseInfo decodes and checks the first INFO.
func parseInfo(b []byte) (serverInfo, error) {
	si, err := decodeInfo(b)
	if err != nil {
		return serverInfo{}, err
	}
	if si.MaxPayload <= 0 || len(si.Nonce) > MaxInfoNonceLen || !nonceChars(si.Nonce) {
		return serverInfo{}, ErrMalformedInfo
	}
	if si.Proto < 1 || !si.Headers {
		return serverInfo{}, ErrUnsupportedServer
	}
	return si, nil
}

// asyncInfo decodes an INFO that arrives after the first and reports its
// lame-duck flag; a malformed one is ErrMalformedInfo.
func asyncInfo(b []byte) (lameDuck bool, err error) {
	si, err := decodeInfo(b)
	return si.LameDuck, err
}

// nonceChars accepts the base64 (RawURL or standard) alphabet.
func nonceChars(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		ok := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
			b == '-' || b == '_' || b == '+' || b == '/' || b == '='
		if !ok {
			return false
		}
	}
	return true
}

// sendsConnectInfo reports whether a server of this version follows the
// first PONG with an INFO carrying connect_info (since 2.12.0). An
// unparsable version is taken as an older server.
func sendsConnectInfo(version string) bool {
	major, rest, ok := strings.Cut(version, ".")
	if !ok {
		return false
	}
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > 2 || ma == 2 && mi >= 12
}
