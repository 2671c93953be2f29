package conformance_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// ackNakDelay is the NAK delay of the redelivery case: short, since the
// test polls until the redelivery instead of sleeping.
const ackNakDelay = 100 * time.Millisecond

// ackRedeliveryBound bounds the wait for a redelivery after a NAK delay or
// an ack_wait expiry, beyond the delay itself.
const ackRedeliveryBound = pullRedeliverySlack

// ackClockSkew bounds how far the broker's store timestamp may sit outside
// the interval in which this process published the message. Both run on
// the same host and clock; the bound is generous on purpose.
const ackClockSkew = 2 * time.Second

// TestAckSubjects checks the ack subjects the pinned broker emits, in the
// classic form (the default) and in the v2 form (js_ack_fc_v2), against
// acksubject: each parses, formats back to the same bytes, and its fields
// agree with what was published, with the consumer info and with the
// stored message. One case per form uses names holding '@', '%', '~', '$'
// and a non-ASCII letter, all valid asset names ('%' also tests the
// broker's escaping of its own reply template).
func TestAckSubjects(t *testing.T) {
	modes := []struct {
		name  string
		extra string
		form  acksubject.Form
	}{
		{"classic", "", acksubject.FormClassic},
		{"v2", "feature_flags { js_ack_fc_v2: true }", acksubject.FormV2},
	}
	names := []struct {
		name, stream, consumer, subject string
	}{
		{"plain names", "ACKS", "worker", "acks.in"},
		{"names with @ % ~ $ and non-ASCII", "A%d@b~c$é", "w%s%%~@x$ü", "acks.odd"},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			b := brokertest.Start(t, broker.Options{Tenants: []string{pullTenant}, Extra: m.extra})
			account, err := b.AccountKey(pullTenant)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				t.Run(n.name, func(t *testing.T) {
					t.Parallel()
					ackCycle(t, b, m.form, account, testBinding(n.stream, n.consumer, n.subject))
				})
			}
		})
	}
}

// ackWant is what one delivery's ack subject must say.
type ackWant struct {
	streamSeq, consumerSeq, delivered, pending uint64
	// published brackets the publication of the message on this host's
	// wall clock.
	published [2]time.Time
}

// ackPublished is one stored message: its sequence and the interval in
// which it was published.
type ackPublished struct {
	seq  uint64
	when [2]time.Time
}

// ackCycle delivers three messages through a profile consumer and checks
// each ack subject: a first delivery acked, one NAKed with a delay and
// redelivered, and one left unacked and redelivered after ack_wait.
func ackCycle(t *testing.T, b *broker.Broker, form acksubject.Form, account string, bind jspull.Binding) {
	adm := newAdmin(t, b)
	provision(adm, bind)
	var msgs [3]ackPublished
	for i := range msgs {
		msgs[i].when[0] = time.Now()
		msgs[i].seq = adm.publish(bind.FilterSubject, []byte("ack subject"))
		msgs[i].when[1] = time.Now()
	}
	p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
	check := func(step string, res jspull.Result, want ackWant) acksubject.Info {
		t.Helper()
		return ackCheck(t, adm, step, form, account, bind, res.Delivery, want)
	}
	want := func(m ackPublished, consumerSeq, delivered, pending uint64) ackWant {
		return ackWant{streamSeq: m.seq, consumerSeq: consumerSeq, delivered: delivered, pending: pending, published: m.when}
	}

	// First delivery, acked: two messages are still pending.
	first := p.mustMessage()
	check("first delivery", first, want(msgs[0], 1, 1, 2))
	p.mustAck(&first.Delivery, jspull.Ack())

	// NAK with a delay: the redelivery counts 2 and takes the next
	// consumer sequence, with the same stream sequence and timestamp.
	second := p.mustMessage()
	sent := check("delivery before the nak", second, want(msgs[1], 2, 1, 1))
	p.mustAck(&second.Delivery, jspull.Nak(ackNakDelay))
	again := p.nextMessage(ackNakDelay + ackRedeliveryBound)
	redelivered := check("redelivery after the nak", again, want(msgs[1], 3, 2, 1))
	if redelivered.Timestamp != sent.Timestamp {
		t.Errorf("redelivery after the nak: timestamp %d, first delivery had %d", redelivered.Timestamp, sent.Timestamp)
	}
	p.mustAck(&again.Delivery, jspull.Ack())

	// Left unacked: the broker redelivers once ack_wait has passed.
	third := p.mustMessage()
	sent = check("delivery left unacked", third, want(msgs[2], 4, 1, 0))
	expired := p.nextMessage(bind.AckWait + ackRedeliveryBound)
	redelivered = check("redelivery after ack_wait", expired, want(msgs[2], 5, 2, 0))
	if redelivered.Timestamp != sent.Timestamp {
		t.Errorf("redelivery after ack_wait: timestamp %d, first delivery had %d", redelivered.Timestamp, sent.Timestamp)
	}
	p.mustAck(&expired.Delivery, jspull.Ack())

	if pend, err := p.inspect(); err != nil || !pend.Empty() {
		t.Fatalf("Inspect() after the cycle = %+v, %v; want empty", pend, err)
	}
}

