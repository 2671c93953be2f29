package conn

import (
	"encoding/json"
	"strconv"
	"strings"
)

// serverInfo holds the INFO fields the connection reads. host, port,
// connect_urls, ws_connect_urls, ip and client_ip are deliberately absent:
// nothing a server advertises is ever dialled.
type serverInfo struct {
	Proto       int    `json:"proto"`
	Version     string `json:"version"`
	Headers     bool   `json:"headers"`
	MaxPayload  int64  `json:"max_payload"`
	Nonce       string `json:"nonce"`
	JetStream   bool   `json:"jetstream"`
	Cluster     string `json:"cluster"`
	LameDuck    bool   `json:"ldm"`
	ConnectInfo bool   `json:"connect_info"`
}

// parseInfo decodes and checks the first INFO.
func parseInfo(b []byte) (serverInfo, error) {
	var si serverInfo
	if err := json.Unmarshal(b, &si); err != nil {
		return serverInfo{}, ErrMalformedInfo
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
	var si struct {
		LameDuck bool `json:"ldm"`
	}
	if err := json.Unmarshal(b, &si); err != nil {
		return false, ErrMalformedInfo
	}
	return si.LameDuck, nil
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
