package credential

import "errors"

// Sentinels. Messages never contain secret material, file contents or the
// text of an underlying library error.
var (
	// ErrMalformed reports input that is not a credential of the expected
	// shape: a .creds file without exactly two armoured blocks, a JWT that
	// does not decode or verify, a seed that does not decode, an empty or
	// control-character user, password or token, a client certificate
	// chain or key that is not PEM of the expected blocks (an encrypted key
	// included) or does not parse.
	ErrMalformed = errors.New("credential: malformed credential")

	// ErrTooLarge reports input over its size bound (see limits.go).
	ErrTooLarge = errors.New("credential: credential too large")

	// ErrNotUserJWT reports a JWT that decodes but does not carry user claims.
	ErrNotUserJWT = errors.New("credential: jwt does not carry user claims")

	// ErrNotUserSeed reports an nkey seed of another type (operator,
	// account, server, cluster, curve).
	ErrNotUserSeed = errors.New("credential: nkey seed is not a user seed")

	// ErrMismatch reports a .creds file whose seed does not belong to the
	// JWT's subject.
	ErrMismatch = errors.New("credential: nkey seed does not match the jwt subject")

	// ErrExpired reports a JWT whose expiry has passed (CheckCurrent).
	ErrExpired = errors.New("credential: jwt expired")

	// ErrWiped reports use of a Secret after Wipe (or of a zero Secret).
	ErrWiped = errors.New("credential: secret wiped")

	// ErrNonceRequired reports Authenticate without a nonce for a kind that
	// signs one (KindCreds, KindNKey).
	ErrNonceRequired = errors.New("credential: nonce required")

	// ErrMalformedNonce reports a nonce longer than MaxNonceLen or with a
	// byte outside printable ASCII.
	ErrMalformedNonce = errors.New("credential: malformed nonce")

	// ErrCertificateKeyMismatch reports a client private key whose public
	// key is not the client certificate's.
	ErrCertificateKeyMismatch = errors.New("credential: private key does not match the client certificate")

	// ErrCertificateUsage reports a client certificate whose extended key
	// usages exclude client authentication: a TLS server refuses it.
	ErrCertificateUsage = errors.New("credential: certificate is not for client authentication")

	// ErrCertificateExpired reports a client certificate whose NotAfter has
	// passed (CheckCurrent).
	ErrCertificateExpired = errors.New("credential: client certificate expired")

	// ErrCertificateNotYetValid reports a client certificate whose
	// NotBefore is still ahead (CheckCurrent).
	ErrCertificateNotYetValid = errors.New("credential: client certificate not yet valid")

	// ErrCertificateSet reports AddClientCertificate on a Secret that
	// already carries a client certificate.
	ErrCertificateSet = errors.New("credential: secret already carries a client certificate")

	// ErrNotMarshalable is returned by every marshalling method of Secret
	// and Auth: secrets are supplied separately, never encoded.
	ErrNotMarshalable = errors.New("credential: secrets are not marshalled")
)
