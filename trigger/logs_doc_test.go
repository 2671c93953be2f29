package trigger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docKey is an attribute key as the table writes it.
var docKey = regexp.MustCompile("`([a-z_]+)`")

// TestLogTableDocumented: the Logs table of docs/OPERATIONS.md, which an
// operator's log pipeline is written against, lists every message the
// runtime logs and no other, and its attribute column names every key the
// runtime writes (logical_id and epoch in the header) and no other. The
// constants are read from logs.go, so one added there fails here until the
// table has it.
func TestLogTableDocumented(t *testing.T) {
	msgs, keys := logConstants(t)
	doc, err := os.ReadFile("../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	docKeys := []string{keyLogicalID, keyEpoch}
	in := false
	for line := range strings.Lines(string(doc)) {
		switch {
		case strings.HasPrefix(line, "| message | level | attributes (beside `logical_id`, `epoch`) |"):
			in = true
			continue
		case !in || strings.HasPrefix(line, "|---"):
			continue
		case !strings.HasPrefix(line, "| `"):
			in = false
			continue
		}
		cells := strings.Split(line, "|")
		rows = append(rows, strings.Trim(cells[1], " `"))
		for _, m := range docKey.FindAllStringSubmatch(cells[3], -1) {
			if !slices.Contains(docKeys, m[1]) {
				docKeys = append(docKeys, m[1])
			}
		}
	}
	slices.Sort(rows)
	slices.Sort(msgs)
	if diff := cmp.Diff(msgs, rows); diff != "" {
		t.Errorf("messages in logs.go (-) against the OPERATIONS.md table (+):\n%s", diff)
	}
	slices.Sort(docKeys)
	slices.Sort(keys)
	if diff := cmp.Diff(keys, docKeys); diff != "" {
		t.Errorf("attribute keys in logs.go (-) against the OPERATIONS.md table (+):\n%s", diff)
	}
}

// logConstants returns the values of logs.go's msg... and key...
// constants.
func logConstants(t *testing.T) (msgs, keys []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "logs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case strings.HasPrefix(n.Name, "msg"):
					msgs = append(msgs, v)
				case strings.HasPrefix(n.Name, "key"):
					keys = append(keys, v)
				}
			}
		}
	}
	if len(msgs) == 0 || len(keys) == 0 {
		t.Fatalf("logs.go: %d messages, %d keys found, want both", len(msgs), len(keys))
	}
	return msgs, keys
}
