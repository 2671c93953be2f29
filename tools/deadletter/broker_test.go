package deadletter

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/provision"
)

// createCaptures creates the account's capture streams as provision does.
func createCaptures(t testing.TB, c *Client, copies bool) {
	t.Helper()
	o := provision.DefaultOptions().Capture
	api(t, c, "$JS.API.STREAM.CREATE."+provision.DeadLetterStream, provision.DesiredDeadLetterStream(o, 1))
	if copies {
		api(t, c, "$JS.API.STREAM.CREATE."+provision.CopyStream, provision.DesiredCopyStream(o, 1))
	}
}

// createStream creates stream capturing subject with a retention, its
// copies republished when copies is set, and consumer C: max_deliver 1,
// ack wait testAckWait.
func createStream(t testing.TB, c *Client, stream, subject, retention string, copies bool) {
	t.Helper()
	cfg := map[string]any{"name": stream, "subjects": []string{subject}, "retention": retention, "storage": "file"}
	if copies {
		cfg["republish"] = provision.RePublishOf(stream)
	}
	api(t, c, "$JS.API.STREAM.CREATE."+stream, cfg)
	api(t, c, "$JS.API.CONSUMER.CREATE."+stream+".C", map[string]any{"stream_name": stream, "action": "create",
		"config": map[string]any{"durable_name": "C", "ack_policy": "explicit", "ack_wait": int64(testAckWait), "max_deliver": 1}})
}

// listAll reads a consumer's give-ups until there are want of them.
func listAll(t testing.TB, c *Client, stream, consumer string, want int) []Entry {
	t.Helper()
	var page Page
	eventually(t, fmt.Sprintf("%d give-ups of %s/%s", want, stream, consumer), func() bool {
		var err error
		if page, err = c.List(t.Context(), Query{Stream: stream, Consumer: consumer}); err != nil {
			t.Fatalf("List: %v", err)
		}
		return len(page.Entries) >= want
	})
	if len(page.Skipped) != 0 || page.More {
		t.Errorf("page %+v: nothing skipped, no more, wanted", page)
	}
	return page.Entries
}

