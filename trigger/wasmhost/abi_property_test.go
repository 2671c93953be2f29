package wasmhost

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero/api"
	"pgregory.net/rapid"

	"github.com/latent-systems/latent-nats/internal/wittest"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// drawType draws one valid type of at most depth levels from the shared
// generator (internal/wittest), enums and variants of 257 cases included.
func drawType(t *rapid.T, depth int) refhost.Type {
	g := wittest.Gen{Big: true}
	return g.Type(t, depth)
}

// drawValue draws a Go value of typ; NaNs are drawn as the canonical NaN
// only, the one lifting produces.
func drawValue(t *rapid.T, typ *refhost.Type) any {
	g := wittest.Gen{CanonicalNaN: true}
	return g.Value(t, typ)
}

// TestCanonicalNaNShared: the generator's NaNs are the ones lifting makes.
func TestCanonicalNaNShared(t *testing.T) {
	if wittest.NaN32 != canonicalNaN32 || wittest.NaN64 != canonicalNaN64 {
		t.Errorf("wittest's NaNs %#x, %#x; lifting's %#x, %#x", wittest.NaN32, wittest.NaN64, canonicalNaN32, canonicalNaN64)
	}
}

// drawGuest draws a fake guest whose memory is small (so it moves on
// every realloc) and whose next block starts at a drawn offset.
func drawGuest(t *rapid.T) *fakeGuest {
	g := newFakeGuest(rapid.IntRange(0, 64).Draw(t, "memory"))
	g.next = uint32(rapid.IntRange(0, 13).Draw(t, "start"))
	return g
}

// checkWellTyped requires v to be a value of typ by refhost's encoder.
func checkWellTyped(t *rapid.T, typ refhost.Type, v any) {
	sig, err := refhost.NewSignature(typ)
	if err != nil {
		t.Fatalf("NewSignature(%v): %v", typ, err)
	}
	if _, err := sig.Append(nil, []any{v}); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

// TestPropertyRoundTrip: for random valid types and values, every way in
// and out of the guest gives the value back, floats compared by bits.
func TestPropertyRoundTrip(t *testing.T) {
	t.Run("drawn values are well-typed", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			checkWellTyped(t, typ, drawValue(t, &typ))
		})
	})
	t.Run("store then load", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			v := drawValue(t, &typ)
			g := drawGuest(t)
			l := lowerer{g: g, mem: g.memory()}
			lay := layoutOf(&typ)
			ptr, err := l.alloc(lay.align, lay.size)
			if err != nil {
				t.Fatalf("alloc: %v", err)
			}
			if err := l.store(uint64(ptr), &typ, v); err != nil {
				t.Fatalf("store: %v", err)
			}
			lf := lifter{mem: g.memory()}
			got, err := lf.load(uint64(ptr), &typ)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if diff := cmp.Diff(v, got, bitsOpts()); diff != "" {
				t.Fatalf("load(store(v)) (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("lower_flat then lift_flat", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			v := drawValue(t, &typ)
			g := drawGuest(t)
			l := lowerer{g: g, mem: g.memory()}
			flat, err := l.lowerFlat(nil, &typ, v)
			if err != nil {
				t.Fatalf("lowerFlat: %v", err)
			}
			types := flatten(&typ, nil)
			if len(flat) != len(types) || len(flat) != flatCount(&typ) {
				t.Fatalf("%d flat values, %d flat types, flatCount %d", len(flat), len(types), flatCount(&typ))
			}
			for i, ft := range types {
				if (ft == api.ValueTypeI32 || ft == api.ValueTypeF32) && flat[i] > math.MaxUint32 {
					t.Fatalf("flat value %d (%#x) does not fit its %s", i, flat[i], api.ValueTypeName(ft))
				}
			}
			lf := lifter{mem: g.memory()}
			it := flatIter{vals: flat, types: types}
			got, err := lf.liftFlat(&it, &typ)
			if err != nil {
				t.Fatalf("liftFlat: %v", err)
			}
			if it.pos != len(flat) {
				t.Fatalf("liftFlat read %d of %d values", it.pos, len(flat))
			}
			if diff := cmp.Diff(v, got, bitsOpts()); diff != "" {
				t.Fatalf("liftFlat(lowerFlat(v)) (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("lowerArgs then lift", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			params := make([]refhost.Type, rapid.IntRange(0, 20).Draw(t, "params"))
			args := make([]any, len(params))
			for i := range params {
				params[i] = drawType(t, 3)
				args[i] = drawValue(t, &params[i])
			}
			g := drawGuest(t)
			flat, err := lowerArgs(g, params, args)
			if err != nil {
				t.Fatalf("lowerArgs: %v", err)
			}
			cparams, _ := coreSignature(params, nil)
			if len(flat) != len(cparams) {
				t.Fatalf("%d flat values for a core signature of %d", len(flat), len(cparams))
			}
			// Read back as the guest would: the argument tuple, flat or
			// behind the pointer.
			tuple := refhost.Type{Kind: refhost.KindTuple, Elems: params}
			var got any
			if flatCount(&tuple) > maxFlatParams {
				got, err = liftResult(g.memory(), &tuple, flat)
			} else {
				lf := lifter{mem: g.memory()}
				got, err = lf.liftFlat(&flatIter{vals: flat, types: cparams}, &tuple)
			}
			if err != nil {
				t.Fatalf("lift: %v", err)
			}
			if diff := cmp.Diff(args, got, bitsOpts()); diff != "" {
				t.Fatalf("lift(lowerArgs(args)) (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("liftResult", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			v := drawValue(t, &typ)
			g := drawGuest(t)
			l := lowerer{g: g, mem: g.memory()}
			var flat []uint64
			if flatCount(&typ) > maxFlatResults {
				lay := layoutOf(&typ)
				ptr, err := l.alloc(lay.align, lay.size)
				if err != nil {
					t.Fatalf("alloc: %v", err)
				}
				if err := l.store(uint64(ptr), &typ, v); err != nil {
					t.Fatalf("store: %v", err)
				}
				flat = []uint64{uint64(ptr)}
			} else {
				var err error
				if flat, err = l.lowerFlat(nil, &typ, v); err != nil {
					t.Fatalf("lowerFlat: %v", err)
				}
			}
			got, err := liftResult(g.memory(), &typ, flat)
			if err != nil {
				t.Fatalf("liftResult: %v", err)
			}
			if diff := cmp.Diff(v, got, bitsOpts()); diff != "" {
				t.Fatalf("liftResult (-want +got):\n%s", diff)
			}
		})
	})
}
