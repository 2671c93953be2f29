package credential

import "strconv"

// Kind is the form of a tenant's broker secret.
type Kind uint8

// Credential kinds.
const (
	// KindCreds is a user JWT with its nkey seed (a .creds file): CONNECT
	// carries the JWT and a signature of the nonce.
	KindCreds Kind = iota + 1
	// KindNKey is a plain user nkey seed: CONNECT carries the public key and
	// a signature of the nonce.
	KindNKey
	// KindUserPassword is a user name and password.
	KindUserPassword
	// KindToken is an authentication token.
	KindToken
	// KindCertificate is a TLS client certificate chain and its private
	// key alone (FromClientCertificate): the broker maps the certificate to
	// a user (verify_and_map) and CONNECT carries no credential field.
	KindCertificate
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindCreds:
		return "creds"
	case KindNKey:
		return "nkey"
	case KindUserPassword:
		return "user_password"
	case KindToken:
		return "token"
	case KindCertificate:
		return "certificate"
	default:
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
}
