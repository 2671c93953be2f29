package wire

// forbidden reports bytes no subject, reply, queue, sid or header may
// contain: space, every ASCII control byte (tab, CR, LF and NUL among them)
// and DEL. The server splits arguments on space and tab and ends lines at LF.
func forbidden(c byte) bool { return c <= ' ' || c == 0x7f }

// ValidPublishSubject checks a subject to publish to: one or more tokens
// separated by '.', no token empty, no forbidden byte (space, control
// bytes, DEL), and no wildcard token ('*' or '>') at all. Errors wrap ErrInvalidSubject.
func ValidPublishSubject(s string) error {
	if r := subjectReason(s, false); r != "" {
		return fail("PUB", "subject", r, ErrInvalidSubject)
	}
	return nil
}

// subjectReason returns why s is not a subject ("" when it is).
func subjectReason[S Text](s S, wildcards bool) string {
	if len(s) == 0 {
		return "empty"
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if forbidden(s[i]) {
				return "forbidden byte"
			}
			continue
		}
		switch {
		case i == start:
			return "empty token"
		case i == start+1 && (s[start] == '*' || s[start] == '>'):
			if !wildcards {
				return "wildcard in a publish subject"
			}
			if s[start] == '>' && i != len(s) {
				return "'>' not the last token"
			}
		}
		start = i + 1
	}
	return ""
}

// tokenReason checks a single-word argument (a sid): non-empty,
// no forbidden byte.
func tokenReason(s string) string {
	if s == "" {
		return "empty"
	}
	for i := 0; i < len(s); i++ {
		if forbidden(s[i]) {
			return "forbidden byte"
		}
	}
	return ""
}
