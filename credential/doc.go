// Package credential owns a tenant's broker secret: a .creds file (user JWT
// plus its nkey seed), a plain user nkey seed, a user and password, or a
// token, each optionally with a TLS client certificate and its private key,
// or that certificate alone. It turns that secret into the authentication
// fields a CONNECT carries, signing the server's nonce when the kind needs
// it, and into the client certificate a TLS handshake presents, and it
// refuses to reveal the secret anywhere else: a Secret and an Auth redact themselves
// in every fmt verb and in slog, and refuse to be marshalled.
//
// The package knows no wire detail. It does not dial, does not build CONNECT
// JSON and does not read files: callers hand it bytes and take back an Auth.
//
// Contents:
//
//   - Kinds: Kind, the five credential kinds; ParseCreds, the decorated
//     .creds format.
//   - Secret: its constructors, Authenticate, CheckCurrent, Wipe; Auth, the
//     fields a CONNECT carries; the redaction of both.
//   - Client certificates (clientcert.go): FromClientCertificate,
//     AddClientCertificate, ClientCertificate for one TLS handshake.
//   - The size bounds of every input; sentinels.
//
// Wiping: the Secret keeps its secret bytes in buffers it owns and zeroes
// them in Wipe. Signing decodes the seed into a private key only for the
// duration of one Authenticate call and zeroes both right after; a client
// certificate's private key is kept as DER bytes, decoded for one TLS
// handshake only (ClientCertificate) and zeroed after it. Strings
// cannot be wiped in Go: the strings an Auth carries, and the strings passed
// to FromUserPassword and FromToken, live until the garbage collector reuses
// their memory; callers that hold secret []byte should zero them after the
// constructor returns (constructors copy what they keep).
//
// Printing: fmt calls a type's Format method only for values it can reach
// through exported fields, and not at all for %p on a non-pointer. A Secret
// keeps its material behind a pointer to a pointer, which fmt never
// expands, so even those raw prints show an address, never a key. An Auth's
// fields are exported strings, fixed by the CONNECT contract: keep an Auth
// in a local variable for the few lines that write CONNECT, never in a
// struct that is printed.
package credential
