package fakeserver_test

import (
	"errors"
	"regexp"
	"slices"
	"testing"

	"github.com/latent-systems/latent-nats/internal/fakeserver"
)

func TestConfigValidation(t *testing.T) {
	hs := fakeserver.Handshake()
	steps := func(n int) []fakeserver.Step { return slices.Repeat([]fakeserver.Step{fakeserver.SendString("x")}, n) }
	for _, tc := range []struct {
		name string
		cfg  fakeserver.Config
		ok   bool
	}{
		{"zero", fakeserver.Config{}, true},
		{"MaxConns at limit", fakeserver.Config{MaxConns: fakeserver.MaxConns}, true},
		{"MaxConns past limit", fakeserver.Config{MaxConns: fakeserver.MaxConns + 1}, false},
		{"MaxConns negative", fakeserver.Config{MaxConns: -1}, false},
		{"MaxRecord at limit", fakeserver.Config{MaxRecord: fakeserver.MaxRecordLimit}, true},
		{"MaxRecord past limit", fakeserver.Config{MaxRecord: fakeserver.MaxRecordLimit + 1}, false},
		{"MaxLine at limit", fakeserver.Config{MaxLine: fakeserver.MaxLineLimit}, true},
		{"MaxLine past limit", fakeserver.Config{MaxLine: fakeserver.MaxLineLimit + 1}, false},
		{"MaxSteps", fakeserver.Config{Script: steps(fakeserver.MaxSteps)}, true},
		{"MaxSteps+1", fakeserver.Config{Script: steps(fakeserver.MaxSteps + 1)}, false},
		{"ip server name", fakeserver.Config{ServerName: "127.0.0.1"}, false},
		{"second handshake", fakeserver.Config{Script: []fakeserver.Step{hs, hs}}, false},
		{"handshake then cut", fakeserver.Config{Script: []fakeserver.Step{hs, fakeserver.HandshakeCut(1)}}, false},
		{"negative cut", fakeserver.Config{Script: []fakeserver.Step{fakeserver.HandshakeCut(-1)}}, false},
		{"client hello after handshake", fakeserver.Config{Script: []fakeserver.Step{hs, fakeserver.ReadClientHello()}}, false},
		{"step after hangup", fakeserver.Config{Script: []fakeserver.Step{fakeserver.Hangup(), hs}}, false},
		{"step after stall", fakeserver.Config{Script: []fakeserver.Step{fakeserver.Stall(), fakeserver.WaitClose()}}, false},
		{"step after cut", fakeserver.Config{Script: []fakeserver.Step{fakeserver.HandshakeCut(3), fakeserver.Hangup()}}, false},
		{"nil regexp", fakeserver.Config{Script: []fakeserver.Step{fakeserver.ExpectMatch(nil)}}, false},
		{"zero step", fakeserver.Config{Script: []fakeserver.Step{{}}}, false},
		{"alert then wait", fakeserver.Config{Script: []fakeserver.Step{fakeserver.ReadClientHello(), fakeserver.SendAlert(40), fakeserver.WaitClose()}}, true},
		{"full greeting", fakeserver.Config{Script: append(fakeserver.Greeting(`{}`), fakeserver.ExpectMatch(regexp.MustCompile(`^SUB `)), fakeserver.Stall())}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := fakeserver.Start(t.Context(), tc.cfg)
			if s != nil {
				_ = s.Close()
			}
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, fakeserver.ErrBadConfig)) {
				t.Errorf("Start = %v, want ok %v (or ErrBadConfig)", err, tc.ok)
			}
		})
	}
}

func TestStepKindString(t *testing.T) {
	for _, tc := range []struct {
		kind fakeserver.StepKind
		want string
	}{
		{fakeserver.StepSend, "send"},
		{fakeserver.StepSendRaw, "send-raw"},
		{fakeserver.StepExpectPrefix, "expect-prefix"},
		{fakeserver.StepExpectMatch, "expect-match"},
		{fakeserver.StepHandshake, "handshake"},
		{fakeserver.StepHandshakeCut, "handshake-cut"},
		{fakeserver.StepReadClientHello, "read-client-hello"},
		{fakeserver.StepSendAlert, "send-alert"},
		{fakeserver.StepWaitClose, "wait-close"},
		{fakeserver.StepStall, "stall"},
		{fakeserver.StepHangup, "hangup"},
		{0, "StepKind(0)"},
		{fakeserver.StepHangup + 1, "StepKind(12)"},
	} {
		if got := tc.kind.String(); got != tc.want {
			t.Errorf("StepKind(%d).String() = %q, want %q", int(tc.kind), got, tc.want)
		}
	}
}

func TestHelpers(t *testing.T) {
	if got := string(fakeserver.Info(`{}`)); got != "INFO {} \r\n" {
		t.Errorf("Info = %q", got)
	}
	if got := fakeserver.AlertRecord(40); !slices.Equal(got, []byte{21, 3, 3, 0, 2, 2, 40}) {
		t.Errorf("AlertRecord(40) = %v", got)
	}
	kinds := func(steps []fakeserver.Step) []fakeserver.StepKind {
		var ks []fakeserver.StepKind
		for _, s := range steps {
			ks = append(ks, s.Kind())
		}
		return ks
	}
	want := []fakeserver.StepKind{fakeserver.StepHandshake, fakeserver.StepSend, fakeserver.StepExpectPrefix, fakeserver.StepExpectPrefix, fakeserver.StepSend}
	if got := kinds(fakeserver.Greeting(`{}`)); !slices.Equal(got, want) {
		t.Errorf("Greeting kinds %v, want %v", got, want)
	}
}
