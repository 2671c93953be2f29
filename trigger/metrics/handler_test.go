package metrics_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/metrics"
)

// scrape serves one request to h and returns the recorder.
func scrape(h http.Handler, method string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, "/metrics", nil))
	return rec
}

// bindingKey names one binding's series of a family.
type bindingKey struct{ Family, Binding, Label, Value string }

// runKinds steps trig through every kind of visit that needs no broker:
// refused host checks, unavailable and failed reservations, a failed dial
// and the dial backoff after it. It returns the reports.
func runKinds(t *testing.T, trig *trigger.Triggers) []trigger.StepReport {
	t.Helper()
	hosts := []*host{
		{eligible: trigger.ErrNotEligible},
		{current: trigger.ErrCredentialRevoked},
		{reserve: trigger.ErrUnavailable},
		{reserve: errHostDown},
		{},
	}
	var reports []trigger.StepReport
	for _, h := range hosts {
		for range 3 {
			reports = append(reports, step(t, trig, h))
		}
	}
	return reports
}

// expectFrom folds reports into the non-zero series they must produce.
func expectFrom(reports []trigger.StepReport) map[bindingKey]float64 {
	want := map[bindingKey]float64{}
	for _, r := range reports {
		b := strconv.Itoa(r.Binding)
		want[bindingKey{"latent_nats_trigger_visits_total", b, "", ""}]++
		switch r.Result {
		case trigger.ResultSkipped:
			want[bindingKey{"latent_nats_trigger_skipped_total", b, "", ""}]++
		case trigger.ResultFailed:
			want[bindingKey{"latent_nats_trigger_failed_total", b, "", ""}]++
		}
		if r.Error != 0 {
			want[bindingKey{famErrors, b, "class", r.Error.String()}]++
		}
		if r.Resource != 0 {
			want[bindingKey{famRefusals, b, "resource", r.Resource.String()}]++
		}
	}
	return want
}

// gotFrom collects the non-zero per-binding series of the families in want.
func gotFrom(fams []family, want map[bindingKey]float64) map[bindingKey]float64 {
	names := map[string]bool{}
	for k := range want {
		names[k.Family] = true
	}
	got := map[bindingKey]float64{}
	for _, f := range fams {
		if !names[f.Name] {
			continue
		}
		for _, s := range f.Samples {
			if s.Value == 0 {
				continue
			}
			k := bindingKey{Family: f.Name}
			k.Binding, _ = s.get("binding")
			if len(s.Labels) > 1 {
				k.Label, k.Value = s.Labels[1].Name, s.Labels[1].Value
			}
			got[k] = s.Value
		}
	}
	return got
}

