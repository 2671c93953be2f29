package conformance_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// provision creates a stream capturing the binding's subject and the
// consumer the profile requires.
func provision(adm *admin, bind jspull.Binding) {
	adm.t.Helper()
	adm.createStream(bind.Stream, bind.FilterSubject)
	adm.createConsumer(bind.Stream, bind.Consumer, profileConfig(bind))
}

// TestPull runs the three operations against the pinned broker with users
// holding exactly the derived permissions. Subtests use their own streams
// and connections and run in parallel.
func TestPull(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{pullTenant}})

	t.Run("full cycle", func(t *testing.T) {
		t.Parallel()
		adm := newAdmin(t, b)
		bind := testBinding("CYCLE", "worker", "cycle.in")
		provision(adm, bind)
		seq := adm.publish(bind.FilterSubject, []byte("hello"))
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})

		pend, err := p.inspect()
		if err != nil || pend.NumPending != 1 || pend.Empty() {
			t.Fatalf("Inspect() = %+v, %v; want one pending", pend, err)
		}
		res := p.mustMessage()
		want := jspull.DeliveryID{StreamSeq: seq, ConsumerSeq: 1, Delivered: 1}
		if diff := cmp.Diff(want, res.Delivery.ID); diff != "" || string(res.Payload) != "hello" {
			t.Fatalf("delivery (-want +got):\n%s payload %q", diff, res.Payload)
		}
		if res.Delivery.AckSubject.Form != acksubject.FormClassic {
			t.Errorf("ack subject form %v, want classic", res.Delivery.AckSubject.Form)
		}
		rec := p.mustAck(&res.Delivery, jspull.Ack())
		if rec.Delivery != want || rec.Action != pull.ActionAck {
			t.Errorf("Receipt = %+v", rec)
		}
		pend, err = p.inspect()
		if err != nil || !pend.Empty() {
			t.Fatalf("Inspect() after the ack = %+v, %v; want empty", pend, err)
		}
		// An already-acked delivery acked again: the broker still answers.
		p.mustAck(&res.Delivery, jspull.Ack())
		// Nothing pending: the broker holds the pull until its expiry.
		start := time.Now()
		res, err = p.next()
		if err != nil || res.Kind != jspull.KindRequestTimeout {
			t.Fatalf("Next() on an empty consumer = %v, %v; want request timeout", res.Kind, err)
		}
		if took := time.Since(start); took < jspull.RequestExpires || took > nextBound {
			t.Errorf("empty pull took %v, want between %v and %v", took, jspull.RequestExpires, nextBound)
		}
	})

	t.Run("nak with delay redelivers with the count raised", func(t *testing.T) {
		t.Parallel()
		adm := newAdmin(t, b)
		bind := testBinding("NAK", "worker", "nak.in")
		provision(adm, bind)
		adm.publish(bind.FilterSubject, []byte("again"))
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})

		first := p.mustMessage()
		const delay = 300 * time.Millisecond
		sent := time.Now()
		p.mustAck(&first.Delivery, jspull.Nak(delay))
		pend, err := p.inspect()
		if err != nil || pend.Empty() || pend.NumAckPending != 1 {
			t.Fatalf("Inspect() during the delay = %+v, %v; want one awaiting redelivery", pend, err)
		}
		second := p.nextMessage(delay + pullRedeliverySlack)
		if took := time.Since(sent); took < delay {
			t.Errorf("redelivered after %v, before the %v delay", took, delay)
		}
		if second.Delivery.ID.StreamSeq != first.Delivery.ID.StreamSeq || second.Delivery.ID.Delivered != 2 {
			t.Errorf("redelivery %+v, want stream seq %d delivered 2", second.Delivery.ID, first.Delivery.ID.StreamSeq)
		}
		p.mustAck(&second.Delivery, jspull.Ack())
	})

	t.Run("term never redelivers", func(t *testing.T) {
		t.Parallel()
		adm := newAdmin(t, b)
		bind := testBinding("TERM", "worker", "term.in")
		provision(adm, bind)
		adm.publish(bind.FilterSubject, []byte("poison"))
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})

		res := p.mustMessage()
		p.mustAck(&res.Delivery, jspull.Term("declared failure"))
		pend, err := p.inspect()
		if err != nil || !pend.Empty() {
			t.Fatalf("Inspect() after term = %+v, %v; want empty", pend, err)
		}
		// Pull for longer than ack_wait: every pull comes back empty.
		until := time.Now().Add(bind.AckWait + 300*time.Millisecond)
		for i := 0; i < 100 && time.Now().Before(until); i++ {
			res, err := p.next()
			if err != nil || res.Kind != jspull.KindRequestTimeout {
				t.Fatalf("Next() %d after term = %v, %v; want request timeout", i, res.Kind, err)
			}
		}
	})

	t.Run("ack after ack wait is verified late", func(t *testing.T) {
		t.Parallel()
		adm := newAdmin(t, b)
		bind := testBinding("LATE", "worker", "late.in")
		provision(adm, bind)
		adm.publish(bind.FilterSubject, []byte("slow"))
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})

		// Kept across the later pulls, so cloned: a Delivery is valid
		// until its Consumer's next Next.
		first := p.mustMessage()
		first.Delivery = first.Delivery.Clone()
		// The broker redelivers once ack_wait has passed.
		second := p.nextMessage(bind.AckWait + pullRedeliverySlack)
		if second.Delivery.ID.Delivered != 2 {
			t.Fatalf("redelivery %+v, want delivered 2", second.Delivery.ID)
		}
		rec, err := p.ack(&first.Delivery, jspull.Ack())
		if err != nil || rec.Outcome != pull.AckVerifiedLate || rec.Late <= 0 || rec.Delivery != first.Delivery.ID {
			t.Fatalf("late Ack() = %+v, %v; want verified late for the first delivery", rec, err)
		}
		p.mustAck(&second.Delivery, jspull.Ack())
		if pend, err := p.inspect(); err != nil || !pend.Empty() {
			t.Fatalf("Inspect() = %+v, %v; want empty", pend, err)
		}
	})

	t.Run("an exhausted message leaves num_redelivered on an empty consumer", func(t *testing.T) {
		t.Parallel()
		adm := newAdmin(t, b)
		bind := testBinding("EXHAUST", "worker", "exhaust.in")
		bind.MaxDeliver = 2
		provision(adm, bind)
		adm.publish(bind.FilterSubject, []byte("never acked"))
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
		p.mustMessage()
		if again := p.nextMessage(bind.AckWait + pullRedeliverySlack); again.Delivery.ID.Delivered != 2 {
			t.Fatalf("redelivery %+v, want delivered 2", again.Delivery.ID)
		}
		// Once the last delivery's ack_wait passes, a pull makes the broker
		// drop the message from pending; nothing more is delivered.
		var pend jspull.Pending
		until := time.Now().Add(bind.AckWait + pullRedeliverySlack)
		for i := 0; i < 100 && time.Now().Before(until); i++ {
			res, err := p.next()
			if err != nil || res.Kind != jspull.KindRequestTimeout {
				t.Fatalf("Next() = %v, %v; want request timeout", res.Kind, err)
			}
			if pend, err = p.inspect(); err != nil {
				t.Fatalf("Inspect() = %v", err)
			}
			if pend.NumAckPending == 0 {
				break
			}
		}
		if pend.NumAckPending != 0 || pend.NumRedelivered == 0 || !pend.Empty() {
			t.Fatalf("Pending = %+v; want nothing awaiting ack, num_redelivered kept, Empty", pend)
		}
	})

	t.Run("each profile mismatch", func(t *testing.T) {
		t.Parallel()
		testProfileMismatches(t, b)
	})

	t.Run("stream and consumer not found", func(t *testing.T) {
		t.Parallel()
		adm := newAdmin(t, b)
		adm.createStream("FOUND", "found.in")
		noConsumer := testBinding("FOUND", "missing", "found.in")
		noStream := testBinding("MISSING", "worker", "missing.in")
		perms, err := jspull.DerivePermissions(conn.DefaultInboxPrefix, noConsumer, noStream)
		if err != nil {
			t.Fatal(err)
		}
		p := newPuller(t, b, noConsumer, perms, jspull.Options{})
		if _, err := p.inspect(); !errors.Is(err, jspull.ErrConsumerNotFound) {
			t.Errorf("Inspect() of a missing consumer = %v, want ErrConsumerNotFound", err)
		}
		if res, err := p.next(); err != nil || res.Kind != jspull.KindNoResponders {
			t.Errorf("Next() on a missing consumer = %v, %v; want no responders", res.Kind, err)
		}
		q, err := jspull.NewConsumer(noStream, pullOptions(jspull.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := p.ctx()
		defer cancel()
		if _, err := q.Inspect(ctx, p.c); !errors.Is(err, jspull.ErrStreamNotFound) {
			t.Errorf("Inspect() of a missing stream = %v, want ErrStreamNotFound", err)
		}
	})

	t.Run("statuses", func(t *testing.T) {
		t.Parallel()
		testStatuses(t, b)
	})

	t.Run("permissions", func(t *testing.T) {
		t.Parallel()
		testPermissions(t, b)
	})

	t.Run("lost receipts", func(t *testing.T) {
		t.Parallel()
		testLostReceipts(t, b)
	})
}

func testProfileMismatches(t *testing.T, b *broker.Broker) {
	adm := newAdmin(t, b)
	const stream, subject = "PROFILE", "profile.in"
	adm.createStream(stream, subject, "profile.other")
	// with returns the profile's configuration for consumer, edited.
	with := func(consumer string, edit func(map[string]any)) map[string]any {
		cfg := profileConfig(testBinding(stream, consumer, subject))
		edit(cfg)
		return cfg
	}
	keep := func(map[string]any) {}
	tests := []struct {
		consumer string
		cfg      map[string]any
		want     []jspull.Mismatch
	}{
		{"matching", with("matching", keep), nil},
		{"filter", with("filter", func(c map[string]any) { c["filter_subject"] = "profile.other" }),
			[]jspull.Mismatch{{Field: "filter_subject", Want: subject, Got: "profile.other"}}},
		{"wildcard", with("wildcard", func(c map[string]any) { c["filter_subject"] = "profile.*" }),
			[]jspull.Mismatch{{Field: "filter_subject", Want: subject, Got: "profile.*"}}},
		{"filters", with("filters", func(c map[string]any) {
			delete(c, "filter_subject")
			c["filter_subjects"] = []string{subject, "profile.other"}
		}), []jspull.Mismatch{{Field: "filter_subjects", Want: "one filter subject", Got: "2 entries"}}},
		{"ackall", with("ackall", func(c map[string]any) { c["ack_policy"] = "all" }),
			[]jspull.Mismatch{{Field: "ack_policy", Want: "explicit", Got: "all"}}},
		{"replay", with("replay", func(c map[string]any) { c["replay_policy"] = "original" }),
			[]jspull.Mismatch{{Field: "replay_policy", Want: "instant", Got: "original"}}},
		{"delivernew", with("delivernew", func(c map[string]any) { c["deliver_policy"] = "new" }),
			[]jspull.Mismatch{{Field: "deliver_policy", Want: "all", Got: "new"}}},
		{"waiting", with("waiting", func(c map[string]any) { c["max_waiting"] = 2 }),
			[]jspull.Mismatch{{Field: "max_waiting", Want: "1", Got: "2"}}},
		{"ackpending", with("ackpending", func(c map[string]any) { c["max_ack_pending"] = 2 }),
			[]jspull.Mismatch{{Field: "max_ack_pending", Want: "1", Got: "2"}}},
		{"batch", with("batch", func(c map[string]any) { c["max_batch"] = 2 }),
			[]jspull.Mismatch{{Field: "max_batch", Want: "1", Got: "2"}}},
		{"nobatch", with("nobatch", func(c map[string]any) { delete(c, "max_batch") }),
			[]jspull.Mismatch{{Field: "max_batch", Want: "1", Got: "absent"}}},
		{"expires", with("expires", func(c map[string]any) { c["max_expires"] = int64(time.Second) }),
			[]jspull.Mismatch{{Field: "max_expires", Want: "100000000", Got: "1000000000"}}},
		{"maxbytes", with("maxbytes", func(c map[string]any) { c["max_bytes"] = 9473 }),
			[]jspull.Mismatch{{Field: "max_bytes", Want: "9472", Got: "9473"}}},
		{"ackwait", with("ackwait", func(c map[string]any) { c["ack_wait"] = int64(2 * time.Second) }),
			[]jspull.Mismatch{{Field: "ack_wait", Want: "1100000000", Got: "2000000000"}}},
		{"maxdeliver", with("maxdeliver", func(c map[string]any) { c["max_deliver"] = 5 }),
			[]jspull.Mismatch{{Field: "max_deliver", Want: "3", Got: "5"}}},
		{"headers", with("headers", func(c map[string]any) { c["headers_only"] = true }),
			[]jspull.Mismatch{{Field: "headers_only", Want: "false", Got: "true"}}},
		{"backoff", with("backoff", func(c map[string]any) { c["backoff"] = []int64{int64(jspull.MinAckWait), int64(2 * time.Second)} }),
			[]jspull.Mismatch{{Field: "backoff", Want: "absent", Got: "2 entries"}}},
		{"priority", with("priority", func(c map[string]any) {
			c["priority_policy"] = "overflow"
			c["priority_groups"] = []string{"g"}
		}), []jspull.Mismatch{{Field: "priority_policy", Want: "none", Got: "overflow"}}},
		{"ephemeral", with("ephemeral", func(c map[string]any) {
			delete(c, "durable_name")
			c["name"] = "ephemeral"
		}), []jspull.Mismatch{{Field: "durable_name", Want: "ephemeral", Got: "absent"}}},
		{"push", map[string]any{
			"durable_name": "push", "deliver_subject": "push.here", "deliver_policy": "all", "ack_policy": "explicit",
			"ack_wait": int64(jspull.MinAckWait), "max_deliver": 3, "filter_subject": subject,
			"replay_policy": "instant", "max_ack_pending": 1, "flow_control": true, "idle_heartbeat": int64(time.Second),
		}, []jspull.Mismatch{
			{Field: "max_waiting", Want: "1", Got: "absent"},
			{Field: "max_batch", Want: "1", Got: "absent"},
			{Field: "max_expires", Want: "100000000", Got: "absent"},
			{Field: "max_bytes", Want: "9472", Got: "absent"},
			{Field: "deliver_subject", Want: "absent", Got: "push.here"},
			{Field: "flow_control", Want: "false", Got: "true"},
		}},
	}
	// One user and connection per consumer: a JWT granting every consumer
	// of the table would push CONNECT past the broker's 4 KiB control line.
	for _, tt := range tests {
		t.Run(tt.consumer, func(t *testing.T) {
			bind := testBinding(stream, tt.consumer, subject)
			adm.createConsumer(stream, tt.consumer, tt.cfg)
			p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
			_, err := p.inspect()
			if diff := cmp.Diff(tt.want, mismatches(err)); diff != "" {
				t.Errorf("Inspect() = %v; mismatches (-want +got):\n%s", err, diff)
			}
			if (err == nil) != (tt.want == nil) {
				t.Errorf("Inspect() error = %v", err)
			}
		})
	}
}

// mismatches returns the Mismatches of a *jspull.ProfileError, nil for any
// other error.
func mismatches(err error) []jspull.Mismatch {
	var pe *jspull.ProfileError
	if !errors.As(err, &pe) {
		return nil
	}
	return pe.Mismatches
}

func testStatuses(t *testing.T, b *broker.Broker) {
	t.Run("max waiting", func(t *testing.T) {
		adm := newAdmin(t, b)
		holder := newAdmin(t, b)
		bind := testBinding("WAITING", "worker", "waiting.in")
		provision(adm, bind)
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})

		// Another client holds the one waiting slot with a pull that has no
		// expiry, until a message arrives for it.
		held := make(chan error, 1)
		done := make(chan struct{})
		t.Cleanup(func() { <-done }) // before the connections close
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
			defer cancel()
			_, err := holder.c.Exchange(ctx, time.Now().Add(pullTimeout), conn.Call{Subject: []byte(bind.NextSubject()), Payload: []byte(`{"batch":1}`), Delivery: true})
			held <- err
		}()
		adm.waitFor("the other pull waits", pullTimeout, func() bool {
			_, _, waiting := adm.consumerInfo(bind.Stream, bind.Consumer)
			return waiting == 1
		})
		res, err := p.next()
		adm.publish(bind.FilterSubject, []byte("release"))
		if herr := <-held; herr != nil {
			t.Errorf("holding pull: %v", herr)
		}
		if err != nil || res.Kind != jspull.KindMaxWaiting {
			t.Fatalf("Next() = %v, %v; want exceeded max waiting", res.Kind, err)
		}
	})

	t.Run("message size exceeds max bytes", func(t *testing.T) {
		adm := newAdmin(t, b)
		bind := testBinding("OVERSIZE", "worker", "oversize.in")
		bind.PayloadCeiling = 16
		provision(adm, bind)
		adm.publish(bind.FilterSubject, make([]byte, bind.MaxBytes()))
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
		if _, err := p.inspect(); err != nil {
			t.Fatalf("Inspect() = %v", err)
		}
		res, err := p.next()
		if err != nil || res.Kind != jspull.KindMessageTooLarge || res.Kind.Class() != jspull.ClassOversize {
			t.Fatalf("Next() = %v, %v; want message size exceeds max bytes", res.Kind, err)
		}
	})

	t.Run("consumer deleted between inspect and next", func(t *testing.T) {
		adm := newAdmin(t, b)
		bind := testBinding("DELETED", "worker", "deleted.in")
		provision(adm, bind)
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
		if _, err := p.inspect(); err != nil {
			t.Fatalf("Inspect() = %v", err)
		}
		adm.deleteConsumer(bind.Stream, bind.Consumer)
		res, err := p.next()
		if err != nil || res.Kind != jspull.KindNoResponders || res.Kind.Class() != jspull.ClassGone {
			t.Fatalf("Next() = %v, %v; want no responders", res.Kind, err)
		}
	})

	t.Run("consumer deleted while the pull waits", func(t *testing.T) {
		adm := newAdmin(t, b)
		bind := testBinding("DELWAIT", "worker", "delwait.in")
		adm.createStream(bind.Stream, bind.FilterSubject)
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
		// The pull waits at most its 100 ms expiry: if the deletion misses
		// that window, or the pull ends before the admin sees it waiting (a
		// loaded machine delays the admin's round trips), the pull times
		// out and the attempt is repeated, a bounded number of times.
		type outcome struct {
			res jspull.Result
			err error
		}
		const attempts = 20
		for attempt := 0; attempt < attempts; attempt++ {
			adm.createConsumer(bind.Stream, bind.Consumer, profileConfig(bind))
			ended := make(chan outcome, 1)
			exited := make(chan struct{})
			t.Cleanup(func() { <-exited }) // before the connection closes
			go func() {
				defer close(exited)
				res, err := p.next()
				ended <- outcome{res, err}
			}()
			var early *outcome
			adm.waitFor("the pull waits or ends", pullTimeout, func() bool {
				select {
				case o := <-ended:
					early = &o
					return true
				default:
				}
				_, _, waiting := adm.consumerInfo(bind.Stream, bind.Consumer)
				return waiting == 1
			})
			adm.deleteConsumer(bind.Stream, bind.Consumer)
			o := early
			if o == nil {
				got := <-ended
				o = &got
			}
			if o.err != nil {
				t.Fatalf("Next() = %v", o.err)
			}
			if o.res.Kind == jspull.KindConsumerDeleted && early == nil {
				return
			}
			if o.res.Kind != jspull.KindRequestTimeout {
				t.Fatalf("Next() = %v, want consumer deleted (or, when the deletion came too late, request timeout)", o.res.Kind)
			}
		}
		t.Fatalf("the deletion never landed within the pull's expiry in %d attempts", attempts)
	})

	t.Run("held at max ack pending", func(t *testing.T) {
		adm := newAdmin(t, b)
		bind := testBinding("HELD", "worker", "held.in")
		provision(adm, bind)
		adm.publish(bind.FilterSubject, []byte("one"))
		adm.publish(bind.FilterSubject, []byte("two"))
		p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
		// Kept across the held pull, so cloned: a Delivery is valid until
		// its Consumer's next Next.
		first := p.mustMessage()
		first.Delivery = first.Delivery.Clone()
		pend, err := p.inspect()
		if err != nil || pend.NumPending != 1 || pend.NumAckPending != 1 {
			t.Fatalf("Inspect() = %+v, %v; want one pending, one awaiting ack", pend, err)
		}
		start := time.Now()
		res, err := p.next()
		if took := time.Since(start); err != nil || res.Kind != jspull.KindRequestTimeout || took > nextBound {
			t.Fatalf("Next() at max ack pending = %v, %v after %v; want request timeout within %v", res.Kind, err, took, nextBound)
		}
		p.mustAck(&first.Delivery, jspull.Ack())
		second := p.mustMessage()
		p.mustAck(&second.Delivery, jspull.Ack())
	})

	t.Run("consumer refuses the request", func(t *testing.T) {
		adm := newAdmin(t, b)
		base := testBinding("REFUSE", "x", "refuse.in")
		adm.createStream(base.Stream, base.FilterSubject)
		tests := []struct {
			consumer string
			edit     func(map[string]any)
			want     jspull.Kind
		}{
			{"expires", func(c map[string]any) { c["max_expires"] = int64(50 * time.Millisecond) }, jspull.KindMaxRequestExpires},
			{"maxbytes", func(c map[string]any) { c["max_bytes"] = 1000 }, jspull.KindMaxRequestMaxBytes},
			{"push", func(c map[string]any) {
				for _, k := range []string{"max_waiting", "max_batch", "max_expires", "max_bytes"} {
					delete(c, k)
				}
				c["deliver_subject"] = "push.refuse"
			}, jspull.KindPushBased},
		}
		var binds []jspull.Binding
		for _, tt := range tests {
			bind := base
			bind.Consumer = tt.consumer
			binds = append(binds, bind)
		}
		perms, err := jspull.DerivePermissions(conn.DefaultInboxPrefix, binds...)
		if err != nil {
			t.Fatal(err)
		}
		c := pullDial(t, b, pullUser(t, b, perms))
		for i, tt := range tests {
			t.Run(tt.want.String(), func(t *testing.T) {
				cfg := profileConfig(binds[i])
				tt.edit(cfg)
				adm.createConsumer(base.Stream, tt.consumer, cfg)
				q, err := jspull.NewConsumer(binds[i], pullOptions(jspull.Options{}))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
				defer cancel()
				if _, err := q.Inspect(ctx, c); !errors.Is(err, jspull.ErrProfileMismatch) {
					t.Errorf("Inspect() = %v, want a profile mismatch", err)
				}
				res, err := q.Next(ctx, c)
				if err != nil || res.Kind != tt.want || res.Kind.Class() != jspull.ClassMisconfigured {
					t.Fatalf("Next() = %v, %v; want %v", res.Kind, err, tt.want)
				}
			})
		}
	})
}

