package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestAgainstBroker runs provisioning against the pinned broker: one
// broker (TLS first, operator mode, two tenant accounts) shared by the
// subtests, each with streams of its own.
func TestAgainstBroker(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme", "globex"}})

	t.Run("creates exactly the profile, then asserts and changes nothing", func(t *testing.T) {
		b1 := binding("b0", "acme", "ORDERS", "c0", "acme.orders.created")
		b2 := binding("b1", "acme", "ORDERS", "c1", "acme.orders.paid")
		b2.MaxPayloadBytes, b2.MaxDeliver, b2.AckWaitMS, b2.OperationTimeoutMS, b2.RootBudgetMS = 1024, 3, 1100, 100, 100
		b3 := binding("b2", "globex", "EVENTS", "c2", "globex.events")
		cfg := config(t, b, b1, b2, b3)
		creds := adminCreds(t, b, cfg)

		rep := runProvision(t, cfg, creds, DefaultOptions())
		want := []outcome{
			{"acme", "capture", DeadLetterStream, "", "", "created", 0, 0},
			{"acme", "stream", "ORDERS", "", "", "created", 0, 1}, // max_msg_size 4096 > b1's 1024
			{"acme", "consumer", "ORDERS", "c0", "b0", "created", 0, 0},
			{"acme", "consumer", "ORDERS", "c1", "b1", "created", 0, 0},
			{"globex", "capture", DeadLetterStream, "", "", "created", 0, 0},
			{"globex", "stream", "EVENTS", "", "", "created", 0, 0},
			{"globex", "consumer", "EVENTS", "c2", "b2", "created", 0, 0},
		}
		if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
			t.Fatalf("first run (-want +got):\n%s", diff)
		}
		if !rep.OK() {
			t.Errorf("OK() = false")
		}

		// jspull's profile check, the runtime's own, accepts every consumer.
		admins := map[string]*Client{"acme": adminClient(t, b, "acme"), "globex": adminClient(t, b, "globex")}
		for _, bd := range cfg.Bindings {
			pc, err := jspull.NewConsumer(PullBinding(bd), jspull.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
			p, err := pc.Inspect(ctx, admins[bd.Tenant].conn)
			cancel()
			if err != nil || !p.Empty() {
				t.Errorf("Inspect %s: %+v, %v; want an empty consumer of the profile", bd.ID, p, err)
			}
		}

		// The stream is the one DesiredStream describes.
		st := snapshotStream(t, admins["acme"], "ORDERS")
		gotStream := map[string]any{}
		for _, k := range []string{"subjects", "retention", "storage", "discard", "max_msg_size", "max_msgs", "max_bytes", "num_replicas"} {
			gotStream[k] = st.Config[k]
		}
		wantStream := map[string]any{
			"subjects": []any{"acme.orders.created", "acme.orders.paid"}, "retention": "workqueue", "storage": "file",
			"discard": "new", "max_msg_size": 4096.0, "max_msgs": -1.0, "max_bytes": -1.0, "num_replicas": 1.0,
		}
		if diff := cmp.Diff(wantStream, gotStream); diff != "" {
			t.Errorf("stream ORDERS (-want +got):\n%s", diff)
		}

		// A second run asserts everything and changes nothing.
		before := map[string]any{}
		for _, bd := range cfg.Bindings {
			before[bd.ID] = snapshotConsumer(t, admins[bd.Tenant], bd.Stream, bd.Consumer)
		}
		beforeStream := snapshotStream(t, admins["acme"], "ORDERS")
		rep2 := runProvision(t, cfg, creds, DefaultOptions())
		for i := range want {
			want[i].Action = "asserted"
		}
		if diff := cmp.Diff(want, outcomes(rep2)); diff != "" {
			t.Errorf("second run (-want +got):\n%s", diff)
		}
		for _, bd := range cfg.Bindings {
			if diff := cmp.Diff(before[bd.ID], snapshotConsumer(t, admins[bd.Tenant], bd.Stream, bd.Consumer)); diff != "" {
				t.Errorf("consumer %s changed by the second run (-before +after):\n%s", bd.ID, diff)
			}
		}
		if diff := cmp.Diff(beforeStream, snapshotStream(t, admins["acme"], "ORDERS")); diff != "" {
			t.Errorf("stream changed by the second run (-before +after):\n%s", diff)
		}
	})

	t.Run("an existing consumer that differs is reported and left unchanged", func(t *testing.T) {
		bd := binding("b3", "acme", "DIFFER", "c3", "acme.differ")
		cfg := config(t, b, bd)
		admin := adminClient(t, b, "acme")
		pb := PullBinding(bd)
		if _, err := admin.createStream(t.Context(), DesiredStream("DIFFER", []jspull.Binding{pb}, DefaultOptions().Stream)); err != nil {
			t.Fatal(err)
		}
		other := DesiredConsumer(pb)
		other.MaxDeliver = 2
		body, err := json.Marshal(consumerCreateRequest{Stream: "DIFFER", Config: other, Action: consumerActionCreate})
		if err != nil {
			t.Fatal(err)
		}
		rawRequest(t, admin, consumerCreatePrefix+"DIFFER.c3", body)
		before := snapshotConsumer(t, admin, "DIFFER", "c3")

		rep := runProvision(t, cfg, adminCreds(t, b, cfg), DefaultOptions())
		if len(rep.Results) != 3 {
			t.Fatalf("results: %+v", rep.Results)
		}
		got := rep.Results[2]
		if got.Action != ActionMismatch || !errors.Is(got.Err, ErrMismatch) {
			t.Errorf("consumer result %v, %v; want mismatch", got.Action, got.Err)
		}
		if diff := cmp.Diff([]jspull.Mismatch{{Field: "max_deliver", Want: "5", Got: "2"}}, got.Mismatches); diff != "" {
			t.Errorf("mismatches (-want +got):\n%s", diff)
		}
		if rep.OK() {
			t.Errorf("OK() = true with a mismatch")
		}
		if diff := cmp.Diff(before, snapshotConsumer(t, admin, "DIFFER", "c3")); diff != "" {
			t.Errorf("consumer changed (-before +after):\n%s", diff)
		}

		// Had it appeared between the check and the creation, the create
		// request (action "create") would have been refused, not applied.
		var ae *APIError
		if err := admin.createConsumer(t.Context(), pb, DefaultReplicas, DefaultReplicas); !errors.As(err, &ae) || ae.ErrCode != errCodeConsumerExists {
			t.Errorf("createConsumer over a differing consumer: %v, want err_code %d", err, errCodeConsumerExists)
		}
		if diff := cmp.Diff(before, snapshotConsumer(t, admin, "DIFFER", "c3")); diff != "" {
			t.Errorf("consumer changed by a create request (-before +after):\n%s", diff)
		}

		// The command reports the same and exits 1; the report names the
		// field and both values.
		cfgPath, credsPath := brokertest.WriteInputs(t, b, cfg, t.TempDir())
		var stdout, stderr bytes.Buffer
		if code := Main(t.Context(), []string{"-config", cfgPath, "-credentials", credsPath, "-permissions", "none"}, &stdout, &stderr); code != ExitFailed {
			t.Errorf("Main exit %d, want %d\n%s", code, ExitFailed, stderr.String())
		}
		wantReport := "acme: capture stream LATENT_DEADLETTER: asserted\n" +
			"acme: stream DIFFER: asserted\n" +
			"acme: consumer DIFFER/c3 (binding b3): mismatch, left unchanged\n" +
			"    max_deliver: want 5, got 2\n" +
			"summary: 0 created, 2 asserted, 1 mismatch, 0 missing, 0 skipped, 0 failed\n"
		if diff := cmp.Diff(wantReport, stderr.String()); diff != "" || stdout.Len() != 0 {
			t.Errorf("Main report (-want +got):\n%s\nstdout: %q", diff, stdout.String())
		}
		if diff := cmp.Diff(before, snapshotConsumer(t, admin, "DIFFER", "c3")); diff != "" {
			t.Errorf("consumer changed by the command (-before +after):\n%s", diff)
		}
	})

	t.Run("assert mode creates nothing", func(t *testing.T) {
		cfg := config(t, b, binding("b4", "acme", "ABSENT", "c4", "acme.absent"))
		opts := DefaultOptions()
		opts.Mode = ModeAssert
		rep := runProvision(t, cfg, adminCreds(t, b, cfg), opts)
		want := []outcome{
			{"acme", "capture", DeadLetterStream, "", "", "asserted", 0, 0},
			{"acme", "stream", "ABSENT", "", "", "missing", 0, 0},
			{"acme", "consumer", "ABSENT", "c4", "b4", "skipped", 0, 0},
		}
		if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
			t.Errorf("assert run (-want +got):\n%s", diff)
		}
		if st := snapshotStream(t, adminClient(t, b, "acme"), "ABSENT"); st.Error == nil || st.Error.ErrCode != jspull.CodeStreamNotFound {
			t.Errorf("stream ABSENT exists after an assert run: %+v", st)
		}
	})

	t.Run("an existing stream that does not capture the filter gets no consumer", func(t *testing.T) {
		admin := adminClient(t, b, "acme")
		other := DesiredStream("FOREIGN", []jspull.Binding{{FilterSubject: "acme.foreign.other", PayloadCeiling: 4096}}, DefaultOptions().Stream)
		if _, err := admin.createStream(t.Context(), other); err != nil {
			t.Fatal(err)
		}
		cfg := config(t, b, binding("b5", "acme", "FOREIGN", "c5", "acme.foreign.mine"))
		rep := runProvision(t, cfg, adminCreds(t, b, cfg), DefaultOptions())
		want := []outcome{
			{"acme", "capture", DeadLetterStream, "", "", "asserted", 0, 0},
			{"acme", "stream", "FOREIGN", "", "", "mismatch", 1, 0},
			{"acme", "consumer", "FOREIGN", "c5", "b5", "missing", 0, 0},
		}
		if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
			t.Errorf("run (-want +got):\n%s", diff)
		}
		wantMismatch := []jspull.Mismatch{{Field: "subjects", Want: "a subject capturing acme.foreign.mine", Got: "acme.foreign.other"}}
		if diff := cmp.Diff(wantMismatch, rep.Results[1].Mismatches); diff != "" {
			t.Errorf("stream mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("an unreachable tenant fails alone", func(t *testing.T) {
		cfg := config(t, b,
			binding("b6", "acme", "REACH", "c6", "acme.reach"),
			binding("b7", "globex", "NOREACH", "c7", "globex.noreach"))
		// globex's destination: a loopback port nothing listens on.
		closed := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 1)
		cfg.Tenants[1].Destination.Address = closed
		creds := adminCreds(t, b, cfg)
		rep := runProvision(t, cfg, creds, DefaultOptions())
		want := []outcome{
			{"acme", "capture", DeadLetterStream, "", "", "asserted", 0, 0},
			{"acme", "stream", "REACH", "", "", "created", 0, 0},
			{"acme", "consumer", "REACH", "c6", "b6", "created", 0, 0},
			{"globex", "tenant", "", "", "", "failed", 0, 0},
			{"globex", "capture", DeadLetterStream, "", "", "skipped", 0, 0},
			{"globex", "stream", "NOREACH", "", "", "skipped", 0, 0},
			{"globex", "consumer", "NOREACH", "c7", "b7", "skipped", 0, 0},
		}
		if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
			t.Errorf("run (-want +got):\n%s", diff)
		}
		var he *conn.HandshakeError
		if !errors.As(rep.Results[3].Err, &he) || !errors.Is(rep.Results[4].Err, ErrSkipped) {
			t.Errorf("errors: %v, %v; want a handshake error and ErrSkipped", rep.Results[3].Err, rep.Results[4].Err)
		}
	})

	t.Run("the permissions printed are jspull's and allow inspect, next and ack only", func(t *testing.T) {
		b8 := binding("b8", "acme", "PERMS", "c8", "acme.perms.a")
		b9 := binding("b9", "acme", "PERMS", "c9", "acme.perms.b")
		b10 := binding("b10", "globex", "PERMS", "c10", "globex.perms")
		cfg := config(t, b, b8, b9, b10)
		if rep := runProvision(t, cfg, adminCreds(t, b, cfg), DefaultOptions()); !rep.OK() {
			t.Fatalf("provisioning: %+v", rep.Results)
		}
		cfgPath, credsPath := brokertest.WriteInputs(t, b, cfg, t.TempDir())

		var jsonOut, serverOut, stderr bytes.Buffer
		if code := Main(t.Context(), []string{"-config", cfgPath, "-credentials", credsPath, "-assert", "-permissions", "json"}, &jsonOut, &stderr); code != ExitOK {
			t.Fatalf("Main -permissions json: exit %d\n%s", code, stderr.String())
		}
		if code := Main(t.Context(), []string{"-config", cfgPath, "-permissions-only"}, &serverOut, &stderr); code != ExitOK {
			t.Fatalf("Main -permissions-only: exit %d\n%s", code, stderr.String())
		}

		wantAcme, err := jspull.DerivePermissions(trigger.InboxPrefix("acme"), PullBinding(b8), PullBinding(b9))
		if err != nil {
			t.Fatal(err)
		}
		wantGlobex, err := jspull.DerivePermissions(trigger.InboxPrefix("globex"), PullBinding(b10))
		if err != nil {
			t.Fatal(err)
		}
		var doc AccountDocument
		if err := json.Unmarshal(jsonOut.Bytes(), &doc); err != nil {
			t.Fatalf("json output: %v\n%s", err, jsonOut.String())
		}
		type perms struct {
			Tenant, Address, Inbox string
			Bindings, Pub, Sub     []string
		}
		var got []perms
		for _, u := range doc.Tenants {
			got = append(got, perms{u.Tenant, u.Address, u.InboxPrefix, u.Bindings, u.Permissions.Pub.Allow, u.Permissions.Sub.Allow})
		}
		addr := b.Addr().String()
		want := []perms{
			{"acme", addr, "_INBOX.acme", []string{"b8", "b9"}, wantAcme.Publish, []string{"_INBOX.acme.>"}},
			{"globex", addr, "_INBOX.globex", []string{"b10"}, wantGlobex.Publish, []string{"_INBOX.globex.>"}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("json permissions (-want +got):\n%s", diff)
		}
		for _, u := range doc.Tenants {
			if u.Permissions.Pub.Deny != nil || u.Permissions.Sub.Deny != nil || u.Permissions.Resp != nil {
				t.Errorf("tenant %s: unexpected deny or response permissions %+v", u.Tenant, u.Permissions)
			}
		}

		// The server format carries ServerConfigJSON, one line per tenant.
		var lines []string
		for _, l := range strings.Split(serverOut.String(), "\n") {
			if strings.HasPrefix(l, "permissions: ") {
				lines = append(lines, strings.TrimPrefix(l, "permissions: "))
			}
		}
		acmeConf, err := ServerConfigJSON(wantAcme)
		if err != nil {
			t.Fatal(err)
		}
		globexConf, err := ServerConfigJSON(wantGlobex)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{string(acmeConf), string(globexConf)}, lines); diff != "" {
			t.Errorf("server permissions (-want +got):\n%s", diff)
		}

		// A user minted with exactly the printed permissions can inspect,
		// pull and acknowledge, and nothing else.
		admin := adminClient(t, b, "acme")
		if _, err := admin.Publish(t.Context(), "acme.perms.a", []byte(`["hello"]`)); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		user, err := b.User("acme", broker.UserSpec{Name: "runtime", PubAllow: doc.Tenants[0].Permissions.Pub.Allow, SubAllow: doc.Tenants[0].Permissions.Sub.Allow})
		if err != nil {
			t.Fatal(err)
		}
		rt := dialInbox(t, b, user, trigger.InboxPrefix("acme"))
		pc, err := jspull.NewConsumer(PullBinding(b8), jspull.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		defer cancel()
		if p, err := pc.Inspect(ctx, rt.conn); err != nil || p.NumPending != 1 {
			t.Fatalf("Inspect as the runtime user: %+v, %v; want one pending", p, err)
		}
		res, err := pc.Next(ctx, rt.conn)
		if err != nil || res.Kind != jspull.KindMessage || string(res.Payload) != `["hello"]` {
			t.Fatalf("Next as the runtime user: %v %q, %v", res.Kind, res.Payload, err)
		}
		d := res.Delivery
		rc, err := pc.Ack(ctx, rt.conn, &d, jspull.Ack())
		if err != nil || rc.Outcome != pull.AckVerified {
			t.Fatalf("Ack as the runtime user: %v, %v", rc.Outcome, err)
		}

		denied := []struct {
			name    string
			subject string
			body    []byte
		}{
			{"stream info", "$JS.API.STREAM.INFO.PERMS", nil},
			{"stream create", "$JS.API.STREAM.CREATE.EVIL", []byte(`{"name":"EVIL","subjects":["evil"]}`)},
			{"consumer create", "$JS.API.CONSUMER.CREATE.PERMS.c8", []byte(`{}`)},
			{"consumer delete", "$JS.API.CONSUMER.DELETE.PERMS.c8", nil},
			{"info of another consumer", "$JS.API.CONSUMER.INFO.PERMS.other", nil},
			{"account info", "$JS.API.INFO", nil},
			{"publish to the stream", "acme.perms.a", []byte(`[]`)},
		}
		for _, tc := range denied {
			t.Run(tc.name, func(t *testing.T) {
				rctx, cancel := context.WithTimeout(t.Context(), testTimeout)
				defer cancel()
				_, err := rt.conn.Request(rctx, tc.subject, nil, tc.body)
				var se *conn.ServerError
				if !errors.As(err, &se) || se.Kind != conn.KindPermission {
					t.Errorf("request %s: %v, want a permission violation", tc.subject, err)
				}
			})
		}
	})

	t.Run("each tenant's user reads only its own private inbox", func(t *testing.T) {
		// Tenants "acme" and "acme.eu" and "globex" of one configuration;
		// their users are minted in one account, as users of one account
		// sharing a broker would be.
		cfg := config(t, b,
			binding("b12", "acme", "PRIV", "c12", "acme.priv"),
			binding("b13", "acme.eu", "PRIV", "c13", "acme.eu.priv"),
			binding("b14", "globex", "PRIV", "c14", "globex.priv"))
		ps, err := DerivePermissions(cfg)
		if err != nil {
			t.Fatal(err)
		}
		users := map[string]broker.Creds{}
		for _, p := range ps {
			users[p.Tenant], err = b.User("acme", broker.UserSpec{Name: "runtime-" + p.Tenant, PubAllow: p.Permissions.Publish, SubAllow: p.Permissions.Subscribe})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range ps {
			t.Run("own inbox "+p.Tenant, func(t *testing.T) {
				c := dialInbox(t, b, users[p.Tenant], p.InboxPrefix)
				if !strings.HasPrefix(c.conn.Inbox(), p.InboxPrefix+".") {
					t.Errorf("inbox %q not under %q", c.conn.Inbox(), p.InboxPrefix)
				}
			})
		}
		denied := []struct {
			name, user, prefix string
		}{
			{"acme on globex's inbox", "acme", trigger.InboxPrefix("globex")},
			{"globex on acme's inbox", "globex", trigger.InboxPrefix("acme")},
			{"acme on acme.eu's inbox", "acme", trigger.InboxPrefix("acme.eu")},
			{"acme.eu on acme's inbox", "acme.eu", trigger.InboxPrefix("acme")},
			{"acme on the account-wide default inbox", "acme", conn.DefaultInboxPrefix},
		}
		for _, tc := range denied {
			t.Run(tc.name, func(t *testing.T) {
				cfg, err := ConnConfig(destination(b), secretOf(t, users[tc.user]))
				if err != nil {
					t.Fatal(err)
				}
				cfg.InboxPrefix = tc.prefix
				c, err := Dial(t.Context(), cfg, testTimeout)
				if err == nil {
					_ = c.Close()
					t.Fatalf("Dial with inbox prefix %q succeeded, want a permission violation", tc.prefix)
				}
				var he *conn.HandshakeError
				var se *conn.ServerError
				if !errors.As(err, &he) || he.Step != conn.StepConnect || !errors.As(err, &se) || se.Kind != conn.KindPermission {
					t.Errorf("Dial with inbox prefix %q: %v, want a permission violation at the connect step", tc.prefix, err)
				}
			})
		}
	})

	t.Run("publish verifies the acknowledgement", func(t *testing.T) {
		bd := binding("b11", "acme", "PUB", "c11", "acme.pub")
		bd.MaxPayloadBytes = 64
		cfg := config(t, b, bd)
		if rep := runProvision(t, cfg, adminCreds(t, b, cfg), DefaultOptions()); !rep.OK() {
			t.Fatalf("provisioning: %+v", rep.Results)
		}
		admin := adminClient(t, b, "acme")
		for i := range 2 {
			ack, err := admin.Publish(t.Context(), "acme.pub", bytes.Repeat([]byte("x"), 64)) // at max_msg_size
			if err != nil || ack != (PubAck{Stream: "PUB", Seq: uint64(i + 1)}) {
				t.Errorf("Publish %d: %+v, %v", i, ack, err)
			}
		}
		_, err := admin.Publish(t.Context(), "acme.pub", bytes.Repeat([]byte("x"), 65)) // one past it
		var ae *APIError
		if !errors.As(err, &ae) || ae.ErrCode != errCodeMsgTooLarge {
			t.Errorf("Publish over max_msg_size: %v, want err_code %d", err, errCodeMsgTooLarge)
		}
		if _, err := admin.Publish(t.Context(), "acme.nostream", []byte("x")); !errors.Is(err, ErrNoStream) {
			t.Errorf("Publish with no stream: %v, want ErrNoStream", err)
		}
	})
	t.Run("copies: the stream republishes every message to the copy capture", func(t *testing.T) {
		bd := binding("b12", "acme", "COPIED", "c12", "acme.copied")
		cfg := config(t, b, bd)
		opts := DefaultOptions()
		opts.Capture.Copies = true
		rep := runProvision(t, cfg, adminCreds(t, b, cfg), opts)
		want := []outcome{
			{"acme", "capture", DeadLetterStream, "", "", "asserted", 0, 0},
			{"acme", "capture", CopyStream, "", "", "created", 0, 0},
			{"acme", "stream", "COPIED", "", "", "created", 0, 0},
			{"acme", "consumer", "COPIED", "c12", "b12", "created", 0, 0},
		}
		if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
			t.Fatalf("run (-want +got):\n%s\nerrors: %v", diff, resultErrors(rep))
		}
		admin := adminClient(t, b, "acme")
		if got := snapshotStream(t, admin, "COPIED").Config["republish"]; !cmp.Equal(got, map[string]any{"src": ">", "dest": "latent.copy.COPIED.>"}) {
			t.Errorf("republish %v", got)
		}
		ack, err := admin.Publish(t.Context(), "acme.copied", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		// The copy is published after the store, without an
		// acknowledgement: polled for within the test's bound.
		var copied struct {
			Message *struct {
				Subject string `json:"subject"`
				Data    []byte `json:"data"`
			} `json:"message"`
		}
		deadline := time.Now().Add(testTimeout)
		for copied.Message == nil && time.Now().Before(deadline) {
			body := []byte(`{"last_by_subj":"latent.copy.COPIED.acme.copied"}`)
			if err := json.Unmarshal(rawRequest(t, admin, "$JS.API.STREAM.MSG.GET."+CopyStream, body), &copied); err != nil {
				t.Fatal(err)
			}
		}
		if copied.Message == nil || string(copied.Message.Data) != "x" || ack.Seq != 1 {
			t.Errorf("copy %+v of seq %d", copied.Message, ack.Seq)
		}

		// A stream that exists without the setting is a mismatch, and is
		// left unchanged.
		plain := binding("b13", "acme", "PLAIN", "c13", "acme.plain")
		pcfg := config(t, b, plain)
		if rep := runProvision(t, pcfg, adminCreds(t, b, pcfg), DefaultOptions()); !rep.OK() {
			t.Fatalf("provisioning: %v", resultErrors(rep))
		}
		rep = runProvision(t, pcfg, adminCreds(t, b, pcfg), opts)
		if diff := cmp.Diff([]jspull.Mismatch{{Field: "republish", Want: "src > dest latent.copy.PLAIN.>", Got: "none"}}, rep.Results[2].Mismatches); diff != "" {
			t.Errorf("mismatches (-want +got):\n%s", diff)
		}
		if got := snapshotStream(t, admin, "PLAIN").Config["republish"]; got != nil {
			t.Errorf("republish set on an existing stream: %v", got)
		}
	})
}

// TestMainAgainstBroker runs the command end to end: create, then assert,
// with the report and permissions where they belong.
func TestMainAgainstBroker(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	cfg := config(t, b, binding("b0", "acme", "MAIN", "c0", "acme.main"))
	cfgPath, credsPath := brokertest.WriteInputs(t, b, cfg, t.TempDir())
	tests := []struct {
		name   string
		args   []string
		code   int
		report string
	}{
		{"assert before creating", []string{"-assert"}, ExitFailed,
			"acme: capture stream LATENT_DEADLETTER: missing\n" +
				"acme: stream MAIN: missing\nacme: consumer MAIN/c0 (binding b0): skipped\n    error: provision: not attempted: stream missing\n" +
				"summary: 0 created, 0 asserted, 0 mismatch, 2 missing, 1 skipped, 0 failed\n"},
		{"create", []string{"-retention", "limits", "-max-msgs", "1000", "-max-bytes", "1048576"}, ExitOK,
			"acme: capture stream LATENT_DEADLETTER: created\n" +
				"acme: stream MAIN: created\nacme: consumer MAIN/c0 (binding b0): created\n" +
				"summary: 3 created, 0 asserted, 0 mismatch, 0 missing, 0 skipped, 0 failed\n"},
		{"assert after creating", []string{"-assert"}, ExitOK,
			"acme: capture stream LATENT_DEADLETTER: asserted\n" +
				"acme: stream MAIN: asserted\nacme: consumer MAIN/c0 (binding b0): asserted\n" +
				"summary: 0 created, 3 asserted, 0 mismatch, 0 missing, 0 skipped, 0 failed\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"-config", cfgPath, "-credentials", credsPath}, tc.args...)
			if code := Main(t.Context(), args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr.String())
			}
			if diff := cmp.Diff(tc.report, stderr.String()); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(stdout.String(), "# Permissions") || !strings.Contains(stdout.String(), "\npermissions: {") {
				t.Errorf("stdout is not the server-format permissions:\n%s", stdout.String())
			}
		})
	}
	st := snapshotStream(t, adminClient(t, b, "acme"), "MAIN")
	got := map[string]any{"retention": st.Config["retention"], "max_msgs": st.Config["max_msgs"], "max_bytes": st.Config["max_bytes"]}
	want := map[string]any{"retention": "limits", "max_msgs": 1000.0, "max_bytes": 1048576.0}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("stream created by the command (-want +got):\n%s", diff)
	}
}