// TestGiveUpsPinned pins what nats-server 2.14.6 records of a give-up and
// what each retention keeps of the message: the advisories' subjects and
// JSON fields, exactly; a +TERM (with the runtime's reason) is a
// MSG_TERMINATED advisory and removes the message from a work-queue
// stream and from an interest stream with one consumer, as an
// acknowledgement would, while a limits stream keeps it; a delivery left
// unsettled at max_deliver is a MAX_DELIVERIES advisory and stays in the
// stream whatever its retention, also after a restart (when the broker
// checks a stream's interest state) and after a later message is
// acknowledged and the broker restarted again.
func TestGiveUpsPinned(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	c := adminClient(t, b, "acme")
	createCaptures(t, c, false)
	tests := []struct {
		retention  string
		termedHeld bool
	}{
		{"workqueue", false},
		{"interest", false},
		{"limits", true},
	}
	unsettledSeqs := make([]uint64, len(tests))
	originals := make([][]Entry, len(tests))
	for i, tc := range tests {
		t.Run(tc.retention, func(t *testing.T) {
			stream := "S_" + tc.retention
			createStream(t, c, stream, tc.retention+".in", tc.retention, false)
			termed := publish(t, c, tc.retention+".in", nil, []byte(`["fail"]`))
			unsettled := publish(t, c, tc.retention+".in", nil, []byte(`["lost"]`))
			unsettledSeqs[i] = unsettled
			d := pullOne(t, c, stream, "C")
			settle(t, c, d, "+TERM declared failure")
			if d2 := pullOne(t, c, stream, "C"); d2.streamSeq != unsettled {
				t.Fatalf("second delivery %+v, want seq %d", d2, unsettled)
			}
			before := time.Now().UTC()
			entries := listAll(t, c, stream, "C", 2)

			// The advisories as stored, field by field.
			wantFields := map[Kind][]string{
				KindTerminated:    {"consumer", "consumer_seq", "deliveries", "id", "reason", "stream", "stream_seq", "timestamp", "type"},
				KindMaxDeliveries: {"consumer", "deliveries", "id", "stream", "stream_seq", "timestamp", "type"},
			}
			wantSubjects := map[Kind]string{
				KindTerminated:    "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + stream + ".C",
				KindMaxDeliveries: "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + stream + ".C",
			}
			for _, e := range entries {
				m, found, err := c.msgGet(t.Context(), provision.DeadLetterStream, msgGetRequest{Seq: e.CaptureSeq}, ErrNoCapture)
				if err != nil || !found {
					t.Fatalf("capture seq %d: %v", e.CaptureSeq, err)
				}
				var fields map[string]any
				if err := json.Unmarshal(m.Data, &fields); err != nil {
					t.Fatal(err)
				}
				got := make([]string, 0, len(fields))
				for k := range fields {
					got = append(got, k)
				}
				slices.Sort(got)
				if diff := cmp.Diff(wantFields[e.Kind], got); diff != "" || m.Subject != wantSubjects[e.Kind] {
					t.Errorf("%v advisory on %s, fields (-want +got):\n%s", e.Kind, m.Subject, diff)
				}
				if e.Time.IsZero() || e.Time.After(time.Now().UTC()) || e.ID == "" {
					t.Errorf("%v advisory time %v, id %q", e.Kind, e.Time, e.ID)
				}
			}
			want := []Entry{
				{Kind: KindTerminated, Stream: stream, Consumer: "C", StreamSeq: termed, ConsumerSeq: 1, Deliveries: 1, Reason: "declared failure"},
				{Kind: KindMaxDeliveries, Stream: stream, Consumer: "C", StreamSeq: unsettled, Deliveries: 1},
			}
			if diff := cmp.Diff(want, entries, cmpopts.IgnoreFields(Entry{}, "Time", "ID", "CaptureSeq")); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			originals[i] = entries
			if !entries[1].Time.After(entries[0].Time) || entries[1].Time.Before(before.Add(-time.Second)) {
				t.Errorf("give-up times %v then %v", entries[0].Time, entries[1].Time)
			}

			// What the stream still holds.
			m, err := c.Message(t.Context(), stream, termed)
			switch {
			case tc.termedHeld && (err != nil || m.Holder != HolderStream || string(m.Data) != `["fail"]`):
				t.Errorf("terminated message: %+v, %v; want it held by its stream", m, err)
			case !tc.termedHeld && !errors.Is(err, ErrGone):
				t.Errorf("terminated message: %+v, %v; want ErrGone", m, err)
			}
			if m, err := c.Message(t.Context(), stream, unsettled); err != nil || m.Holder != HolderStream || string(m.Data) != `["lost"]` {
				t.Errorf("message given up by the broker: %+v, %v; want it held by its stream", m, err)
			}
		})
	}

	// After a restart (the broker checks a stream's interest state when
	// it takes the stream's lead), and after a later message is
	// acknowledged and the broker restarted again.
	//
	// A restart may repeat the MAX_DELIVERIES advisory: the consumer's
	// state file is written asynchronously (consumerFileStore.flushLoop,
	// at most every 100 ms), so a restart right after the give-up can
	// read the delivery as still pending, and the restarted server, which
	// sends the advisory once per process (consumer.go, getNextMsg),
	// gives it up again. The capture keeps the two records; any record
	// after them names the same delivery, at most one per restart.
	restarts := 0
	held := func(stage string) {
		t.Helper()
		if err := b.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
		restarts++
		c = adminClient(t, b, "acme")
		for i, tc := range tests {
			_, found, err := c.msgGet(t.Context(), "S_"+tc.retention, msgGetRequest{Seq: unsettledSeqs[i]}, ErrStreamNotFound)
			if err != nil || !found {
				t.Errorf("%s, %s: the message the broker gave up on: held %v, %v; want held", tc.retention, stage, found, err)
			}
			// The capture kept its records.
			page, err := c.List(t.Context(), Query{Stream: "S_" + tc.retention, Consumer: "C"})
			if err != nil || len(page.Entries) < 2 || len(page.Entries) > 2+restarts || !slices.Equal(page.Entries[:2], originals[i]) {
				t.Errorf("%s, %s: give-ups %+v, %v; want the two %+v, then at most %d repeats", tc.retention, stage, page.Entries, err, originals[i], restarts)
				continue
			}
			for _, e := range page.Entries[2:] {
				if e.Kind != KindMaxDeliveries || e.StreamSeq != unsettledSeqs[i] || e.Consumer != "C" || e.Deliveries != 1 {
					t.Errorf("%s, %s: record after the two: %+v; want a repeat of the MAX_DELIVERIES give-up of seq %d", tc.retention, stage, e, unsettledSeqs[i])
				}
			}
		}
	}
	held("after a restart")
	for _, tc := range tests {
		publish(t, c, tc.retention+".in", nil, []byte(`["ok"]`))
		settle(t, c, pullOne(t, c, "S_"+tc.retention, "C"), "+ACK")
	}
	held("after a later acknowledgement and a restart")
}

