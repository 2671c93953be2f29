package credential

import (
	"regexp"
	"time"

	"github.com/nats-io/jwt/v2"
)

// credsBlock matches one armoured block of a decorated .creds file: a line
// of at least three dashes, the token, another such line. It is the
// expression jwt/v2 and nkeys use (jwt/v2 creds_utils.go userConfigRE), so a
// file nats.go accepts is accepted here when it has exactly two blocks.
var credsBlock = regexp.MustCompile(`\s*(?:(?:[-]{3,}.*[-]{3,}\r?\n)([\w\-.=]+)(?:\r?\n[-]{3,}.*[-]{3,}(\r?\n|\z)))`)

// ParseCreds returns a KindCreds Secret for a decorated .creds file as
// jwt.FormatUserConfig writes it: exactly two armoured blocks, the first a
// user JWT (decoded and its signature verified by jwt/v2), the second the
// user nkey seed whose public key is the JWT's subject. A file over
// MaxCredsBytes is refused before it is scanned. The seed is copied; the
// caller keeps ownership of b and should zero it.
func ParseCreds(b []byte) (*Secret, error) {
	if len(b) > MaxCredsBytes {
		return nil, ErrTooLarge
	}
	blocks := credsBlock.FindAllSubmatchIndex(b, 3)
	if len(blocks) != 2 {
		return nil, ErrMalformed
	}
	token := string(b[blocks[0][2]:blocks[0][3]])
	claims, err := jwt.Decode(token)
	if err != nil {
		return nil, ErrMalformed
	}
	user, ok := claims.(*jwt.UserClaims)
	if !ok {
		return nil, ErrNotUserJWT
	}
	seed, public, err := userSeed(b[blocks[1][2]:blocks[1][3]])
	if err != nil {
		return nil, err
	}
	if public != user.Subject {
		clear(seed)
		return nil, ErrMismatch
	}
	var expires time.Time
	if user.Expires > 0 {
		expires = time.Unix(user.Expires, 0).UTC()
	}
	return newSecret(KindCreds, &material{
		seed:    seed,
		jwt:     []byte(token),
		public:  public,
		expires: expires,
	}), nil
}