// TestMainInputs covers what the command refuses before contacting any
// broker.
func TestMainInputs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "absent.json")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no flags", nil, ExitUsage},
		{"no credentials", []string{"-config", good}, ExitUsage},
		{"argument", []string{"-config", good, "-credentials", good, "x"}, ExitUsage},
		{"bad format", []string{"-config", good, "-credentials", good, "-permissions", "yaml"}, ExitUsage},
		{"permissions-only without a format", []string{"-config", good, "-permissions-only", "-permissions", "none"}, ExitUsage},
		{"bad retention", []string{"-config", good, "-credentials", good, "-retention", "interest"}, ExitUsage},
		{"zero max-msgs", []string{"-config", good, "-credentials", good, "-max-msgs", "0"}, ExitUsage},
		{"zero replicas", []string{"-config", good, "-credentials", good, "-replicas", "0"}, ExitUsage},
		{"replicas past MaxReplicas", []string{"-config", good, "-credentials", good, "-replicas", "6"}, ExitUsage},
		{"replicas at MaxReplicas", []string{"-config", good, "-credentials", good, "-replicas", "5"}, ExitFailed},
		{"timeout too long", []string{"-config", good, "-credentials", good, "-timeout", (MaxTimeout + time.Millisecond).String()}, ExitUsage},
		{"unknown flag", []string{"-config", good, "-force"}, ExitUsage},
		{"inbox prefix is derived, not a flag", []string{"-config", good, "-permissions-only", "-inbox-prefix", "_INBOX"}, ExitUsage},
		{"unreadable inputs", []string{"-config", good, "-credentials", good}, ExitFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Main(t.Context(), tc.args, &stdout, &stderr); code != tc.code || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q; want %d and nothing\n%s", code, stdout.String(), tc.code, stderr.String())
			}
		})
	}
}