// ackCheck parses the delivery's ack subject independently of pull and
// checks it against the form, the binding, want, the consumer info taken
// right after the delivery and the stored message. It returns the parsed
// Info.
func ackCheck(t *testing.T, adm *admin, step string, form acksubject.Form, account string, bind jspull.Binding, d jspull.Delivery, want ackWant) acksubject.Info {
	t.Helper()
	subject := d.Subject()
	info, err := acksubject.Parse(subject)
	if err != nil {
		t.Fatalf("%s: Parse(%q) = %v", step, subject, err)
	}

	// The subject as bytes, independent of the grammar: the prefix the
	// broker writes for this consumer, and the token count of the form (9
	// classic; v2 with the "_" domain, as DESIGN.md names them).
	prefix, tokens := "$JS.ACK."+bind.Stream+"."+bind.Consumer+".", 9
	if form == acksubject.FormV2 {
		prefix = "$JS.ACK._." + acksubject.AccountHash(account) + "." + bind.Stream + "." + bind.Consumer + "."
		tokens = 11
	}
	if !strings.HasPrefix(subject, prefix) || strings.Count(subject, ".")+1 != tokens {
		t.Errorf("%s: subject %q, want prefix %q and %d tokens", step, subject, prefix, tokens)
	}

	// Formatting gives back the same bytes.
	if got := info.String(); got != subject {
		t.Errorf("%s: String() = %q, want %q", step, got, subject)
	}
	if got, err := info.Append(nil); err != nil || string(got) != subject {
		t.Errorf("%s: Append() = %q, %v; want %q", step, got, err, subject)
	}

	wantInfo := acksubject.Info{
		Form:        form,
		Stream:      bind.Stream,
		Consumer:    bind.Consumer,
		Delivered:   want.delivered,
		StreamSeq:   want.streamSeq,
		ConsumerSeq: want.consumerSeq,
		Pending:     want.pending,
		Timestamp:   ackStoredTime(adm, bind.Stream, want.streamSeq),
	}
	if form == acksubject.FormV2 {
		wantInfo.AccountHash = acksubject.AccountHash(account)
	}
	if diff := cmp.Diff(wantInfo, info); diff != "" {
		t.Errorf("%s: Parse(%q) (-want +got):\n%s", step, subject, diff)
	}
	lo, hi := want.published[0].Add(-ackClockSkew).UnixNano(), want.published[1].Add(ackClockSkew).UnixNano()
	if info.Timestamp < lo || info.Timestamp > hi {
		t.Errorf("%s: timestamp %d outside the publication interval [%d, %d] widened by %v", step, info.Timestamp, lo, hi, ackClockSkew)
	}

	// pull read the same subject the same way.
	if diff := cmp.Diff(info, d.AckSubject); diff != "" {
		t.Errorf("%s: Delivery.AckSubject (-parsed +pull):\n%s", step, diff)
	}
	wantID := jspull.DeliveryID{StreamSeq: info.StreamSeq, ConsumerSeq: info.ConsumerSeq, Delivered: info.Delivered}
	if diff := cmp.Diff(wantID, d.ID); diff != "" {
		t.Errorf("%s: Delivery.ID (-want +got):\n%s", step, diff)
	}

	ackCheckBinding(t, step, account, bind, info)

	// The consumer's own view, taken before anything else is delivered.
	ci := ackConsumerInfo(adm, bind.Stream, bind.Consumer)
	wantCI := ackConsumerState{
		Stream:         info.Stream,
		Name:           info.Consumer,
		NumPending:     info.Pending,
		NumAckPending:  1,
		NumRedelivered: int(info.Delivered - 1),
	}
	wantCI.Delivered.ConsumerSeq = info.ConsumerSeq
	wantCI.Delivered.StreamSeq = info.StreamSeq
	if diff := cmp.Diff(wantCI, ci); diff != "" {
		t.Errorf("%s: consumer info (-from the ack subject +from the broker):\n%s", step, diff)
	}
	return info
}