// without returns perms minus one subject of one direction.
func without(perms jspull.Permissions, subject string) jspull.Permissions {
	drop := func(l []string) []string {
		return slices.DeleteFunc(slices.Clone(l), func(s string) bool { return s == subject })
	}
	return jspull.Permissions{Publish: drop(perms.Publish), Subscribe: drop(perms.Subscribe)}
}

func isPermission(err error) bool {
	var se *conn.ServerError
	return errors.As(err, &se) && se.Kind == conn.KindPermission
}

func testPermissions(t *testing.T, b *broker.Broker) {
	adm := newAdmin(t, b)
	bind := testBinding("PERMS", "worker", "perms.in")
	provision(adm, bind)
	perms := derive(t, bind)

	t.Run("without consumer info", func(t *testing.T) {
		p := newPuller(t, b, bind, without(perms, bind.InfoSubject()), jspull.Options{})
		start := time.Now()
		_, err := p.inspect()
		if took := time.Since(start); !isPermission(err) || took > pullPrompt {
			t.Fatalf("Inspect() = %v after %v; want a permission error within %v", err, took, pullPrompt)
		}
	})

	t.Run("without next", func(t *testing.T) {
		p := newPuller(t, b, bind, without(perms, bind.NextSubject()), jspull.Options{})
		if _, err := p.inspect(); err != nil {
			t.Fatalf("Inspect() = %v", err)
		}
		start := time.Now()
		_, err := p.next()
		if took := time.Since(start); !isPermission(err) || took > nextBound {
			t.Fatalf("Next() = %v after %v; want a permission error within %v", err, took, nextBound)
		}
	})

	t.Run("without the classic ack subject", func(t *testing.T) {
		adm.publish(bind.FilterSubject, []byte("unacked"))
		p := newPuller(t, b, bind, without(perms, "$JS.ACK."+bind.Stream+"."+bind.Consumer+".>"), jspull.Options{})
		res := p.mustMessage()
		start := time.Now()
		rec, err := p.ack(&res.Delivery, jspull.Ack())
		if took := time.Since(start); rec.Outcome != pull.AckUncertain || !errors.Is(err, jspull.ErrNotVerified) || !isPermission(err) || took > pullPrompt {
			t.Fatalf("Ack() = %+v, %v after %v; want uncertain with a permission error within %v", rec, err, took, pullPrompt)
		}
		// The broker redelivers after ack_wait; a fully granted user acks it.
		q := newPuller(t, b, bind, perms, jspull.Options{})
		again := q.nextMessage(bind.AckWait + pullRedeliverySlack)
		if again.Delivery.ID.Delivered != 2 {
			t.Errorf("redelivery %+v, want delivered 2", again.Delivery.ID)
		}
		q.mustAck(&again.Delivery, jspull.Ack())
	})

	t.Run("without the v2 ack subject classic acks still work", func(t *testing.T) {
		adm.publish(bind.FilterSubject, []byte("classic"))
		p := newPuller(t, b, bind, without(perms, "$JS.ACK.*.*."+bind.Stream+"."+bind.Consumer+".>"), jspull.Options{})
		res := p.nextMessage(pullTimeout)
		p.mustAck(&res.Delivery, jspull.Ack())
	})

	t.Run("with another inbox granted", func(t *testing.T) {
		// The broker refuses the inbox subscription; whether the
		// connection notices at once or when no reply can arrive, it is a
		// typed error within the operation's bound, never a hang.
		// An empty allow list would leave subscriptions unrestricted, so the
		// grant names another inbox prefix instead.
		wrongInbox := jspull.Permissions{Publish: perms.Publish, Subscribe: []string{"_OTHER.>"}}
		c, err := pullDialErr(t, b, pullUser(t, b, wrongInbox))
		if err != nil {
			if !isPermission(err) {
				t.Fatalf("Dial() = %v; want a permission error", err)
			}
			return
		}
		q, err := jspull.NewConsumer(bind, pullOptions(jspull.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
		defer cancel()
		_, err = q.Inspect(ctx, c)
		if took := time.Since(start); !isPermission(err) && !errors.Is(err, context.DeadlineExceeded) || took > pullOpTimeout+pullPrompt {
			t.Fatalf("Inspect() = %v after %v; want a permission error or the deadline within %v", err, took, pullOpTimeout)
		}
	})

	t.Run("a consumer named differently from its grant cannot ack", func(t *testing.T) {
		adm.publish(bind.FilterSubject, []byte("misgranted"))
		other := bind
		other.Consumer = "other"
		mixed := jspull.Permissions{
			Publish: []string{
				bind.InfoSubject(), bind.NextSubject(),
				"$JS.ACK." + other.Stream + "." + other.Consumer + ".>",
				"$JS.ACK.*.*." + other.Stream + "." + other.Consumer + ".>",
			},
			Subscribe: perms.Subscribe,
		}
		p := newPuller(t, b, bind, mixed, jspull.Options{})
		res := p.nextMessage(pullTimeout)
		rec, err := p.ack(&res.Delivery, jspull.Ack())
		if rec.Outcome != pull.AckUncertain || !isPermission(err) {
			t.Fatalf("Ack() = %+v, %v; want uncertain with a permission error", rec, err)
		}
	})
}

// TestPullV2AckSubjects runs the cycle on a broker emitting v2 ack subjects
// (js_ack_fc_v2), acked under the derived permissions.
func TestPullV2AckSubjects(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{pullTenant}, Extra: "feature_flags { js_ack_fc_v2: true }"})
	adm := newAdmin(t, b)
	bind := testBinding("V2", "worker", "v2.in")
	provision(adm, bind)
	perms := derive(t, bind)
	account, err := b.AccountKey(pullTenant)
	if err != nil {
		t.Fatal(err)
	}

	adm.publish(bind.FilterSubject, []byte("v2"))
	p := newPuller(t, b, bind, perms, jspull.Options{})
	res := p.mustMessage()
	if res.Delivery.AckSubject.Form != acksubject.FormV2 || res.Delivery.AckSubject.AccountHash != acksubject.AccountHash(account) {
		t.Fatalf("ack subject %q: form %v, want v2 with the account's hash", res.Delivery.Subject(), res.Delivery.AckSubject.Form)
	}
	p.mustAck(&res.Delivery, jspull.Ack())

	adm.publish(bind.FilterSubject, []byte("v2 without grant"))
	q := newPuller(t, b, bind, without(perms, "$JS.ACK.*.*."+bind.Stream+"."+bind.Consumer+".>"), jspull.Options{})
	res = q.nextMessage(pullTimeout)
	rec, err := q.ack(&res.Delivery, jspull.Ack())
	if rec.Outcome != pull.AckUncertain || !isPermission(err) {
		t.Fatalf("Ack() without the v2 grant = %+v, %v; want uncertain with a permission error", rec, err)
	}
}

