package parser

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// genToken draws an argument token: bytes other than space, tab, CR, LF.
func genToken(t *rapid.T, label string) string {
	return rapid.StringMatching(`[!-~]{1,40}`).Draw(t, label)
}

// genFrame draws any valid frame.
func genFrame(t *rapid.T) copied {
	switch rapid.IntRange(0, 6).Draw(t, "op") {
	case 0:
		return copied{Op: OpInfo, Info: "{" + rapid.StringMatching(`"[a-z_]{1,8}":[0-9]{1,5}`).Draw(t, "info") + "}"}
	case 1:
		return copied{Op: OpPing}
	case 2:
		return copied{Op: OpPong}
	case 3:
		return copied{Op: OpOK}
	case 4:
		return copied{Op: OpErr, ErrText: rapid.StringMatching(`[A-Za-z "'.]{0,30}`).Draw(t, "err")}
	}
	f := copied{Op: OpMsg, Subject: genToken(t, "subject"), SID: genToken(t, "sid")}
	if rapid.Bool().Draw(t, "has reply") {
		f.Reply = genToken(t, "reply")
	}
	f.Payload = string(rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "payload"))
	if rapid.Bool().Draw(t, "has header") {
		f.Op = OpHMsg
		h := "NATS/1.0"
		if rapid.Bool().Draw(t, "has status") {
			f.Status = rapid.IntRange(100, 999).Draw(t, "status")
			h += " " + itoa3(f.Status)
			if rapid.Bool().Draw(t, "has description") {
				f.Description = rapid.StringMatching(`[A-Za-z][A-Za-z ]{0,20}`).Draw(t, "description")
				h += " " + f.Description
			}
		}
		h += "\r\n"
		for i := range rapid.IntRange(0, 4).Draw(t, "fields") {
			h += rapid.StringMatching(`[A-Za-z0-9-]{1,12}`).Draw(t, "name "+itoa3(i)) + ": " +
				rapid.StringMatching(`[ -~]{0,20}`).Draw(t, "value") + "\r\n"
		}
		f.Header = h + "\r\n"
	}
	return f
}

func itoa3(n int) string {
	return string([]byte{byte('0' + n/100%10), byte('0' + n/10%10), byte('0' + n%10)})
}

func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		frames := rapid.SliceOfN(rapid.Custom(genFrame), 1, 8).Draw(t, "frames")
		var in strings.Builder
		for _, f := range frames {
			in.WriteString(encode(f))
		}
		got, err := readAll(&chunkReader{r: &onceReader{s: in.String()}, n: rapid.IntRange(1, 64).Draw(t, "chunk")}, testLimits)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("ended with %v", err)
		}
		if diff := cmp.Diff(frames, got); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	})
}

// TestPropertyStrictPrefix: every strict, non-empty prefix of a valid frame
// is a truncated frame.
func TestPropertyStrictPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := encode(genFrame(t))
		cut := rapid.IntRange(1, len(in)-1).Draw(t, "cut")
		_, err := readAll(&onceReader{s: in[:cut]}, testLimits)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("prefix %q: got %v, want io.ErrUnexpectedEOF", in[:cut], err)
		}
	})
}

// TestPropertyMutation: each of these single-token mutations of a valid
// frame makes it fail: the op name in lower case, a size one more or one
// less, a size padded to ten digits, a tab or doubled space between
// arguments (a doubled space anywhere; where the server's empty reply token
// may stand, a tripled one), the control line's CR removed.
func TestPropertyMutation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genFrame(t)
		in := encode(f)
		eol := strings.Index(in, "\r\n")
		line, rest := in[:eol], in[eol:]
		args := strings.Split(line, " ")
		kinds := []string{"lower", "bare LF"}
		if f.Op == OpMsg || f.Op == OpHMsg {
			kinds = append(kinds, "size+1", "size-1", "ten digits", "tab", "double space", "extra space")
		}
		kind := rapid.SampledFrom(kinds).Draw(t, "mutation")
		last := len(args) - 1
		switch kind {
		case "lower":
			args[0] = strings.ToLower(args[0])
		case "bare LF":
			rest = rest[1:]
		case "size+1":
			args[last] = itoaN(atoiN(args[last]) + 1)
		case "size-1":
			args[last] = itoaN(atoiN(args[last]) - 1)
		case "ten digits":
			args[last] = strings.Repeat("0", 10-len(args[last])) + args[last]
		case "tab":
			args[1] = "\t" + args[1]
		case "double space":
			args[1] = " " + args[1]
		case "extra space":
			j := rapid.IntRange(1, last).Draw(t, "before argument")
			pad := " "
			if j == 3 && f.Reply == "" {
				// Two spaces there are the server's empty reply token.
				pad = "  "
			}
			args[j] = pad + args[j]
		}
		mutated := strings.Join(args, " ") + rest
		_, err := readAll(&onceReader{s: mutated}, testLimits)
		if err == nil || errors.Is(err, io.EOF) {
			t.Fatalf("%s: %q accepted", kind, mutated)
		}
	})
}

func atoiN(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func itoaN(n int) string {
	if n == 0 {
		return "0"
	}
	if n < 0 {
		return "-" + itoaN(-n)
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestPropertyEmptyReply: a MSG or HMSG without a reply, written with the
// server's empty reply token (a second space after sid), parses to the same
// frame, wherever the input is split; a third space there fails.
func TestPropertyEmptyReply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genFrame(t)
		if f.Op != OpMsg && f.Op != OpHMsg {
			f = copied{Op: OpMsg, Subject: genToken(t, "subject"), SID: genToken(t, "sid")}
		}
		f.Reply = ""
		in := encode(f)
		sid := len(f.Op.String()) + 1 + len(f.Subject) + 1 + len(f.SID)
		empty := in[:sid] + " " + in[sid:]
		chunk := rapid.IntRange(1, 64).Draw(t, "chunk")
		got, err := readAll(&chunkReader{r: &onceReader{s: empty}, n: chunk}, testLimits)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("%q ended with %v", empty, err)
		}
		if diff := cmp.Diff([]copied{f}, got); diff != "" {
			t.Fatalf("%q (-want +got):\n%s", empty, diff)
		}
		triple := in[:sid] + "  " + in[sid:]
		if _, err := readAll(&onceReader{s: triple}, testLimits); !errors.Is(err, ErrMalformed) {
			t.Fatalf("%q: got %v, want ErrMalformed", triple, err)
		}
	})
}
