package acksubject

import "crypto/sha256"

// base62 is the digit alphabet of the account hash, in the broker's order.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// AccountHash returns the 8-character token nats-server puts
// after the domain of a v2 subject for the named account: each of the first
// 8 bytes of SHA-256(account) taken modulo 62 as an index into
// 0-9, A-Z, a-z. The global account "$G" hashes to "szMpdrwD".
func AccountHash(account string) string {
	sum := sha256.Sum256([]byte(account))
	var out [accountHashLen]byte
	for i := range out {
		out[i] = base62[sum[i]%uint8(len(base62))]
	}
	return string(out[:])
}
