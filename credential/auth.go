package credential

// Auth is what a CONNECT carries for one secret: JWT and Sig for KindCreds,
// NKey and Sig for KindNKey, User and Pass for KindUserPassword, Token for
// KindToken; the other fields are empty. Sig is the base64 RawURL ed25519
// signature of the nonce (64 bytes, 86 characters).
//
// Auth redacts itself like Secret: every fmt verb shows only which fields
// are set, slog sees the same text, and marshalling fails. Callers copy the
// fields into the CONNECT they write and drop the Auth.
type Auth struct {
	JWT   string
	NKey  string
	Sig   string
	User  string
	Pass  string
	Token string
}
