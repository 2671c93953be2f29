package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/latent-systems/latent-nats/tools/deadletter"
	prov "github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// dlFixed is the revision that fixes the dead-letter cases' functions:
// the audit function succeeds for every string, and the handler takes
// the number its producer sends.
const dlFixed = "r3"

// dlCase is one event the runtime gives up on: its binding, payload, the
// reason the broker records and its delivery count then.
type dlCase struct {
	name       string
	function   string
	payload    []byte
	reason     string
	deliveries uint64
}

// dlCases: a declared failure, a poison event (a platform failure on every
// delivery, exhausted at max_deliver 3) and a payload of the wrong type
// (a number where the function's one parameter is a string), one binding
// each.
var dlCases = []dlCase{
	{"declared failure", trigAudit, trigPayload(argFail), "declared failure", 1},
	{"poison", trigAudit, trigPayload(argRetry), "exhausted", 3},
	{"malformed payload", trigFunction, []byte(`[7]`), "invalid arguments", 1},
}

// dlGiveUp provisions one tenant with opts (the capture streams
// included), runs the runtime until it has given up every case's event,
// and checks that each is found in the dead-letter capture with its
// reason, its stream sequence and delivery count. It returns the case,
// the running owner loop, the events' sequences and the operator's
// client.
func dlGiveUp(t *testing.T, tenant string, opts prov.Options) (*trigEnv, *trigRun, []uint64, *deadletter.Client) {
	t.Helper()
	e := trigStart(t, trigSpec{
		tenants: []string{tenant}, perTenant: []int{len(dlCases)}, provision: &opts,
		binding: func(_, j int, b *trigger.Binding) { b.Function = dlCases[j].function },
	})
	te := e.tenant(0)
	seqs := make([]uint64, len(dlCases))
	for j, c := range dlCases {
		seqs[j] = te.publishRaw(trigSubject(tenant, j), c.payload)
	}
	run := e.run(t)
	trigEventually(t, "every event given up", trigWait, func() bool {
		s := e.mon.Snapshot().Totals
		return s.Termed == 2 && s.Exhausted == 1
	})
	dl := dlClient(t, e)
	for j, c := range dlCases {
		b := e.cfg.Bindings[j]
		var page deadletter.Page
		trigEventually(t, c.name+" captured", trigWait, func() bool {
			var err error
			page, err = dl.List(t.Context(), deadletter.Query{Stream: b.Stream, Consumer: b.Consumer})
			return err == nil && len(page.Entries) > 0
		})
		want := []deadletter.Entry{{Kind: deadletter.KindTerminated, Stream: b.Stream, Consumer: b.Consumer,
			StreamSeq: seqs[j], ConsumerSeq: c.deliveries, Deliveries: c.deliveries, Reason: c.reason}}
		if diff := cmp.Diff(want, page.Entries, cmpopts.IgnoreFields(deadletter.Entry{}, "Time", "ID", "CaptureSeq")); diff != "" {
			t.Errorf("%s: give-ups (-want +got):\n%s", c.name, diff)
		}
	}
	return e, run, seqs, dl
}

