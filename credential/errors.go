package credential

import "errors"

// Sentinels. Messages never contain secret material, file contents or the
// text of an underlying library error.
var (
	// ErrMalformed reports input that is not a credential of the expected
	// shape: a .creds file without exactly two armoured blocks, a JWT that
	// does not decode or verify, a seed that does not decode, an empty or
	// control-character user, password or token.
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

	// ErrNotMarshalable is returned by every marshalling method of Secret
	// and Auth: secrets are supplied separately, never encoded.
	ErrNotMarshalable = errors.New("credential: secrets are not marshalled")
)
