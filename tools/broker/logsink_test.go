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
		"[1] [INF] Starting http monitor on 127.0.0.1:40124\n" +
		"[1] [INF] Listening for client connections on 127.0.0.1:40123\n" +
		"[1] [INF] Server is ready\n" +
		"[1] [INF] Listening for route connections on 127.0.0.1:40125\n"
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
			select {
			case <-s.routes:
			default:
				t.Fatal("route listener not signalled")
			}
			got := []netip.AddrPort{s.listenAddr(), s.monitorAddr(), s.routeAddr()}
			want := []netip.AddrPort{
				netip.MustParseAddrPort("127.0.0.1:40123"),
				netip.MustParseAddrPort("127.0.0.1:40124"),
				netip.MustParseAddrPort("127.0.0.1:40125"),
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
				t.Errorf("client, monitor and route addresses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(log, fwd.String()); diff != "" {
				t.Errorf("forwarded (-want +got):\n%s", diff)
			}
			// A second readiness or route line must not close a channel
			// twice, nor move an address.
			tc.write(s, "[1] [INF] Server is ready\n[1] [INF] Listening for route connections on 127.0.0.1:1\n")
			if s.routeAddr() != want[2] {
				t.Errorf("routeAddr() moved to %v", s.routeAddr())
			}
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
	if s.listenAddr().IsValid() || s.monitorAddr().IsValid() || s.routeAddr().IsValid() {
		t.Error("listener address without a listener line")
	}
	select {
	case <-s.routes:
		t.Fatal("route listener signalled without its line")
	default:
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
