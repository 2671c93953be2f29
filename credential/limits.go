package credential

// Size bounds, checked before anything is decoded or copied.
const (
	// MaxCredsBytes bounds a whole .creds file, armour and banners included.
	MaxCredsBytes = 64 << 10

	// maxSecretLen bounds a user name, a password and a token, in bytes.
	// A default broker refuses a CONNECT line over 4 KiB anyway.
	maxSecretLen = 4096

	// MaxCertChainBytes bounds the PEM of a client certificate chain, the
	// leaf and its intermediates, armour included.
	MaxCertChainBytes = 64 << 10

	// maxCertChainLen bounds the certificates of a client certificate
	// chain, the leaf included.
	maxCertChainLen = 8

	// MaxClientKeyBytes bounds the PEM of a client certificate's private
	// key, armour included: an RSA 8192-bit PKCS #1 key takes about 6.4 KiB.
	MaxClientKeyBytes = 16 << 10

	// MaxNonceLen bounds the nonce Authenticate signs. nats-server 2.14.6
	// sends 15 ASCII characters (11 random bytes, base64 RawURL).
	MaxNonceLen = 256

	// userSeedLen is the length of an encoded user seed: base32 without
	// padding of 2 prefix bytes, a 32-byte ed25519 seed and a 2-byte CRC.
	userSeedLen = 58
)
