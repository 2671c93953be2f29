package jsontree

import (
	"strconv"
	"unicode/utf8"
)

// MaxPathKeyBytes bounds the bytes of one key read from input that Key
// writes into a path; a longer key is cut to at most this many bytes
// (Cut) before it is quoted.
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
// cut to at most MaxPathKeyBytes bytes (Cut) and quoted as `path["key"]`
// in printable ASCII, so a path never carries control characters or
// unbounded input.
func Key(path, key string) string {
	plain := key != "" && len(key) <= MaxPathKeyBytes
	for i := 0; plain && i < len(key); i++ {
		c := key[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if plain {
		return Field(path, key)
	}
	return path + "[" + strconv.QuoteToASCII(Cut(key, MaxPathKeyBytes)) + "]"
}

// Cut returns s cut to at most n bytes: at n, or before the valid rune
// that the cut at n would split (an invalid byte is cut like any other).
// The one rule for how much of a string from the input a path or a
// message quotes.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if !utf8.RuneStart(s[i-1]) {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i-1:])
		if (r != utf8.RuneError || size > 1) && i-1+size > n {
			return s[:i-1]
		}
		break
	}
	return s[:n]
}
