package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// guestBuild is how the guest is built, as make demo does it and as the
// demo's message says when -guest is missing or unreadable.
const guestBuild = "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o PATH ./tools/demo/guest"

// readGuest reads the guest module at path: a regular file of 1 to
// wasmhost.MaxModuleBytes bytes, its size checked before it is read. Any
// failure is errGuest, with how to build the file.
func readGuest(path string) ([]byte, error) {
	bad := func(err error) error {
		return fmt.Errorf("%w: %w (make demo builds it; by hand: %s)", errGuest, err, guestBuild)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, bad(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, bad(err)
	}
	if !fi.Mode().IsRegular() || fi.Size() < 1 || fi.Size() > wasmhost.MaxModuleBytes {
		return nil, bad(fmt.Errorf("%s: %d bytes, want a regular file of 1 to %d", path, fi.Size(), wasmhost.MaxModuleBytes))
	}
	// Exactly the size checked: a file that shrank or grew meanwhile is
	// refused.
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, bad(fmt.Errorf("%s: changed while read: %w", path, err))
	}
	if n, _ := f.Read(make([]byte, 1)); n != 0 {
		return nil, bad(fmt.Errorf("%s: changed while read", path))
	}
	return b, nil
}

// activationCounts is what the guest's activations showed, as verify
// checks it.
type activationCounts struct {
	// Activations counts the reports of wasmhost (Config.OnActivation),
	// one per activation; Fresh those that ran in an instance of their
	// own (numbered, and no other activation reported that number).
	Activations, Fresh uint64
	// Counted counts the ok results, which carry the guest's count of
	// the calls its instance served, that one included; One those whose
	// count was 1.
	Counted, One uint64
}

// activationLog records every activation of the guest: a line each,
// written through the demo's output lock, and the counts verify checks.
// Its record method is the wasmhost Runtime's OnActivation, called on the
// reference host's goroutines.
type activationLog struct {
	w        io.Writer // the demo's *lockedWriter: one Write a line
	bindings []trigger.Binding

	mu     sync.Mutex
	seen   map[uint64]bool // instance numbers reported, at most one per activation
	counts activationCounts
}

func newActivationLog(w io.Writer, bindings []trigger.Binding) *activationLog {
	return &activationLog{w: w, bindings: bindings, seen: make(map[uint64]bool)}
}

// record counts one activation and writes its line.
func (l *activationLog) record(r *wasmhost.Report) {
	n, counted := callCount(r)
	l.mu.Lock()
	fresh := r.Instance != 0 && !l.seen[r.Instance]
	if r.Instance != 0 {
		l.seen[r.Instance] = true
	}
	l.counts.Activations++
	if fresh {
		l.counts.Fresh++
	}
	if counted {
		l.counts.Counted++
		if n == 1 {
			l.counts.One++
		}
	}
	l.mu.Unlock()
	md := 0
	if i := r.Binding.Index; i >= 0 && i < len(l.bindings) {
		md = l.bindings[i].MaxDeliver
	}
	fmt.Fprintln(l.w, activationLine(r, md, fresh))
}

// totals returns the counts so far.
func (l *activationLog) totals() activationCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts
}

// callCount returns the guest's call count that an ok result carries:
// place and charge return ok(count), cancel the count itself. Failures
// carry none.
func callCount(r *wasmhost.Report) (uint32, bool) {
	if r.Err != nil {
		return 0, false
	}
	switch v := r.Result.(type) {
	case uint32:
		return v, true
	case refhost.ResultValue:
		n, ok := v.Value.(uint32)
		return n, ok && !v.Err
	}
	return 0, false
}

// activationLine formats one activation's report: binding, stream
// sequence and delivery of max_deliver (maxDeliver 0 when unknown), the
// instance and whether it was fresh, the guest's call count when the
// result carries one, the times, and the result or the failure. It holds
// no argument or payload byte; a result is the guest's number or a case
// name its type declares.
func activationLine(r *wasmhost.Report, maxDeliver int, fresh bool) string {
	inst := "no instance"
	switch {
	case r.Instance != 0 && fresh:
		inst = "instance #" + strconv.FormatUint(r.Instance, 10) + " (fresh)"
	case r.Instance != 0:
		inst = "instance #" + strconv.FormatUint(r.Instance, 10) + " (REUSED)"
	}
	if n, ok := callCount(r); ok {
		inst += ", guest call count " + strconv.FormatUint(uint64(n), 10)
	}
	return fmt.Sprintf("  activation %s seq %d delivery %d/%d: %s, %s instantiate, %s call -> %s",
		r.Binding.ID, r.StreamSeq, r.Delivered, maxDeliver, inst, millis(r.Instantiate), millis(r.Call), resultText(r))
}

// millis formats d as milliseconds with one decimal.
func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

// resultText describes what the activation returned: the lifted result,
// or the platform failure's cause.
func resultText(r *wasmhost.Report) string {
	var ge *wasmhost.GuestError
	if errors.As(r.Err, &ge) {
		return "platform failure (" + ge.Cause.String() + ")"
	}
	if r.Err != nil && r.Result == nil {
		return "failed"
	}
	return valueText(r.Result)
}

// valueText formats a lifted value of the demo's result types: a
// result's ok or err case around its payload, a number, a case name.
func valueText(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case refhost.ResultValue:
		c := "ok"
		if v.Err {
			c = "err"
		}
		if v.Value == nil {
			return c
		}
		return c + "(" + valueText(v.Value) + ")"
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case string:
		return v
	}
	return fmt.Sprintf("%T", v)
}
