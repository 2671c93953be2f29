package wire

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Connect is the CONNECT options object. Every field has an explicit JSON
// name. verbose, pedantic, tls_required, echo, headers, no_responders and
// protocol are always sent, because the server defaults omitted verbose,
// pedantic and echo to true; protocol is always 1 (asynchronous INFO).
//
// JWT, Sig, Pass and AuthToken are secrets: String, GoString and Format
// print "[redacted]" in their place, whatever the verb.
type Connect struct {
	Verbose      bool   `json:"verbose"`
	Pedantic     bool   `json:"pedantic"`
	TLSRequired  bool   `json:"tls_required"`
	JWT          string `json:"jwt,omitempty"`
	NKey         string `json:"nkey,omitempty"`
	Sig          string `json:"sig,omitempty"`
	User         string `json:"user,omitempty"`
	Pass         string `json:"pass,omitempty"`
	AuthToken    string `json:"auth_token,omitempty"`
	Name         string `json:"name,omitempty"`
	Lang         string `json:"lang,omitempty"`
	Version      string `json:"version,omitempty"`
	Protocol     int    `json:"protocol"`
	Echo         bool   `json:"echo"`
	Headers      bool   `json:"headers"`
	NoResponders bool   `json:"no_responders"`
}

// AppendConnect appends "CONNECT {json}\r\n". It refuses (ErrInvalidConnect)
// a Protocol other than 0 or 1 (both are sent as 1), NoResponders without
// Headers (the server closes such a connection), JWT together with NKey, and
// Sig without JWT or NKey to verify it. On error dst is returned unchanged.
func AppendConnect(dst []byte, c *Connect) ([]byte, error) {
	const op = "CONNECT"
	switch {
	case c == nil:
		return dst, fail(op, "options", "nil", ErrInvalidConnect)
	case c.Protocol != 0 && c.Protocol != 1:
		return dst, fail(op, "protocol", "not 1", ErrInvalidConnect)
	case c.NoResponders && !c.Headers:
		return dst, fail(op, "no_responders", "requires headers", ErrInvalidConnect)
	case c.JWT != "" && c.NKey != "":
		return dst, fail(op, "nkey", "set together with jwt", ErrInvalidConnect)
	case c.Sig != "" && c.JWT == "" && c.NKey == "":
		return dst, fail(op, "sig", "without jwt or nkey", ErrInvalidConnect)
	}
	cc := *c
	cc.Protocol = 1
	js, err := json.Marshal(&cc)
	if err != nil {
		// Unreachable for this struct; kept typed all the same.
		return dst, fail(op, "options", "not encodable", ErrInvalidConnect)
	}
	dst = append(dst, "CONNECT "...)
	dst = append(dst, js...)
	return append(dst, "\r\n"...), nil
}

const redacted = "[redacted]"

func redact(s string) string {
	if s == "" {
		return ""
	}
	return redacted
}

// String prints the options with secrets redacted.
func (c Connect) String() string {
	var b strings.Builder
	b.WriteString("wire.Connect{")
	field := func(name, v string) {
		if b.Len() > len("wire.Connect{") {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(v)
	}
	q := strconv.Quote
	bl := strconv.FormatBool
	field("Verbose", bl(c.Verbose))
	field("Pedantic", bl(c.Pedantic))
	field("TLSRequired", bl(c.TLSRequired))
	field("JWT", q(redact(c.JWT)))
	field("NKey", q(c.NKey))
	field("Sig", q(redact(c.Sig)))
	field("User", q(c.User))
	field("Pass", q(redact(c.Pass)))
	field("AuthToken", q(redact(c.AuthToken)))
	field("Name", q(c.Name))
	field("Lang", q(c.Lang))
	field("Version", q(c.Version))
	field("Protocol", strconv.Itoa(c.Protocol))
	field("Echo", bl(c.Echo))
	field("Headers", bl(c.Headers))
	field("NoResponders", bl(c.NoResponders))
	b.WriteByte('}')
	return b.String()
}

// GoString prints the options with secrets redacted (the %#v form).
func (c Connect) GoString() string { return c.String() }

// Format prints the redacted String form for every verb, so that no verb or
// flag (%v, %+v, %#v, %s, %q, %x, ...) reaches a secret field.
func (c Connect) Format(f fmt.State, verb rune) {
	s := c.String()
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = f.Write([]byte(s))
}
