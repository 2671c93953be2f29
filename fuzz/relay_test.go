package fuzz

import (
	"bytes"
	"errors"
	"strconv"
)

var errRelay = errors.New("fuzz: relay: not a PUB or HPUB the server would accept")

// relay turns one PUB or HPUB a client wrote into the MSG or HMSG the server
// writes to a subscriber with the given sid (SRV client.go msgHeader): the
// arguments are split on runs of spaces and tabs as the server does, the
// sizes parsed with at most 9 digits, and the sizes re-emitted in the form
// received. It returns the frame and the rest of the input.
func relay(in []byte, sid string) (frame, rest []byte, err error) {
	eol := bytes.Index(in, []byte("\r\n"))
	if eol < 0 {
		return nil, nil, errRelay
	}
	args := bytes.FieldsFunc(in[:eol], func(r rune) bool { return r == ' ' || r == '\t' })
	if len(args) == 0 {
		return nil, nil, errRelay
	}
	body := in[eol+2:]
	var subject, reply, hdr, total []byte
	switch string(args[0]) {
	case "PUB":
		switch len(args) {
		case 3:
			subject, total = args[1], args[2]
		case 4:
			subject, reply, total = args[1], args[2], args[3]
		default:
			return nil, nil, errRelay
		}
	case "HPUB":
		switch len(args) {
		case 4:
			subject, hdr, total = args[1], args[2], args[3]
		case 5:
			subject, reply, hdr, total = args[1], args[2], args[3], args[4]
		default:
			return nil, nil, errRelay
		}
	default:
		return nil, nil, errRelay
	}
	n := size(total)
	if n < 0 || (hdr != nil && (size(hdr) < 0 || size(hdr) > n)) || len(body) < n+2 ||
		string(body[n:n+2]) != "\r\n" {
		return nil, nil, errRelay
	}
	var out []byte
	if hdr == nil {
		out = append(out, "MSG "...)
	} else {
		out = append(out, "HMSG "...)
	}
	out = append(out, subject...)
	out = append(out, ' ')
	out = append(out, sid...)
	out = append(out, ' ')
	if reply != nil {
		out = append(out, reply...)
		out = append(out, ' ')
	}
	if hdr != nil {
		out = append(out, hdr...)
		out = append(out, ' ')
	}
	out = append(out, total...)
	out = append(out, "\r\n"...)
	out = append(out, body[:n+2]...)
	return out, body[n+2:], nil
}

// size is the server's parseSize: 1 to 9 ASCII digits.
func size(b []byte) int {
	if len(b) == 0 || len(b) > 9 {
		return -1
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 || b[0] == '+' || b[0] == '-' {
		return -1
	}
	return n
}
