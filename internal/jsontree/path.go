package jsontree

import "strconv"

// MaxPathKeyBytes bounds the bytes of one key read from input that Key
// writes into a path; a longer key is cut to this many bytes before it is
// quoted.
const MaxPathKeyBytes = 64

// Field joins an object key to a path as written: "path.key", or "key" at
// the document (path ""). It neither quotes nor cuts: it is meant for keys a
// schema names; Key is for keys read from input.
func Field(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index joins an array index to a path: "path[i]".
func Index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// Key joins a key read from input to a path: a plain key (1 to
// MaxPathKeyBytes bytes of a-z, 0-9 and '_') as Field does, any other
// cut to MaxPathKeyBytes bytes and quoted as `path["key"]` in printable
// ASCII, so a path never carries control characters or unbounded input.
func Key(path, key string) string {
	plain := key != "" && len(key) <= MaxPathKeyBytes
	for i := 0; plain && i < len(key); i++ {
		c := key[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if plain {
		return Field(path, key)
	}
	if len(key) > MaxPathKeyBytes {
		key = key[:MaxPathKeyBytes]
	}
	return path + "[" + strconv.QuoteToASCII(key) + "]"
}
