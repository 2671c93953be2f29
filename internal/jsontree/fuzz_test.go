package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/jsonlex"
)

// fuzzDepth is the bound FuzzParse parses with: small, so that the fuzzer
// reaches it.
const fuzzDepth = 4

// FuzzParse checks that Parse reads exactly what jsonlex.Skip reads, and
// stops at the same fault at the same offset; that it accepts exactly the
// JSON documents encoding/json accepts, bar those nested past the bound
// and those with a string jsonlex's UTF-8 policy refuses; that an accepted
// tree holds what encoding/json decodes (the last of duplicate keys
// winning there); that spans nest and follow each other and locate every
// value's path; and that every error is a *ParseError with a printable
// path.
func FuzzParse(f *testing.F) {
	lexErr := map[error]error{jsonlex.ErrSyntax: ErrSyntax, jsonlex.ErrString: ErrSyntax, jsonlex.ErrUTF8: ErrUTF8, jsonlex.ErrDepth: ErrTooDeep}
	f.Fuzz(func(t *testing.T, b []byte) {
		root, err := Parse(b, fuzzDepth)
		skipEnd, skipErr := jsonlex.Skip(b, 0, 0, fuzzDepth)
		if err != nil {
			pe, ok := errors.AsType[*ParseError](err)
			if !ok {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if pe.Err != ErrSyntax && pe.Err != ErrUTF8 && pe.Err != ErrTooDeep && pe.Err != ErrTrailingData {
				t.Fatalf("ParseError wraps %v", pe.Err)
			}
			switch {
			case pe.Err == ErrTrailingData && skipErr == nil && jsonlex.Space(b, skipEnd) == int(pe.Offset) && pe.Offset < int64(len(b)):
			case pe.Err != ErrTrailingData && lexErr[skipErr] == pe.Err && int64(skipEnd) == pe.Offset:
			default:
				t.Fatalf("Parse stops with %v at %d, jsonlex.Skip with %v at %d", pe.Err, pe.Offset, skipErr, skipEnd)
			}
			for i := 0; i < len(pe.Path); i++ {
				if c := pe.Path[i]; c < 0x20 || c > 0x7e {
					t.Fatalf("path %q holds byte %#x", pe.Path, c)
				}
			}
			if json.Valid(b) && pe.Err != ErrTooDeep && pe.Err != ErrUTF8 {
				t.Fatalf("valid json refused: %v at %q", err, pe.Path)
			}
			return
		}
		if skipErr != nil || jsonlex.Space(b, skipEnd) != len(b) {
			t.Fatalf("accepted, but jsonlex.Skip stops with %v at %d", skipErr, skipEnd)
		}
		if !json.Valid(b) {
			t.Fatal("invalid json accepted")
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json refuses an accepted document: %v", err)
		}
		if diff := cmp.Diff(want, plain(root)); diff != "" {
			t.Fatalf("tree differs from encoding/json (-want +got):\n%s", diff)
		}
		if root.Start < 0 || root.End > int64(len(b)) {
			t.Fatalf("root span [%d, %d) outside the input of %d bytes", root.Start, root.End, len(b))
		}
		checkNode(t, root, root, "", 0)
		checkWalk(t, root)
	})
}

// checkWalk walks a fixed schema over root and checks that every member
// has exactly one outcome (unknown, duplicate, wrong type or set), that a
// required key is missing exactly when absent, and that every path is
// printable ASCII.
func checkWalk(t *testing.T, root *Node) {
	t.Helper()
	counts := map[error]int{}
	sets := 0
	w := Walker{Report: func(path string, err error) {
		counts[err]++
		for i := 0; i < len(path); i++ {
			if c := path[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("path %q holds byte %#x", path, c)
			}
		}
	}}
	set := func(string, *Node) { sets++ }
	want := []Want{{Name: "a", Kind: KindNumber, Set: set}, {Name: "b", Optional: true, Set: set}}
	got := w.Object("", root, want)
	if root.Kind != KindObject {
		if counts[ErrWrongType] != 1 || len(counts) != 1 || sets != 0 {
			t.Fatalf("walk of a %s: reports %v, %d sets", root.Kind, counts, sets)
		}
		return
	}
	var firstA *Node // the value of the first "a"
	for _, m := range root.Members {
		if m.Key == "a" && firstA == nil {
			firstA = m.Value
		}
	}
	hasA := firstA != nil
	if outcomes := counts[ErrUnknownKey] + counts[ErrDuplicateKey] + counts[ErrWrongType] + sets; outcomes != len(root.Members) {
		t.Fatalf("%d members, %d outcomes (%v, %d sets)", len(root.Members), outcomes, counts, sets)
	}
	if missing := counts[ErrMissingKey] == 1; missing == hasA || counts[ErrMissingKey] > 1 {
		t.Fatalf("key a present %v, missing reported %d times", hasA, counts[ErrMissingKey])
	}
	wantA := firstA
	if wantA != nil && wantA.Kind != KindNumber {
		wantA = nil
	}
	if got[0] != wantA {
		t.Fatalf("value of a %v, want the first a's %v", got[0], wantA)
	}
}

// plain converts a tree to what encoding/json decodes into an any.
func plain(n *Node) any {
	switch n.Kind {
	case KindBool:
		return n.Bool
	case KindNumber:
		return json.Number(n.Text)
	case KindString:
		return n.Text
	case KindArray:
		out := make([]any, 0, len(n.Elems))
		for _, e := range n.Elems {
			out = append(out, plain(e))
		}
		return out
	case KindObject:
		out := make(map[string]any, len(n.Members))
		for _, m := range n.Members {
			out[m.Key] = plain(m.Value)
		}
		return out
	default:
		return nil
	}
}

// checkNode checks the depth bound and the spans of n, at path and depth,
// and that root locates n's last byte at path.
func checkNode(t *testing.T, root, n *Node, path string, depth int) {
	t.Helper()
	if depth > fuzzDepth {
		t.Fatalf("%s at %q is at depth %d, bound %d", n.Kind, path, depth, fuzzDepth)
	}
	if n.Start >= n.End {
		t.Fatalf("empty span [%d, %d) at %q", n.Start, n.End, path)
	}
	if got := root.Locate(n.End - 1); got != path {
		t.Fatalf("Locate(%d) = %q, want %q", n.End-1, got, path)
	}
	prev := n.Start
	child := func(c *Node, p string) {
		if c.Start < prev || c.End > n.End {
			t.Fatalf("span [%d, %d) at %q is outside [%d, %d) or before its sibling", c.Start, c.End, p, prev, n.End)
		}
		prev = c.End
		checkNode(t, root, c, p, depth+1)
	}
	for i, e := range n.Elems {
		child(e, Index(path, i))
	}
	for _, m := range n.Members {
		child(m.Value, Key(path, m.Key))
	}
}
