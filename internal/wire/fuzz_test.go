package wire

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// refSubject is the subject rule written independently: dot-separated
// non-empty tokens of bytes above space other than DEL, "*" and ">" only as
// whole tokens, ">" only last, and no wildcard when publishing.
func refSubject(s string, publish bool) bool {
	if s == "" {
		return false
	}
	toks := strings.Split(s, ".")
	for i, tok := range toks {
		if tok == "" || strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return false
		}
		if (tok == "*" || tok == ">") && publish {
			return false
		}
		if tok == ">" && i != len(toks)-1 {
			return false
		}
	}
	return true
}

// FuzzSubject checks the subject validators against refSubject, and that
// AppendPubText either refuses with dst untouched or writes exactly
// "PUB <subject> [<reply>] <size>\r\n<payload>\r\n".
func FuzzSubject(f *testing.F) {
	for _, s := range []string{"a", "a.b", "a.*", "a.>", ">", "a..b", "a b", "a\x00", "\xff.\xfe", "$JS.ACK.S.C.1.2.3.4.5"} {
		f.Add(s, "_INBOX.x", []byte("p"))
	}
	f.Fuzz(func(t *testing.T, subject, reply string, payload []byte) {
		if got, want := subjectReason(subject, true) == "", refSubject(subject, false); got != want {
			t.Fatalf("subscription subject %q valid=%v, reference %v", subject, got, want)
		}
		if got, want := ValidPublishSubject(subject) == nil, refSubject(subject, true); got != want {
			t.Fatalf("ValidPublishSubject(%q) valid=%v, reference %v", subject, got, want)
		}
		dst := []byte("x")
		out, err := AppendPubText(dst, subject, reply, payload, 1<<16)
		ok := refSubject(subject, true) && (reply == "" || refSubject(reply, true)) && len(payload) <= 1<<16 &&
			len("PUB  \r\n")+len(subject)+len(reply)+len(strconv.Itoa(len(payload)))+btoi(reply != "") <= MaxControlLine
		if (err == nil) != ok {
			t.Fatalf("AppendPubText(%q, %q) err=%v, reference ok=%v", subject, reply, err, ok)
		}
		text, textErr := AppendPubText([]byte("x"), []byte(subject), []byte(reply), payload, 1<<16)
		if !bytes.Equal(text, out) || !sameSentinel(textErr, err) {
			t.Fatalf("AppendPubText(%q, %q) = %q, %v; with strings %q, %v", subject, reply, text, textErr, out, err)
		}
		if err != nil {
			if !bytes.Equal(out, dst) {
				t.Fatalf("dst changed on error")
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("got %T", err)
			}
			return
		}
		want := "xPUB " + subject + " "
		if reply != "" {
			want += reply + " "
		}
		want += strconv.Itoa(len(payload)) + "\r\n" + string(payload) + "\r\n"
		if string(out) != want {
			t.Fatalf("got %q, want %q", out, want)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sameSentinel reports whether a and b are both nil or both *Error with
// the same sentinel.
func sameSentinel(a, b error) bool {
	var ea, eb *Error
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return errors.As(a, &ea) && errors.As(b, &eb) && ea.Err == eb.Err
}
