package parser

import (
	"bytes"
	"strings"
)

// headerVersion opens every header block.
const headerVersion = "NATS/1.0"

// ParseHeader checks a complete header block against the closed grammar
// the server and its clients emit (ADR-4):
//
//	NATS/1.0[ <status>[ <description>]]\r\n
//	(<name>:<value>\r\n)*
//	\r\n
//
// status is exactly 3 ASCII digits, the first not 0; description is one or
// more bytes other than CR and LF. A name is one or more bytes from '!' to
// '~' other than ':'; a value is any bytes other than CR and LF, with
// leading and trailing spaces and tabs not part of it. Every line ends in
// CRLF; a bare LF, a continuation line, a missing blank line or bytes after
// it are malformed. The block, blank line included, may be at most
// MaxHeaderBlock bytes (ErrHeaderTooLarge).
//
// It returns the status (0 when absent) and the description (empty when
// absent), which aliases block. It does not allocate unless it fails.
func ParseHeader(block []byte) (status int, description []byte, err error) {
	if len(block) > MaxHeaderBlock {
		return 0, nil, &Error{Op: OpHMsg, Reason: "header block over cap", Err: ErrHeaderTooLarge}
	}
	status, description, reason := parseHeader(block)
	if reason != "" {
		return 0, nil, &Error{Op: OpHMsg, Reason: reason, Err: ErrMalformed}
	}
	return status, description, nil
}

// parseHeader is ParseHeader without the cap; it reports a failure as a
// fixed reason so that the frame parser can place it.
func parseHeader(b []byte) (status int, description []byte, reason string) {
	if len(b) < minHeaderBlock {
		return 0, nil, "header block too short"
	}
	if string(b[:len(headerVersion)]) != headerVersion {
		return 0, nil, "header version line"
	}
	rest := b[len(headerVersion):]
	i := bytes.IndexByte(rest, '\n')
	if i < 1 || rest[i-1] != '\r' {
		return 0, nil, "header status line not ended by CRLF"
	}
	line := rest[:i-1]
	rest = rest[i+1:]
	if len(line) > 0 {
		if len(line) < 4 || line[0] != ' ' {
			return 0, nil, "header status code"
		}
		d0, d1, d2 := line[1], line[2], line[3]
		if d0 < '1' || d0 > '9' || d1 < '0' || d1 > '9' || d2 < '0' || d2 > '9' {
			return 0, nil, "header status code"
		}
		status = int(d0-'0')*100 + int(d1-'0')*10 + int(d2-'0')
		if len(line) > 4 {
			if line[4] != ' ' || len(line) == 5 {
				return 0, nil, "header status description"
			}
			description = line[5:len(line):len(line)]
			if bytes.IndexByte(description, '\r') >= 0 {
				return 0, nil, "carriage return in header status line"
			}
		}
	}
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 1 || rest[i-1] != '\r' {
			return 0, nil, "header line not ended by CRLF"
		}
		line := rest[:i-1]
		rest = rest[i+1:]
		if len(line) == 0 {
			if len(rest) != 0 {
				return 0, nil, "bytes after header blank line"
			}
			return status, description, ""
		}
		if r := fieldReason(line); r != "" {
			return 0, nil, r
		}
	}
	return 0, nil, "header blank line missing"
}

// fieldReason checks one "name:value" line (CRLF removed).
func fieldReason(line []byte) string {
	colon := 0
	for ; colon < len(line) && line[colon] != ':'; colon++ {
		if c := line[colon]; c < '!' || c > '~' {
			return "header field name"
		}
	}
	if colon == 0 || colon == len(line) {
		return "header field name"
	}
	if bytes.IndexByte(line[colon+1:], '\r') >= 0 {
		return "carriage return in header value"
	}
	return ""
}

// HeaderValue returns the value of the first field named exactly key in a
// header block that ParseHeader accepted, trimmed of surrounding spaces and
// tabs, aliasing block. It does not allocate.
func HeaderValue(block []byte, key string) ([]byte, bool) {
	i := bytes.IndexByte(block, '\n')
	if i < 0 || key == "" || strings.IndexByte(key, ':') >= 0 {
		return nil, false
	}
	rest := block[i+1:]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 1 {
			return nil, false
		}
		line := rest[:i-1]
		rest = rest[i+1:]
		if len(line) > len(key) && line[len(key)] == ':' && string(line[:len(key)]) == key {
			return trimOWS(line[len(key)+1:]), true
		}
	}
	return nil, false
}

// HeaderValueFold returns the value of the first field whose name equals
// key under ASCII case folding ("traceparent", "Traceparent" and
// "TRACEPARENT" are one name) in a header block that ParseHeader accepted,
// trimmed of surrounding spaces and tabs and aliasing block, and the
// number of fields with that name. NATS header names are case-sensitive
// (HeaderValue); this is for a name defined outside NATS that producers
// spell in more than one case, where a caller must see every spelling to
// refuse an ambiguous block. It does not allocate.
func HeaderValueFold(block []byte, key string) (value []byte, n int) {
	i := bytes.IndexByte(block, '\n')
	if i < 0 || key == "" || strings.IndexByte(key, ':') >= 0 {
		return nil, 0
	}
	rest := block[i+1:]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 1 {
			break
		}
		line := rest[:i-1]
		rest = rest[i+1:]
		if len(line) > len(key) && line[len(key)] == ':' && equalFold(line[:len(key)], key) {
			if n == 0 {
				value = trimOWS(line[len(key)+1:])
			}
			n++
		}
	}
	return value, n
}

// equalFold reports whether name equals key under ASCII case folding.
func equalFold(name []byte, key string) bool {
	for i := range len(name) {
		a, b := name[i], key[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// trimOWS trims spaces and tabs at both ends and caps the result.
func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v[:len(v):len(v)]
}
