package jsontree

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// report is one fault a Walker reported.
type report struct {
	Path string
	Err  string
}

// walkReports walks want over the object read from input at path "p" and
// returns the faults reported, the paths Set received and the values
// returned, each as its text or kind.
func walkReports(t *testing.T, input string, want []Want) (reports []report, sets, got []string) {
	t.Helper()
	root, err := Parse([]byte(input), 8)
	if err != nil {
		t.Fatalf("Parse(%s): %v", input, err)
	}
	w := Walker{Report: func(path string, err error) { reports = append(reports, report{path, err.Error()}) }}
	for i := range want {
		want[i].Set = func(path string, n *Node) { sets = append(sets, path+"="+n.Kind.String()) }
	}
	for _, n := range w.Object("p", root, want) {
		if n == nil {
			got = append(got, "-")
		} else {
			got = append(got, n.Kind.String())
		}
	}
	return reports, sets, got
}

func TestWalkerObject(t *testing.T) {
	schema := func() []Want {
		return []Want{
			{Name: "s", Kind: KindString},
			{Name: "n", Kind: KindNumber, Optional: true},
			{Name: "any"},
		}
	}
	unknown, dup, missing, wrong := ErrUnknownKey.Error(), ErrDuplicateKey.Error(), ErrMissingKey.Error(), ErrWrongType.Error()
	long := strings.Repeat("K", MaxPathKeyBytes+1)
	tests := []struct {
		name    string
		input   string
		reports []report
		sets    []string
		got     []string
	}{
		{"all present", `{"any":null,"n":1,"s":"x"}`, nil,
			[]string{"p.any=null", "p.n=number", "p.s=string"}, []string{"string", "number", "null"}},
		{"optional absent", `{"s":"x","any":[]}`, nil,
			[]string{"p.s=string", "p.any=array"}, []string{"string", "-", "array"}},
		{"required absent", `{"n":1}`, []report{{"p.s", missing}, {"p.any", missing}},
			[]string{"p.n=number"}, []string{"-", "number", "-"}},
		{"wrong type is not set", `{"s":1,"n":"1","any":{}}`, []report{{"p.s", wrong}, {"p.n", wrong}},
			[]string{"p.any=object"}, []string{"-", "-", "object"}},
		{"duplicate named key: the first counts", `{"s":"x","any":1,"s":2}`, []report{{"p.s", dup}},
			[]string{"p.s=string", "p.any=number"}, []string{"string", "-", "number"}},
		{"duplicate after a wrong type", `{"s":1,"s":"x","any":1}`, []report{{"p.s", wrong}, {"p.s", dup}},
			[]string{"p.any=number"}, []string{"-", "-", "number"}},
		{"unknown keys, quoted unless plain", `{"s":"x","any":1,"x":1,"A":1,"a.b":1,"a[0]":1,"\n\u0000":1,"é":1,"":1}`, []report{
			{"p.x", unknown}, {`p["A"]`, unknown}, {`p["a.b"]`, unknown}, {`p["a[0]"]`, unknown},
			{`p["\n\x00"]`, unknown}, {`p["\u00e9"]`, unknown}, {`p[""]`, unknown}},
			[]string{"p.s=string", "p.any=number"}, []string{"string", "-", "number"}},
		{"long unknown key cut", `{"s":"x","any":1,"` + long + `":1}`, []report{{`p["` + long[:MaxPathKeyBytes] + `"]`, unknown}},
			[]string{"p.s=string", "p.any=number"}, []string{"string", "-", "number"}},
		{"unknown key twice", `{"s":"x","any":1,"x.y":1,"x.y":2}`, []report{{`p["x.y"]`, unknown}, {`p["x.y"]`, dup}},
			[]string{"p.s=string", "p.any=number"}, []string{"string", "-", "number"}},
		{"not an object", `[1]`, []report{{"p", wrong}}, nil, []string{"-", "-", "-"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reports, sets, got := walkReports(t, tc.input, schema())
			if diff := cmp.Diff(tc.reports, reports); diff != "" {
				t.Errorf("reports (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.sets, sets); diff != "" {
				t.Errorf("Set calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.got, got); diff != "" {
				t.Errorf("values returned (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWalkerArray(t *testing.T) {
	var reports []report
	w := Walker{Report: func(path string, err error) { reports = append(reports, report{path, err.Error()}) }}
	root, err := Parse([]byte(`[[1,2],{}]`), 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(w.Array("", root.Elems[0])); got != 2 {
		t.Errorf("Array of [1,2] has %d elements, want 2", got)
	}
	if got := w.Array("x[1]", root.Elems[1]); got != nil {
		t.Errorf("Array of {} = %v, want nil", got)
	}
	if diff := cmp.Diff([]report{{"x[1]", ErrWrongType.Error()}}, reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}