// TestRunArguments covers what Run refuses before dialling.
func TestRunArguments(t *testing.T) {
	d := trigger.Destination{
		Address: netip.MustParseAddrPort("127.0.0.1:4222"), ServerName: "broker.latent.test",
		RootCAsPEM: testCAPEM(t), AllowNonPublic: true,
	}
	cfg := trigger.Config{
		Profile: trigger.ProfileName, PollIntervalMS: 100, MaxControlLineBytes: 4096, MaxHeaderBytes: 4096,
		Tenants:  []trigger.Tenant{{ID: "acme", ProviderID: "local", Destination: d}},
		Bindings: []trigger.Binding{binding("b0", "acme", "S", "c", "acme.s")},
	}
	cred := trigger.Credential{Tenant: "acme", ProviderID: "local", Destination: d}
	other := cred
	other.Tenant = "globex"
	bad := cfg
	bad.PollIntervalMS = 1
	noMode := DefaultOptions()
	noMode.Mode = 0
	tests := []struct {
		name  string
		cfg   trigger.Config
		creds []trigger.Credential
		opts  Options
	}{
		{"invalid options", cfg, []trigger.Credential{cred}, noMode},
		{"invalid config", bad, []trigger.Credential{cred}, DefaultOptions()},
		{"no credential", cfg, nil, DefaultOptions()},
		{"credential of another tenant", cfg, []trigger.Credential{other}, DefaultOptions()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Run(t.Context(), tc.cfg, tc.creds, tc.opts); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("Run = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

// TestAssertWithRuntimeCredentials pins issue 20: -assert with the trigger
// runtime's own credentials failed at connect, because provision
// subscribed the default inbox "_INBOX.>" and the runtime's user may
// subscribe only its tenant's "_INBOX.<tenant>.>". It now gets past the
// handshake to the stream, which that user may not read (by design), and
// each permission violation carries the sentinel of its row in
// docs/TROUBLESHOOTING.md.
func TestAssertWithRuntimeCredentials(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	cfg := config(t, b, binding("b0", "acme", "RUNTIME", "c0", "acme.runtime"))
	if rep := runProvision(t, cfg, adminCreds(t, b, cfg), DefaultOptions()); !rep.OK() {
		t.Fatalf("provisioning: %v", resultErrors(rep))
	}
	ps, err := DerivePermissions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0].Permissions
	admin, err := b.Admin("acme")
	if err != nil {
		t.Fatal(err)
	}
	runtime, err := b.User("acme", broker.UserSpec{Name: "runtime", PubAllow: p.Publish, SubAllow: p.Subscribe})
	if err != nil {
		t.Fatal(err)
	}
	// The grants of another tenant's runtime user: neither inbox is its.
	other, err := b.User("acme", broker.UserSpec{Name: "other", PubAllow: p.Publish, SubAllow: []string{trigger.InboxPrefix("globex") + ".>"}})
	if err != nil {
		t.Fatal(err)
	}
	assert := DefaultOptions()
	assert.Mode = ModeAssert
	capture := outcome{"acme", "capture", DeadLetterStream, "", "", "", 0, 0}
	stream := outcome{"acme", "stream", "RUNTIME", "", "", "", 0, 0}
	consumer := outcome{"acme", "consumer", "RUNTIME", "c0", "b0", "", 0, 0}
	tenant := outcome{Tenant: "acme", Resource: "tenant", Action: "failed"}
	with := func(o outcome, action string) outcome { o.Action = action; return o }
	tests := []struct {
		name     string
		user     broker.Creds
		opts     Options
		want     []outcome
		wantErrs []error
	}{
		{"admin asserts", admin, assert,
			[]outcome{with(capture, "asserted"), with(stream, "asserted"), with(consumer, "asserted")}, []error{nil, nil, nil}},
		{"runtime asserts past the handshake", runtime, assert,
			[]outcome{with(capture, "failed"), with(stream, "failed"), with(consumer, "skipped")},
			[]error{ErrRequestDenied, ErrRequestDenied, ErrSkipped}},
		{"runtime cannot create: the default inbox is not its", runtime, DefaultOptions(),
			[]outcome{tenant, with(capture, "skipped"), with(stream, "skipped"), with(consumer, "skipped")},
			[]error{ErrInboxDenied, ErrSkipped, ErrSkipped, ErrSkipped}},
		{"neither inbox granted", other, assert,
			[]outcome{tenant, with(capture, "skipped"), with(stream, "skipped"), with(consumer, "skipped")},
			[]error{ErrInboxDenied, ErrSkipped, ErrSkipped, ErrSkipped}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tn := cfg.Tenants[0]
			creds := []trigger.Credential{{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Secret: secretOf(t, tc.user)}}
			rep := runProvision(t, cfg, creds, tc.opts)
			if diff := cmp.Diff(tc.want, outcomes(rep)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			var gotErrs []error
			for _, r := range rep.Results {
				gotErrs = append(gotErrs, r.Err)
			}
			if diff := cmp.Diff(tc.wantErrs, gotErrs, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
