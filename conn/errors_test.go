package conn

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/parser"
)

func TestClassifyErrText(t *testing.T) {
	tests := []struct {
		text string
		want ErrKind
	}{
		{"Authorization Violation", KindAuthorization},
		{"authorization violation", KindAuthorization},
		{"User Authentication Expired", KindAuthenticationExpired},
		{"Account Authentication Expired", KindAuthenticationExpired},
		{"User Authentication Revoked", KindAuthenticationRevoked},
		{"Authentication Timeout", KindAuthenticationTimeout},
		{`Permissions Violation for Publish to "secret.subject"`, KindPermission},
		{`Permissions Violation for Subscription to "_INBOX.x.*"`, KindPermission},
		{`Permissions Violation for Publish with Reply of "_INBOX.x.1"`, KindPermission},
		{"Maximum Payload Violation", KindMaxPayload},
		{"maximum connections exceeded", KindMaxConnections},
		{"maximum account active connections exceeded", KindMaxConnections},
		{"maximum subscriptions exceeded", KindMaxSubscriptions},
		{"Stale Connection", KindStaleConnection},
		{"Unknown Protocol Operation", KindProtocol},
		{"maximum control line exceeded", KindProtocol},
		{"invalid client protocol", KindProtocol},
		{"no responders requires headers support", KindProtocol},
		{"Invalid Subject", KindProtocol},
		{"Invalid Publish Subject", KindProtocol},
		{"  Stale Connection ", KindStaleConnection},
		{"", KindOther},
		{"Permissions", KindOther},
		{"Failed Account Registration", KindOther},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, classify([]byte(tt.text))); diff != "" {
				t.Errorf("kind (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrKindStringAndFatal(t *testing.T) {
	type row struct {
		Name  string
		Fatal bool
	}
	want := map[ErrKind]row{
		KindAuthorization:         {"authorization violation", true},
		KindAuthenticationExpired: {"authentication expired", true},
		KindAuthenticationRevoked: {"authentication revoked", true},
		KindAuthenticationTimeout: {"authentication timeout", true},
		KindPermission:            {"permission violation", false},
		KindMaxPayload:            {"maximum payload violation", true},
		KindMaxConnections:        {"maximum connections exceeded", true},
		KindMaxSubscriptions:      {"maximum subscriptions exceeded", true},
		KindStaleConnection:       {"stale connection", true},
		KindProtocol:              {"protocol violation", true},
		KindOther:                 {"other", true},
		0:                         {"unknown", true},
		KindOther + 1:             {"unknown", true},
	}
	got := map[ErrKind]row{}
	for k := range want {
		got[k] = row{k.String(), k.Fatal()}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

func TestStepString(t *testing.T) {
	want := map[Step]string{
		StepDial: "dial", StepTLS: "tls", StepInfo: "info", StepAuthenticate: "authenticate",
		StepConnect: "connect", 0: "unknown", StepConnect + 1: "unknown",
	}
	got := map[Step]string{}
	for s := range want {
		got[s] = s.String()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// TestErrorMessages pins the messages: lowercase, prefixed once with the
// package name, and free of the text a server or TLS peer sent.
func TestErrorMessages(t *testing.T) {
	secretText := errors.New("x509: certificate is valid for evil.example, not broker.test")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"server error", &ServerError{Kind: KindPermission}, "conn: server error: permission violation"},
		{"handshake", &HandshakeError{Step: StepConnect, Err: &ServerError{Kind: KindAuthorization}},
			"conn: handshake failed at connect: server error: authorization violation"},
		{"handshake certificate", &HandshakeError{Step: StepTLS, Err: &tlsFailure{kind: ErrCertificate, err: secretText}},
			"conn: handshake failed at tls: server certificate not accepted"},
		{"handshake parser", &HandshakeError{Step: StepInfo, Err: parser.ErrLineTooLong},
			"conn: handshake failed at info: parser: control line too long"},
		{"closed deadline", &ClosedError{Err: context.DeadlineExceeded}, "conn: connection closed: context deadline exceeded"},
		{"closed foreign", &ClosedError{Err: ErrForeignFrame}, "conn: connection closed: foreign frame"},
		{"address", CheckAddress(netip.MustParseAddrPort("10.0.0.1:4222"), netip.Addr{}),
			"conn: address 10.0.0.1:4222 (private): non-public address not allowed"},
		{"address not ipv4", &AddressError{Addr: netip.MustParseAddrPort("[::1]:4222"), Err: ErrNotIPv4},
			"conn: address [::1]:4222: address is not ipv4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorChains(t *testing.T) {
	secretText := errors.New("x509 detail")
	tls := &HandshakeError{Step: StepTLS, Err: &tlsFailure{kind: ErrCertificate, err: fmt.Errorf("wrapped: %w", secretText)}}
	if !errors.Is(tls, ErrCertificate) || !errors.Is(tls, secretText) {
		t.Errorf("tls failure chain broken: %v", tls)
	}
	closed := &ClosedError{Err: &ServerError{Kind: KindStaleConnection}}
	var se *ServerError
	if !errors.Is(closed, ErrClosed) || !errors.As(closed, &se) || se.Kind != KindStaleConnection {
		t.Errorf("closed error chain broken: %v", closed)
	}
	if strings.Contains(tls.Error(), "x509") {
		t.Errorf("message leaks the wrapped text: %q", tls.Error())
	}
}
