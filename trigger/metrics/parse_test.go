package metrics_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The strict reader of the text exposition format 0.0.4 the tests hold the
// output to. It accepts a subset of the format: every family has one HELP
// line followed by one TYPE line (counter or gauge) before its samples, the
// samples of a family are contiguous and share one label set, and no
// sample carries a timestamp. It refuses what a Prometheus parser refuses
// within that subset, and more.

// family is one metric family read back.
type family struct {
	Name, Help, Type string
	Samples          []sample
}

// sample is one sample line read back.
type sample struct {
	Name   string
	Labels []label
	Value  float64
}

// label is one name="value" pair, the value unescaped.
type label struct{ Name, Value string }

// get returns the value of label name and whether the sample has it.
func (s sample) get(name string) (string, bool) {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value, true
		}
	}
	return "", false
}

// parseExposition reads text, returning its families in order.
func parseExposition(text string) ([]family, error) {
	if text == "" {
		return nil, fmt.Errorf("empty exposition")
	}
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("no trailing newline")
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("not UTF-8")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var fams []family
	seen := map[string]bool{}
	series := map[string]bool{}
	var cur *family
	for i, line := range lines {
		n := i + 1
		switch {
		case line == "":
			return nil, fmt.Errorf("line %d: empty line", n)
		case strings.HasPrefix(line, "# HELP "):
			name, help, ok := strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
			if !ok || !validMetricName(name) {
				return nil, fmt.Errorf("line %d: bad HELP line", n)
			}
			if seen[name] {
				return nil, fmt.Errorf("line %d: second HELP for %s", n, name)
			}
			h, err := unescape(help, false)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			seen[name] = true
			fams = append(fams, family{Name: name, Help: h})
			cur = &fams[len(fams)-1]
		case strings.HasPrefix(line, "# TYPE "):
			name, typ, ok := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " ")
			if !ok || cur == nil || cur.Name != name || cur.Type != "" || len(cur.Samples) > 0 {
				return nil, fmt.Errorf("line %d: TYPE not right after its HELP", n)
			}
			switch typ {
			case "counter":
				if !strings.HasSuffix(name, "_total") {
					return nil, fmt.Errorf("line %d: counter %s without _total", n, name)
				}
			case "gauge":
				if strings.HasSuffix(name, "_total") {
					return nil, fmt.Errorf("line %d: gauge %s with _total", n, name)
				}
			default:
				return nil, fmt.Errorf("line %d: type %q", n, typ)
			}
			cur.Type = typ
		case strings.HasPrefix(line, "#"):
			return nil, fmt.Errorf("line %d: unexpected comment", n)
		default:
			s, key, err := parseSample(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			if cur == nil || cur.Type == "" || s.Name != cur.Name {
				return nil, fmt.Errorf("line %d: sample %s outside its family", n, s.Name)
			}
			if series[key] {
				return nil, fmt.Errorf("line %d: duplicate series", n)
			}
			series[key] = true
			if len(cur.Samples) > 0 && !sameLabelNames(cur.Samples[0].Labels, s.Labels) {
				return nil, fmt.Errorf("line %d: label set differs within %s", n, s.Name)
			}
			if cur.Type == "counter" && (s.Value < 0 || s.Value != math.Trunc(s.Value)) {
				return nil, fmt.Errorf("line %d: counter value %v", n, s.Value)
			}
			cur.Samples = append(cur.Samples, s)
		}
	}
	for _, f := range fams {
		if f.Type == "" {
			return nil, fmt.Errorf("family %s without TYPE", f.Name)
		}
	}
	return fams, nil
}

// parseSample reads name{l="v",...} value; key identifies its series.
func parseSample(line string) (sample, string, error) {
	var s sample
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return s, "", fmt.Errorf("no value")
	}
	s.Name = line[:end]
	if !validMetricName(s.Name) {
		return s, "", fmt.Errorf("bad metric name %q", s.Name)
	}
	rest := line[end:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for !strings.HasPrefix(rest, "}") {
			if len(s.Labels) > 0 {
				if !strings.HasPrefix(rest, ",") {
					return s, "", fmt.Errorf("no comma between labels")
				}
				rest = rest[1:]
			}
			name, after, ok := strings.Cut(rest, `="`)
			if !ok || !validLabelName(name) {
				return s, "", fmt.Errorf("bad label name %q", name)
			}
			if _, dup := s.get(name); dup {
				return s, "", fmt.Errorf("label %s twice", name)
			}
			raw, tail, err := quoted(after)
			if err != nil {
				return s, "", err
			}
			v, err := unescape(raw, true)
			if err != nil {
				return s, "", err
			}
			s.Labels = append(s.Labels, label{name, v})
			rest = tail
		}
		rest = rest[1:]
	}
	key := s.Name + "{" + line[len(s.Name):len(line)-len(rest)]
	if !strings.HasPrefix(rest, " ") {
		return s, "", fmt.Errorf("no space before the value")
	}
	value := rest[1:]
	if strings.Contains(value, " ") {
		return s, "", fmt.Errorf("timestamp or trailing text")
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return s, "", fmt.Errorf("bad value %q", value)
	}
	s.Value = v
	return s, key, nil
}

// quoted splits s after the closing quote of a label value, returning the
// raw (escaped) value.
func quoted(s string) (raw, rest string, err error) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[:i], s[i+1:], nil
		case '\n':
			return "", "", fmt.Errorf("raw newline in a label value")
		}
	}
	return "", "", fmt.Errorf("unterminated label value")
}

// unescape resolves \\ and \n, and \" in label values (quote); any other
// escape, a trailing backslash or (in label values) a bare quote fails.
func unescape(s string, quote bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 == len(s) {
				return "", fmt.Errorf("trailing backslash")
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case 'n':
				b.WriteByte('\n')
			case '"':
				if !quote {
					return "", fmt.Errorf(`\" outside a label value`)
				}
				b.WriteByte('"')
			default:
				return "", fmt.Errorf("bad escape \\%c", s[i])
			}
		case c == '"' && quote:
			return "", fmt.Errorf("bare quote in a label value")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// validMetricName reports [a-zA-Z_:][a-zA-Z0-9_:]*.
func validMetricName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// validLabelName reports [a-zA-Z_][a-zA-Z0-9_]* not starting with "__".
func validLabelName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != "" && !strings.HasPrefix(s, "__")
}

// sameLabelNames reports whether a and b name the same labels in order.
func sameLabelNames(a, b []label) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}