// TestCopies: a work-queue stream created with copies republishes every
// message it stores; once the stream removed them (acknowledged or
// terminated), Message finds each one's copy among the copies of two
// streams published in turn, with the original's subject, time, header
// fields and payload; a sequence never stored is gone.
func TestCopies(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	c := adminClient(t, b, "acme")
	createCaptures(t, c, true)
	createStream(t, c, "WQ", "acme.wq", "workqueue", true)
	createStream(t, c, "OTHER", "acme.other", "workqueue", true)
	const n = 37
	header := []byte("NATS/1.0\r\nX-Trace: abc\r\nNats-Msg-Id: m\r\n\r\n")
	stored := make(map[uint64]time.Time)
	for i := range n {
		seq := publish(t, c, "acme.wq", slices.Concat(header[:len(header)-len("m\r\n\r\n")], fmt.Appendf(nil, "m%d\r\n\r\n", i)), fmt.Appendf(nil, `["%d"]`, i))
		publish(t, c, "acme.other", nil, []byte("other"))
		stored[seq] = time.Now()
	}
	for i := range n {
		d := pullOne(t, c, "WQ", "C")
		cmd := "+ACK"
		if i%3 == 0 {
			cmd = "+TERM declared failure"
		}
		settle(t, c, d, cmd)
	}
	eventually(t, "the work-queue stream emptied", func() bool {
		_, found, err := c.msgGet(t.Context(), "WQ", msgGetRequest{NextFor: ">"}, ErrStreamNotFound)
		return err == nil && !found
	})
	for seq := uint64(1); seq <= n; seq++ {
		m, err := c.Message(t.Context(), "WQ", seq)
		if err != nil || m.Holder != HolderCopy || m.Seq != seq || m.Subject != "acme.wq" || string(m.Data) != fmt.Sprintf(`["%d"]`, seq-1) {
			t.Fatalf("Message(%d) = %+v, %v; want its copy", seq, m, err)
		}
		if m.Time.IsZero() || m.Time.After(stored[seq]) {
			t.Errorf("Message(%d) time %v, stored by %v", seq, m.Time, stored[seq])
		}
		fields, err := m.Fields()
		if diff := cmp.Diff([]Field{{"X-Trace", "abc"}}, fields); diff != "" || err != nil {
			t.Errorf("Message(%d) fields (-want +got):\n%s%v", seq, diff, err)
		}
	}
	for _, seq := range []uint64{n + 1, 1 << 40} {
		if m, err := c.Message(t.Context(), "WQ", seq); !errors.Is(err, ErrGone) {
			t.Errorf("Message(%d) = %+v, %v; want ErrGone", seq, m, err)
		}
	}
	if _, err := c.Message(t.Context(), "WQ", 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Message(0): %v, want ErrInvalidArgument", err)
	}
	if _, err := c.Message(t.Context(), "ABSENT", 1); !errors.Is(err, ErrStreamNotFound) {
		t.Errorf("Message of an absent stream: %v, want ErrStreamNotFound", err)
	}
}

