package wittest_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/latent-systems/latent-nats/internal/wittest"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestDrawsAreValid: every type drawn validates, every value drawn is one
// of it by refhost's encoder, and a big enum appears at most once a Gen.
func TestDrawsAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := wittest.Gen{Big: true, CanonicalNaN: rapid.Bool().Draw(t, "canonical")}
		typ := g.Type(t, 4)
		sig, err := refhost.NewSignature(typ)
		if err != nil {
			t.Fatalf("NewSignature(%v): %v", typ, err)
		}
		v := g.Value(t, &typ)
		if _, err := sig.Append(nil, []any{v}); err != nil {
			t.Fatalf("Append(%v of %v): %v", v, typ, err)
		}
	})
}
