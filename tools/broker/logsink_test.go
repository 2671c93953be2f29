package broker

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLogRingBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []int // sizes, each filled with a distinct letter
		want   int
	}{
		{"at MaxLogBytes in one write", []int{MaxLogBytes}, MaxLogBytes},
		{"past MaxLogBytes in one write", []int{MaxLogBytes + 1}, MaxLogBytes},
		{"at MaxLogBytes in two writes", []int{MaxLogBytes - 1, 1}, MaxLogBytes},
		{"past MaxLogBytes in two writes", []int{MaxLogBytes, 1}, MaxLogBytes},
		{"small", []int{3, 4}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r logRing
			var all []byte
			for i, n := range tc.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				all = append(all, p...)
				r.write(p)
			}
			got := r.bytes()
			if len(got) != tc.want || !bytes.Equal(got, all[len(all)-tc.want:]) {
				t.Errorf("ring holds %d bytes, want the last %d written", len(got), tc.want)
			}
		})
	}
}

// writeByByte writes p one byte at a time, as a slow pipe might.
func writeByByte(s *logSink, p string) {
	for i := range len(p) {
		_, _ = s.Write([]byte{p[i]})
	}
}

func TestLogSinkMarkers(t *testing.T) {
	const log = "[1] [INF] Starting nats-server\n" +
		"[1] [INF] Listening for client connections on 127.0.0.1:40123\n" +
		"[1] [INF] Server is ready\n"
	for _, tc := range []struct {
		name  string
		write func(*logSink, string)
	}{
		{"whole", func(s *logSink, p string) { _, _ = s.Write([]byte(p)) }},
		{"one byte at a time", writeByByte},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fwd bytes.Buffer
			s := newLogSink(&logRing{}, &fwd)
			tc.write(s, log)
			select {
			case <-s.ready:
			default:
				t.Fatal("ready not signalled")
			}
			if got, want := s.listenAddr(), netip.MustParseAddrPort("127.0.0.1:40123"); got != want {
				t.Errorf("listenAddr() = %v, want %v", got, want)
			}
			if diff := cmp.Diff(log, fwd.String()); diff != "" {
				t.Errorf("forwarded (-want +got):\n%s", diff)
			}
			// A second readiness line must not close the channel twice.
			tc.write(s, "[1] [INF] Server is ready\n")
		})
	}
}

func TestLogSinkNotReadyWithoutMarker(t *testing.T) {
	s := newLogSink(&logRing{}, nil)
	writeByByte(s, "[1] [INF] Server is read\n[1] [INF] Server is ready") // no newline yet
	select {
	case <-s.ready:
		t.Fatal("ready signalled before a whole readiness line")
	default:
	}
	if s.listenAddr().IsValid() {
		t.Error("listener address without a listener line")
	}
}

func TestLogSinkLineCut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content int // bytes before the newline
		want    string
	}{
		{"at MaxLogLine", MaxLogLine - 1, strings.Repeat("x", MaxLogLine-1) + "\n"},
		{"past MaxLogLine", MaxLogLine, strings.Repeat("x", MaxLogLine-1) + "\n"},
		{"far past MaxLogLine", 3 * MaxLogLine, strings.Repeat("x", MaxLogLine-1) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fwd bytes.Buffer
			ring := &logRing{}
			s := newLogSink(ring, &fwd)
			line := strings.Repeat("x", tc.content) + "\n"
			_, _ = s.Write([]byte(line + "next\n"))
			if diff := cmp.Diff(tc.want+"next\n", fwd.String()); diff != "" {
				t.Errorf("forwarded (-want +got):\n%s", diff)
			}
			if got := string(ring.bytes()); got != line+"next\n" {
				t.Errorf("the ring must keep the whole line (%d bytes), has %d", len(line)+5, len(got))
			}
		})
	}
}
