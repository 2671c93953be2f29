package conn

import (
	"errors"
	"net"
	"reflect"
)

// The TLS alerts (RFC 8446 §6.2) by which a server refuses a client
// certificate.
const (
	alertHandshakeFailure       = 40
	alertBadCertificate         = 42
	alertUnsupportedCertificate = 43
	alertCertificateRevoked     = 44
	alertCertificateExpired     = 45
	alertCertificateUnknown     = 46
	alertUnknownCA              = 48
	alertAccessDenied           = 49
	alertCertificateRequired    = 116
)

// remoteAlert returns the TLS alert the peer sent, as crypto/tls reports
// one: a *net.OpError whose Op is "remote error" around the alert, a
// uint8 of an unexported type (so its value is read by reflection).
func remoteAlert(err error) (uint8, bool) {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" || oe.Err == nil {
		return 0, false
	}
	v := reflect.ValueOf(oe.Err)
	if v.Kind() != reflect.Uint8 {
		return 0, false
	}
	return uint8(v.Uint()), true
}

// certRefused reports whether err is the server's TLS alert refusing the
// client certificate it asked for: an alert about a certificate, or, when
// none was presented, the handshake_failure by which a TLS 1.2 server
// says one is required.
func (h *handshake) certRefused(err error) bool {
	if !h.certAsked {
		return false
	}
	a, ok := remoteAlert(err)
	if !ok {
		return false
	}
	switch a {
	case alertHandshakeFailure:
		return h.certNone
	case alertBadCertificate, alertUnsupportedCertificate, alertCertificateRevoked,
		alertCertificateExpired, alertCertificateUnknown, alertUnknownCA,
		alertAccessDenied, alertCertificateRequired:
		return true
	}
	return false
}