// ackCheckBinding checks acksubject.Binding against the parsed subject:
// the configured names with the hash of the account's public key pass; a
// binding expecting the hash of the tenant's configured name fails on v2
// only (a classic subject carries no hash), which shows that in operator
// mode the broker hashes the account's public key.
func ackCheckBinding(t *testing.T, step, account string, bind jspull.Binding, info acksubject.Info) {
	t.Helper()
	ab := acksubject.Binding{Stream: bind.Stream, Consumer: bind.Consumer, AccountHash: acksubject.AccountHash(account)}
	if err := ab.Check(info); err != nil {
		t.Errorf("%s: Binding.Check() = %v", step, err)
	}
	if got, err := ab.Parse(info.String()); err != nil || got != info {
		t.Errorf("%s: Binding.Parse() = %+v, %v; want %+v", step, got, err, info)
	}
	byName := ab
	byName.AccountHash = acksubject.AccountHash(pullTenant)
	err := byName.Check(info)
	var me *acksubject.MismatchError
	switch info.Form {
	case acksubject.FormV2:
		if !errors.As(err, &me) || me.Field != acksubject.FieldAccountHash || !errors.Is(err, acksubject.ErrMismatch) {
			t.Errorf("%s: Check() with the hash of the tenant name = %v; want an account-hash mismatch", step, err)
		}
	default:
		if err != nil {
			t.Errorf("%s: Check() of a classic subject with any hash = %v; want nil", step, err)
		}
	}
}

// ackConsumerState is the part of a consumer info an ack subject speaks
// about.
type ackConsumerState struct {
	Stream    string `json:"stream_name"`
	Name      string `json:"name"`
	Delivered struct {
		ConsumerSeq uint64 `json:"consumer_seq"`
		StreamSeq   uint64 `json:"stream_seq"`
	} `json:"delivered"`
	NumPending     uint64 `json:"num_pending"`
	NumAckPending  int    `json:"num_ack_pending"`
	NumRedelivered int    `json:"num_redelivered"`
}

// ackConsumerInfo fetches the consumer info through the admin connection.
func ackConsumerInfo(adm *admin, stream, consumer string) ackConsumerState {
	adm.t.Helper()
	r := adm.request("$JS.API.CONSUMER.INFO."+stream+"."+consumer, nil)
	var ci struct {
		ackConsumerState
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Payload, &ci); err != nil || ci.Error != nil {
		adm.t.Fatalf("consumer info: status %d, error %v, %v", r.Status, ci.Error, err)
	}
	return ci.ackConsumerState
}

// ackStoredTime returns the store time of one stream message, in Unix
// nanoseconds, as the stream's message-get API reports it.
func ackStoredTime(adm *admin, stream string, seq uint64) int64 {
	adm.t.Helper()
	body, err := json.Marshal(map[string]uint64{"seq": seq})
	if err != nil {
		adm.t.Fatal(err)
	}
	r := adm.request("$JS.API.STREAM.MSG.GET."+stream, body)
	var resp struct {
		Message *struct {
			Seq  uint64    `json:"seq"`
			Time time.Time `json:"time"`
		} `json:"message"`
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Payload, &resp); err != nil || resp.Message == nil || resp.Message.Seq != seq {
		adm.t.Fatalf("message get %d: status %d, error %v, %v", seq, r.Status, resp.Error, err)
	}
	return resp.Message.Time.UnixNano()
}