// TestReplay: a replay is a new message of the stream, delivered with a
// delivery count of 1, with the producer's header fields, none of the
// broker's, and the replay's Nats-Msg-Id; a second replay is a duplicate;
// a header value this client cannot send is refused before anything is
// sent, and the payload alone can be replayed instead.
func TestReplay(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	c := adminClient(t, b, "acme")
	createCaptures(t, c, true)
	createStream(t, c, "R", "acme.r", "workqueue", true)
	seq := publish(t, c, "acme.r", []byte("NATS/1.0\r\nX-A: 1\r\nNats-Msg-Id: orig\r\nX-B: two\r\n\r\n"), []byte(`["fail"]`))
	settle(t, c, pullOne(t, c, "R", "C"), "+TERM declared failure")
	m, err := c.Message(t.Context(), "R", seq)
	if err != nil || m.Holder != HolderCopy {
		t.Fatalf("Message: %+v, %v", m, err)
	}

	r, err := c.Replay(t.Context(), m, ReplayOptions{})
	if err != nil || r.Stream != "R" || r.Seq <= seq || r.Duplicate {
		t.Fatalf("Replay: %+v, %v; want a new sequence of R", r, err)
	}
	if d := pullOne(t, c, "R", "C"); d.streamSeq != r.Seq || d.delivered != 1 {
		t.Errorf("replay delivered as %+v, want seq %d delivery 1", d, r.Seq)
	}
	stored, found, err := c.msgGet(t.Context(), "R", msgGetRequest{Seq: r.Seq}, ErrStreamNotFound)
	want := "NATS/1.0\r\nX-A: 1\r\nX-B: two\r\nNats-Msg-Id: latent-replay.R.1\r\n\r\n"
	if err != nil || !found || string(stored.Header) != want || string(stored.Data) != `["fail"]` || stored.Subject != "acme.r" {
		t.Errorf("replayed message %q %q on %s, %v; want header %q", stored.Header, stored.Data, stored.Subject, err, want)
	}
	if again, err := c.Replay(t.Context(), m, ReplayOptions{}); err != nil || again != (Replayed{Stream: "R", Seq: r.Seq, Duplicate: true}) {
		t.Errorf("second Replay: %+v, %v; want a duplicate of seq %d", again, err, r.Seq)
	}

	// This project's client cannot publish a value with a space, which
	// others can: such a message, as the broker would return it.
	spaced := Message{Stream: "R", Seq: 1 << 20, Subject: "acme.r", Header: []byte("NATS/1.0\r\nX-C:  a b \r\n\r\n"), Data: []byte(`["ok"]`)}
	if fields, err := spaced.Fields(); err != nil || !cmp.Equal(fields, []Field{{"X-C", "a b"}}) {
		t.Errorf("Fields: %+v, %v", fields, err)
	}
	m = spaced
	if _, err := c.Replay(t.Context(), m, ReplayOptions{}); !errors.Is(err, ErrHeaderNotReplayable) {
		t.Errorf("Replay of a value with a space: %v, want ErrHeaderNotReplayable", err)
	}
	r, err = c.Replay(t.Context(), m, ReplayOptions{NoHeaders: true})
	if err != nil || r.Seq <= seq || r.Duplicate {
		t.Errorf("Replay without headers: %+v, %v", r, err)
	}
	m.Subject = "acme.nostream"
	if _, err := c.Replay(t.Context(), m, ReplayOptions{NoHeaders: true}); !errors.Is(err, ErrNoStream) {
		t.Errorf("Replay to a subject no stream captures: %v, want ErrNoStream", err)
	}
}

// TestListBounds: a page ends at its limit with the cursor to continue;
// the limit is refused past MaxLimit; an account without the capture
// stream says so.
func TestListBounds(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme", "bare"}})
	c := adminClient(t, b, "acme")
	createCaptures(t, c, false)
	createStream(t, c, "L", "acme.l", "limits", false)
	for range 3 {
		publish(t, c, "acme.l", nil, []byte("x"))
		settle(t, c, pullOne(t, c, "L", "C"), "+TERM invalid arguments")
	}
	all := listAll(t, c, "L", "C", 3)
	var got []Entry
	after := uint64(0)
	for range 4 {
		page, err := c.List(t.Context(), Query{Stream: "L", Consumer: "C", After: after, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Entries...)
		if !page.More {
			break
		}
		after = page.Next
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("pages of one (-want +got):\n%s", diff)
	}
	if page, err := c.List(t.Context(), Query{Stream: "L", Consumer: "C", Limit: MaxLimit}); err != nil || len(page.Entries) != 3 || page.More {
		t.Errorf("limit MaxLimit: %+v, %v", page, err)
	}
	if _, err := c.List(t.Context(), Query{Stream: "L", Consumer: "C", Limit: MaxLimit + 1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("limit past MaxLimit: %v, want ErrInvalidArgument", err)
	}
	if page, err := c.List(t.Context(), Query{Stream: "L", Consumer: "other"}); err != nil || len(page.Entries) != 0 {
		t.Errorf("another consumer: %+v, %v; want nothing", page, err)
	}
	if _, err := adminClient(t, b, "bare").List(t.Context(), Query{Stream: "L", Consumer: "C"}); !errors.Is(err, ErrNoCapture) {
		t.Errorf("List without a capture stream: %v, want ErrNoCapture", err)
	}
}