// testLostReceipts loses an acknowledgement on the way to the broker and a
// receipt on the way back, through a proxy: both are Uncertain, never
// retried; the broker redelivers the one it never saw and keeps the one it
// committed.
func testLostReceipts(t *testing.T, b *broker.Broker) {
	adm := newAdmin(t, b)
	bind := testBinding("LOST", "worker", "lost.in")
	provision(adm, bind)
	perms := derive(t, bind)
	opts := pullOptions(jspull.Options{OpTimeout: 300 * time.Millisecond})

	lose := func(t *testing.T, cut func(*cutProxy)) (jspull.Result, jspull.Receipt, error) {
		adm.publish(bind.FilterSubject, []byte("lost"))
		proxy := startCutProxy(t, b.Addr())
		q, err := jspull.NewConsumer(bind, opts)
		if err != nil {
			t.Fatal(err)
		}
		p := &puller{t: t, c: dialVia(t, b, proxy.addr(), pullUser(t, b, perms)), p: q}
		res := p.nextMessage(pullTimeout)
		cut(proxy)
		rec, err := p.ack(&res.Delivery, jspull.Ack())
		return res, rec, err
	}

	t.Run("command never reached the broker", func(t *testing.T) {
		res, rec, err := lose(t, func(p *cutProxy) { p.dropUp.Store(true) })
		if rec.Outcome != pull.AckUncertain || !errors.Is(err, jspull.ErrNotVerified) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Ack() = %+v, %v; want uncertain after the deadline", rec, err)
		}
		direct := newPuller(t, b, bind, perms, jspull.Options{})
		again := direct.nextMessage(bind.AckWait + pullRedeliverySlack)
		if again.Delivery.ID.StreamSeq != res.Delivery.ID.StreamSeq || again.Delivery.ID.Delivered != 2 {
			t.Fatalf("after ack_wait got %+v, want stream seq %d redelivered", again.Delivery.ID, res.Delivery.ID.StreamSeq)
		}
		direct.mustAck(&again.Delivery, jspull.Ack())
	})

	t.Run("broker committed, receipt lost", func(t *testing.T) {
		_, rec, err := lose(t, func(p *cutProxy) { p.dropDown.Store(true) })
		if rec.Outcome != pull.AckUncertain || !errors.Is(err, jspull.ErrNotVerified) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Ack() = %+v, %v; want uncertain after the deadline", rec, err)
		}
		adm.waitFor("the broker records the ack", pullTimeout, func() bool {
			_, ackPending, _ := adm.consumerInfo(bind.Stream, bind.Consumer)
			return ackPending == 0
		})
		direct := newPuller(t, b, bind, perms, jspull.Options{})
		if pend, err := direct.inspect(); err != nil || !pend.Empty() {
			t.Fatalf("Inspect() = %+v, %v; want empty: the committed ack is kept", pend, err)
		}
	})
}
