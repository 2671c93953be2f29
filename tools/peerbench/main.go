package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/latent-systems/latent-nats/internal/frametest"
	"github.com/latent-systems/latent-nats/parser"
)

// limits are the parser's caps in every case: 8 KiB lines and headers, the
// server's default 1 MiB payload.
var limits = parser.DefaultLimits(1 << 20)

// unknownSID addresses frames to no subscription (nats.go's first is "1").
const unknownSID = "2"

func main() {
	testing.Init()
	mode := flag.String("mode", "parser", `"parser": frame parsing; "pull": the pull loop against a pinned broker; "idle": the idle cost of 256 bindings; "cluster": the pull loop and the broker's CPU on an R3 cluster; "latency": publish to activation`)
	shapes := flag.String("shapes", ".", "parser: regexp selecting frametest shapes")
	count := flag.Int("count", 5, "parser: rounds; every case runs once per round, rounds interleaved, medians reported")
	po := pullFlags(flag.CommandLine)
	ido := idleFlags(flag.CommandLine)
	co := clusterFlags(flag.CommandLine)
	lo := latencyFlags(flag.CommandLine)
	flag.Parse()
	switch *mode {
	case "parser":
		os.Exit(runParser(*shapes, *count))
	case "pull":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := runPull(ctx, *po, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "idle":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := runIdle(ctx, *ido, po.server, po.thread, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "cluster":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := runCluster(ctx, *po, *co, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "latency":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := runLatency(ctx, *lo, po.server, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, `peerbench: -mode must be "parser", "pull", "idle", "cluster" or "latency"`)
		os.Exit(2)
	}
}

// runParser runs the parser cases and returns the exit code.
func runParser(shapes string, count int) int {
	re, err := regexp.Compile(shapes)
	if err != nil || count < 1 || count > 100 {
		fmt.Fprintln(os.Stderr, "peerbench: bad -shapes or -count (1..100)")
		return 2
	}
	fmt.Printf("goos: %s\ngoarch: %s\ncpus: %d\nnats.go: %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), nats.Version)
	var selected []frametest.Shape
	for _, s := range frametest.Shapes() {
		if re.MatchString(s.Name) {
			selected = append(selected, s)
		}
	}
	results := map[string][]testing.BenchmarkResult{}
	for range count {
		for _, s := range selected {
			for _, c := range cases {
				if c.headerOnly && s.Header == "" {
					continue
				}
				r := testing.Benchmark(func(b *testing.B) { c.fn(b, s) })
				fmt.Printf("Benchmark%s/%s\t%s\t%s\n", c.name, s.Name, r.String(), r.MemString())
				results[c.name+"/"+s.Name] = append(results[c.name+"/"+s.Name], r)
			}
		}
	}
	printRatios(selected, results)
	return 0
}

// cases are run in this order for every shape.
var cases = []struct {
	name       string
	fn         func(*testing.B, frametest.Shape)
	headerOnly bool
}{
	{"Latent/mem", benchLatentMem, false},
	{"Latent/tcp", benchLatentTCP, false},
	{"NatsGo/frame", benchNatsFrame, false},
	{"NatsGo/msg", benchNatsMsg, false},
	{"Latent/header", benchLatentHeader, true},
	{"NatsGo/header", benchNatsHeader, true},
}

func benchLatentMem(b *testing.B, s frametest.Shape) {
	p := parser.New(frametest.NewLoopReader(s.Frame), limits)
	b.SetBytes(int64(len(s.Frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLatentTCP(b *testing.B, s frametest.Shape) {
	b.SetBytes(int64(len(s.Frame)))
	b.ReportAllocs()
	srv, err := startServer(false)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", srv.addr(), ioTimeout)
	if err != nil {
		_ = srv.close()
		b.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(ioTimeout))
	p := parser.New(conn, limits)
	var wg sync.WaitGroup
	var streamErr error
	b.ResetTimer()
	wg.Go(func() { streamErr = srv.stream(s.Frame, b.N, nil) })
	var n int
	for n = 0; n < b.N; n++ {
		f, err := p.Next()
		if err != nil || f.Op != parser.OpMsg && f.Op != parser.OpHMsg {
			break
		}
	}
	b.StopTimer()
	_ = conn.Close()
	wg.Wait()
	serr := srv.close()
	if n != b.N || streamErr != nil {
		b.Fatalf("read %d of %d frames (stream: %v, server: %v)", n, b.N, streamErr, serr)
	}
}

// natsConn connects nats.go to a fake server and subscribes cb to the
// shape's subject; the server starts streaming once the SUB is flushed.
func natsConn(b *testing.B, s frametest.Shape, cb nats.MsgHandler) (*fakeServer, *nats.Conn, error) {
	srv, err := startServer(true)
	if err != nil {
		return nil, nil, err
	}
	var asyncErr atomic.Value
	nc, err := nats.Connect("nats://"+srv.addr(), nats.NoReconnect(), nats.Name("peerbench"),
		nats.Timeout(ioTimeout), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			asyncErr.Store(err)
		}))
	if err != nil {
		_ = srv.close()
		return nil, nil, err
	}
	sub, err := nc.Subscribe(s.Subject, cb)
	if err == nil {
		err = sub.SetPendingLimits(-1, -1)
	}
	if err == nil {
		err = nc.FlushTimeout(ioTimeout)
	}
	if err != nil {
		nc.Close()
		_ = srv.close()
		return nil, nil, err
	}
	return srv, nc, nil
}

func benchNatsFrame(b *testing.B, s frametest.Shape) {
	b.SetBytes(int64(len(s.Frame)))
	b.ReportAllocs()
	done := make(chan struct{})
	var once sync.Once
	srv, nc, err := natsConn(b, s, func(*nats.Msg) { once.Do(func() { close(done) }) })
	if err != nil {
		b.Fatal(err)
	}
	dropped := frametest.Frame(s.Subject, unknownSID, s.Reply, s.Header, s.Payload)
	sentinel := frametest.Frame(s.Subject, frametest.SID, "", "", nil)
	measure(b, srv, nc, dropped, sentinel, done)
}

func benchNatsMsg(b *testing.B, s frametest.Shape) {
	b.SetBytes(int64(len(s.Frame)))
	b.ReportAllocs()
	done := make(chan struct{})
	var count atomic.Int64
	target := int64(b.N)
	srv, nc, err := natsConn(b, s, func(m *nats.Msg) {
		if count.Add(1) == target {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	measure(b, srv, nc, s.Frame, nil, done)
}

// measure streams b.N frames (then tail) and waits for done.
func measure(b *testing.B, srv *fakeServer, nc *nats.Conn, frame, tail []byte, done chan struct{}) {
	var wg sync.WaitGroup
	var streamErr error
	b.ResetTimer()
	wg.Go(func() { streamErr = srv.stream(frame, b.N, tail) })
	var waitErr error
	select {
	case <-done:
	case <-time.After(ioTimeout):
		waitErr = errors.New("peerbench: nats.go did not deliver every message in time")
	}
	b.StopTimer()
	nc.Close()
	wg.Wait()
	serr := srv.close()
	if err := errors.Join(waitErr, streamErr, nc.LastError()); err != nil && !errors.Is(err, io.EOF) {
		b.Fatalf("%v (server: %v)", err, serr)
	}
}

func benchLatentHeader(b *testing.B, s frametest.Shape) {
	block := []byte(s.Header)
	key := firstKey(s.Header)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := parser.ParseHeader(block); err != nil {
			b.Fatal(err)
		}
		if _, ok := parser.HeaderValue(block, key); !ok && key != "" {
			b.Fatal("value missing")
		}
	}
}

func benchNatsHeader(b *testing.B, s frametest.Shape) {
	block := []byte(s.Header)
	key := firstKey(s.Header)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := nats.DecodeHeadersMsg(block)
		if err != nil {
			b.Fatal(err)
		}
		if h.Get(key) == "" && key != "" {
			b.Fatal("value missing")
		}
	}
}

// firstKey is the name of the block's first field, "" when it has none
// (then the benchmarks decode the block without a lookup).
func firstKey(block string) string {
	lines := strings.Split(block, "\r\n")
	if len(lines) < 2 {
		return ""
	}
	k, _, _ := strings.Cut(lines[1], ":")
	return k
}

// median is the result with the median ns/op (the lower middle one for an
// even count).
func median(rs []testing.BenchmarkResult) testing.BenchmarkResult {
	if len(rs) == 0 {
		return testing.BenchmarkResult{}
	}
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b testing.BenchmarkResult) int { return cmp.Compare(nsPerOp(a), nsPerOp(b)) })
	return sorted[(len(sorted)-1)/2]
}

func nsPerOp(r testing.BenchmarkResult) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}

func ratio(a, b testing.BenchmarkResult) string {
	if nsPerOp(b) == 0 || nsPerOp(a) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", nsPerOp(a)/nsPerOp(b))
}

func printRatios(shapes []frametest.Shape, results map[string][]testing.BenchmarkResult) {
	get := func(c string, s frametest.Shape) testing.BenchmarkResult { return median(results[c+"/"+s.Name]) }
	fmt.Println()
	fmt.Println("medians of the rounds above, ns per frame")
	fmt.Println()
	fmt.Println("| shape | Latent/mem | Latent/tcp | NatsGo/frame | NatsGo/msg (allocs) | frame: NatsGo/Latent tcp | msg: NatsGo/Latent tcp | msg: NatsGo/Latent mem |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range shapes {
		mem, tcp, fr, msg := get("Latent/mem", s), get("Latent/tcp", s), get("NatsGo/frame", s), get("NatsGo/msg", s)
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f (%d) | %s | %s | %s |\n", s.Name,
			nsPerOp(mem), nsPerOp(tcp), nsPerOp(fr), nsPerOp(msg), msg.AllocsPerOp(),
			ratio(fr, tcp), ratio(msg, tcp), ratio(msg, mem))
	}
	fmt.Println()
	fmt.Println("| shape | Latent/header (allocs) | NatsGo/header (allocs) | NatsGo/Latent |")
	fmt.Println("|---|---:|---:|---:|")
	for _, s := range shapes {
		if s.Header == "" {
			continue
		}
		h, ng := get("Latent/header", s), get("NatsGo/header", s)
		fmt.Printf("| %s | %.0f (%d) | %.0f (%d) | %s |\n", s.Name, nsPerOp(h), h.AllocsPerOp(),
			nsPerOp(ng), ng.AllocsPerOp(), ratio(ng, h))
	}
}