// TestTriggerDeadLetters: events the runtime gave up on are found with
// their reason in the dead-letter capture that provision creates,
// inspected, replayed once the function is fixed (a new revision routed
// to), and run once more, successfully, as new messages delivered once.
// Under work-queue retention (provision's default) the terminated
// message is gone from its stream and the copy capture (provision
// -copies) shows and replays it; under limits retention the stream keeps
// it.
func TestTriggerDeadLetters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		retention prov.Retention
		copies    bool
		holder    deadletter.Holder
	}{
		{"workqueue with copies", prov.RetentionWorkQueue, true, deadletter.HolderCopy},
		{"limits", prov.RetentionLimits, false, deadletter.HolderStream},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := prov.DefaultOptions()
			opts.Stream.Retention, opts.Capture.Copies = tc.retention, tc.copies
			e, run, seqs, dl := dlGiveUp(t, fmt.Sprintf("dead%d", i), opts)

			// Inspected where it is held.
			msgs := make([]deadletter.Message, len(dlCases))
			for j, c := range dlCases {
				b := e.cfg.Bindings[j]
				m, err := dl.Message(t.Context(), b.Stream, seqs[j])
				if err != nil || m.Holder != tc.holder || m.Subject != b.FilterSubject || string(m.Data) != string(c.payload) {
					t.Fatalf("%s: Message %+v, %v; want the payload held by %v", c.name, m, err, tc.holder)
				}
				msgs[j] = m
			}

			// The fix: a revision whose functions succeed, routed to.
			fixed := make(chan refhost.Call, len(dlCases))
			for _, f := range []struct {
				name  string
				param refhost.Type
			}{{trigAudit, refhost.String()}, {trigFunction, refhost.U32()}} {
				err := e.ref.Register(refhost.Function{
					Service: trigService, Revision: dlFixed, Contract: trigContract, Name: f.name,
					Params: []refhost.Type{f.param}, Failures: []string{trigDeclared},
					Func: func(_ context.Context, c refhost.Call) error {
						fixed <- c
						return nil
					},
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.ref.SetRoute(trigService, "", dlFixed); err != nil {
				t.Fatal(err)
			}

			// Replayed: each a new message of the stream.
			replays := make(map[string]uint64)
			for j, c := range dlCases {
				b := e.cfg.Bindings[j]
				r, err := dl.Replay(t.Context(), msgs[j], deadletter.ReplayOptions{})
				if err != nil || r.Stream != b.Stream || r.Seq <= seqs[len(seqs)-1] || r.Duplicate {
					t.Fatalf("%s: Replay %+v, %v; want a new message of %s", c.name, r, err, b.Stream)
				}
				replays[b.ID] = r.Seq
			}

			// Run once more, successfully: one delivery each.
			got := make(map[string]uint64)
			for range dlCases {
				c := dlNext(t, fixed)
				if c.Delivered != 1 || c.Revision != dlFixed {
					t.Errorf("replayed activation %+v: want delivery 1 of revision %s", c, dlFixed)
				}
				got[c.Binding.ID] = c.StreamSeq
			}
			if diff := cmp.Diff(replays, got); diff != "" {
				t.Errorf("replayed activations (-want +got):\n%s", diff)
			}
			trigEventually(t, "the replays acknowledged", trigWait, func() bool { return e.mon.Snapshot().Totals.Acked == uint64(len(dlCases)) })
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			for j, c := range dlCases {
				b := e.cfg.Bindings[j]
				trigTerminated(t, e.tenant(0), j, replays[b.ID])
				// Nothing more was given up.
				if page, err := dl.List(t.Context(), deadletter.Query{Stream: b.Stream, Consumer: b.Consumer}); err != nil || len(page.Entries) != 1 {
					t.Errorf("%s: give-ups after the replay: %+v, %v; want the one", c.name, page.Entries, err)
				}
			}
			s := e.mon.Snapshot().Totals
			if s.Acked != 3 || s.Termed != 2 || s.Exhausted != 1 || s.Outcome(trigger.OutcomeSuccess) != 3 {
				t.Errorf("counts %+v", s)
			}
			e.trig.CloseIdle()
		})
	}
}

// TestTriggerDeadLettersWithoutCopies: with provision's defaults (work-
// queue retention, the dead-letter capture, no copies), what the new user
// had, each event given up is found with its reason, and its message is
// gone: the +TERM removed it from the work-queue stream, and nothing kept
// a copy.
func TestTriggerDeadLettersWithoutCopies(t *testing.T) {
	t.Parallel()
	e, run, seqs, dl := dlGiveUp(t, "deadwq", prov.DefaultOptions())
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for j, c := range dlCases {
		if m, err := dl.Message(t.Context(), e.cfg.Bindings[j].Stream, seqs[j]); !errors.Is(err, deadletter.ErrGone) {
			t.Errorf("%s: Message %+v, %v; want ErrGone", c.name, m, err)
		}
	}
	e.trig.CloseIdle()
}

// dlClient is the operator's dead-letter client: the tenant's
// administrator, never the runtime's user.
func dlClient(t *testing.T, e *trigEnv) *deadletter.Client {
	t.Helper()
	creds, err := e.b.Admin(e.tenant(0).id)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := prov.ConnConfig(e.cfg.Tenants[0].Destination, trigSecret(t, creds))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
	defer cancel()
	c, err := deadletter.Dial(ctx, cfg, pullTimeout)
	if err != nil {
		t.Fatalf("deadletter.Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// dlNext waits for the next activation of the fixed revision.
func dlNext(t *testing.T, calls <-chan refhost.Call) refhost.Call {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), trigWait)
	defer cancel()
	select {
	case c := <-calls:
		return c
	case <-ctx.Done():
		t.Fatalf("no activation of the fixed revision within %v", trigWait)
	}
	return refhost.Call{}
}