// TestMonitorScrape scrapes a Monitor of a real installation, fed by steps
// that need no broker, and checks the series against the step reports.
func TestMonitorScrape(t *testing.T) {
	trig, mon := install(t, trigger.DefaultPoolLimits())
	h := metrics.Handler(mon)

	fams, err := parseExposition(scrape(h, http.MethodGet).Body.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := find(fams, famInfo); got.Name != "" {
		t.Errorf("last-step family before any step: %+v", got)
	}
	for name, want := range map[string]float64{
		"latent_nats_trigger_epoch":                      1,
		"latent_nats_trigger_bindings":                   3,
		"latent_nats_trigger_steps_total":                0,
		"latent_nats_trigger_dials_total":                0,
		"latent_nats_trigger_connections_replaced_total": 0,
	} {
		if f := find(fams, name); len(f.Samples) != 1 || f.Samples[0].Value != want {
			t.Errorf("%s: samples %v, want one of value %v", name, f.Samples, want)
		}
	}

	reports := runKinds(t, trig)
	fams, err = parseExposition(scrape(h, http.MethodGet).Body.String())
	if err != nil {
		t.Fatal(err)
	}
	want := expectFrom(reports)
	if diff := cmp.Diff(want, gotFrom(fams, want)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	if f := find(fams, "latent_nats_trigger_steps_total"); len(f.Samples) != 1 || f.Samples[0].Value != float64(len(reports)) {
		t.Errorf("steps_total: %v, want %d", f.Samples, len(reports))
	}
	snap := mon.Snapshot()
	if snap.Dials == 0 {
		t.Errorf("Snapshot.Dials = 0 after a failed dial")
	}
	for name, want := range map[string]uint64{
		"latent_nats_trigger_dials_total":                snap.Dials,
		"latent_nats_trigger_connections_replaced_total": snap.Replaced,
	} {
		if f := find(fams, name); len(f.Samples) != 1 || f.Samples[0].Value != float64(want) {
			t.Errorf("%s: samples %v, want one of value %d", name, f.Samples, want)
		}
	}

	last, ok := mon.LastStep()
	if !ok || last.Result != trigger.ResultFailed || last.Error != trigger.ClassDial {
		t.Fatalf("LastStep = %+v, %v: want a failed dial", last, ok)
	}
	info := find(fams, famInfo)
	wantLabels := []label{
		{"binding", strconv.Itoa(last.Binding)}, {"result", "failed"}, {"outcome", ""}, {"action", ""},
		{"ack", "none"}, {"class", "dial"}, {"resource", ""}, {"dial_failure", "other"},
	}
	if len(info.Samples) != 1 {
		t.Fatalf("%d info samples", len(info.Samples))
	}
	if diff := cmp.Diff(wantLabels, info.Samples[0].Labels); diff != "" {
		t.Errorf("last step labels (-want +got):\n%s", diff)
	}
	if f := find(fams, "latent_nats_trigger_last_step_number"); len(f.Samples) != 1 || f.Samples[0].Value != float64(last.Step) {
		t.Errorf("last_step_number: %v, want %d", f.Samples, last.Step)
	}
	if f := find(fams, "latent_nats_trigger_last_step_route_generation"); len(f.Samples) != 1 || f.Samples[0].Value != 3 {
		t.Errorf("last_step_route_generation: %v, want 3", f.Samples)
	}
}

// TestPoolRefusalScrape: a pool limit that refuses the ingress request is
// counted under its resource.
func TestPoolRefusalScrape(t *testing.T) {
	lim := trigger.DefaultPoolLimits()
	lim.MaxBytes = installedBytes(t)
	lim.MaxMetadataBytes = lim.MaxBytes
	trig, mon := install(t, lim)
	r := step(t, trig, &host{})
	if r.Error != trigger.ClassPoolExhausted || r.Resource != trigger.ResourceBytes {
		t.Fatalf("step = %+v: want a refusal of bytes", r)
	}
	var b bytes.Buffer
	if err := metrics.Write(&b, mon); err != nil {
		t.Fatal(err)
	}
	fams, err := parseExposition(b.String())
	if err != nil {
		t.Fatal(err)
	}
	want := expectFrom([]trigger.StepReport{r})
	if diff := cmp.Diff(want, gotFrom(fams, want)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

// TestNoIdentifiers: no name of the configuration, the logical ID or the
// credential reaches the output, whatever the steps did.
func TestNoIdentifiers(t *testing.T) {
	trig, mon := install(t, trigger.DefaultPoolLimits())
	runKinds(t, trig)
	var w bytes.Buffer
	if err := metrics.Write(&w, mon); err != nil {
		t.Fatal(err)
	}
	s := mon.Snapshot()
	last, ok := mon.LastStep()
	outputs := map[string]string{
		"handler": scrape(metrics.Handler(mon), http.MethodGet).Body.String(),
		"write":   w.String(),
		"append":  string(metrics.Append(nil, s, last, ok)),
	}
	if s.LogicalID != fxLogicalID {
		t.Fatalf("snapshot logical ID %q, want %q", s.LogicalID, fxLogicalID)
	}
	for name, out := range outputs {
		t.Run(name, func(t *testing.T) {
			if _, err := parseExposition(out); err != nil {
				t.Fatal(err)
			}
			lower := strings.ToLower(out)
			for _, id := range fxStrings() {
				if strings.Contains(lower, strings.ToLower(id)) {
					t.Errorf("output holds %q", id)
				}
			}
		})
	}
}

// TestHandlerMethods: GET and HEAD serve the exposition, every other
// method is refused with 405 and an Allow header.
func TestHandlerMethods(t *testing.T) {
	trig, mon := install(t, trigger.DefaultPoolLimits())
	runKinds(t, trig)
	h := metrics.Handler(mon)
	var w bytes.Buffer
	if err := metrics.Write(&w, mon); err != nil {
		t.Fatal(err)
	}
	body := w.String()
	type answer struct {
		Code          int
		ContentType   string
		ContentLength string
		Allow         string
		Body          string
	}
	tests := []struct {
		method string
		want   answer
	}{
		{http.MethodGet, answer{200, metrics.ContentType, strconv.Itoa(len(body)), "", body}},
		{http.MethodHead, answer{200, metrics.ContentType, strconv.Itoa(len(body)), "", ""}},
		{http.MethodPost, answer{405, "text/plain; charset=utf-8", "", "GET, HEAD", "metrics: method not allowed\n"}},
		{http.MethodPut, answer{405, "text/plain; charset=utf-8", "", "GET, HEAD", "metrics: method not allowed\n"}},
		{http.MethodDelete, answer{405, "text/plain; charset=utf-8", "", "GET, HEAD", "metrics: method not allowed\n"}},
		{http.MethodPatch, answer{405, "text/plain; charset=utf-8", "", "GET, HEAD", "metrics: method not allowed\n"}},
		{http.MethodOptions, answer{405, "text/plain; charset=utf-8", "", "GET, HEAD", "metrics: method not allowed\n"}},
		{http.MethodTrace, answer{405, "text/plain; charset=utf-8", "", "GET, HEAD", "metrics: method not allowed\n"}},
		{http.MethodConnect, answer{405, "text/plain; charset=utf-8", "", "GET, HEAD", "metrics: method not allowed\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			rec := scrape(h, tc.method)
			got := answer{
				Code:          rec.Code,
				ContentType:   rec.Header().Get("Content-Type"),
				ContentLength: rec.Header().Get("Content-Length"),
				Allow:         rec.Header().Get("Allow"),
				Body:          rec.Body.String(),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.method, diff)
			}
		})
	}
}

// TestHandlerOverHTTP serves the handler on a loopback server: a GET
// carries the exposition, a HEAD its length and no body.
func TestHandlerOverHTTP(t *testing.T) {
	trig, mon := install(t, trigger.DefaultPoolLimits())
	runKinds(t, trig)
	srv := httptest.NewServer(metrics.Handler(mon))
	defer srv.Close()
	c := srv.Client()

	get, err := c.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(get.Body)
	get.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if get.StatusCode != http.StatusOK || get.Header.Get("Content-Type") != metrics.ContentType {
		t.Errorf("GET: %d %q", get.StatusCode, get.Header.Get("Content-Type"))
	}
	if _, err := parseExposition(string(body)); err != nil {
		t.Errorf("GET body: %v", err)
	}

	head, err := c.Head(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(head.Body)
	head.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if head.StatusCode != http.StatusOK || head.ContentLength != int64(len(body)) || len(rest) != 0 {
		t.Errorf("HEAD: %d, length %d (want %d), %d body bytes", head.StatusCode, head.ContentLength, len(body), len(rest))
	}

	post, err := c.Post(srv.URL+"/metrics", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed || post.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", post.StatusCode, post.Header.Get("Allow"))
	}
}

// TestConcurrentScrapes scrapes while the owner steps; every scrape is a
// valid exposition (run with -race).
func TestConcurrentScrapes(t *testing.T) {
	trig, mon := install(t, trigger.DefaultPoolLimits())
	h := metrics.Handler(mon)
	const steps, scrapers, scrapes = 200, 4, 25
	var wg sync.WaitGroup
	wg.Go(func() {
		hst := &host{eligible: trigger.ErrNotEligible}
		for range steps {
			if _, err := trig.Step(t.Context(), hst); err != nil {
				t.Error(err)
				return
			}
		}
	})
	errs := make(chan error, scrapers*scrapes)
	for range scrapers {
		wg.Go(func() {
			for range scrapes {
				if _, err := parseExposition(scrape(h, http.MethodGet).Body.String()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	fams, err := parseExposition(scrape(h, http.MethodGet).Body.String())
	if err != nil {
		t.Fatal(err)
	}
	if f := find(fams, "latent_nats_trigger_steps_total"); len(f.Samples) != 1 || f.Samples[0].Value != steps {
		t.Errorf("steps_total: %v, want %d", f.Samples, steps)
	}
}

// errWrite is the failing writer's error.
var errWrite = errors.New("metrics test: write failed")

// failingWriter refuses every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

// TestWriteErrors: a nil monitor and a failing writer.
func TestWriteErrors(t *testing.T) {
	_, mon := install(t, trigger.DefaultPoolLimits())
	tests := []struct {
		name string
		w    io.Writer
		m    *trigger.Monitor
		want error
	}{
		{"nil monitor", io.Discard, nil, metrics.ErrNoMonitor},
		{"failing writer", failingWriter{}, mon, errWrite},
		{"ok", io.Discard, mon, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := metrics.Write(tc.w, tc.m); !errors.Is(err, tc.want) {
				t.Errorf("Write = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestHandlerNilMonitor: Handler refuses a nil monitor at construction.
func TestHandlerNilMonitor(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, metrics.ErrNoMonitor) {
			t.Errorf("recovered %v, want ErrNoMonitor", err)
		}
	}()
	metrics.Handler(nil)
	t.Error("Handler(nil) returned")
}
