package trigger

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"pgregory.net/rapid"
)

// genConfig generates valid configurations. roots are the PEM bundles a
// destination may use.
func genConfig(roots []string) *rapid.Generator[Config] {
	return rapid.Custom(func(t *rapid.T) Config {
		nt := rapid.IntRange(minTenants, MaxTenants).Draw(t, "tenants")
		ids := rapid.SliceOfNDistinct(rapid.StringMatching(`[A-Za-z0-9._:-]{1,16}`), nt, nt, rapid.ID).Draw(t, "tenant ids")
		c := Config{
			Profile:             ProfileName,
			PollIntervalMS:      rapid.IntRange(MinPollIntervalMS, maxPollIntervalMS).Draw(t, "poll"),
			MaxControlLineBytes: rapid.IntRange(minControlLineBytes, maxControlLineBytes).Draw(t, "control line"),
			MaxHeaderBytes:      rapid.IntRange(minHeaderBytes, maxHeaderBytes).Draw(t, "header"),
		}
		for i := range nt {
			c.Tenants = append(c.Tenants, Tenant{
				ID:          ids[i],
				ProviderID:  rapid.StringMatching(`[a-z0-9-]{1,12}`).Draw(t, "provider"),
				Destination: genDestination(roots).Draw(t, "destination"),
			})
		}
		nb := nt + rapid.IntRange(0, 12).Draw(t, "extra bindings")
		for i := range nb {
			ti := i
			if i >= nt {
				ti = rapid.IntRange(0, nt-1).Draw(t, "tenant")
			}
			timeout := rapid.IntRange(minOperationTimeoutMS, maxOperationTimeoutMS).Draw(t, "timeout")
			name := rapid.StringMatching(`[!-~]{1,24}`)
			b := Binding{
				ID:                 fmt.Sprintf("%s-%d", rapid.StringMatching(`[A-Za-z0-9._:-]{0,12}`).Draw(t, "id"), i),
				Tenant:             ids[ti],
				Principal:          name.Draw(t, "principal"),
				Service:            name.Draw(t, "service"),
				Contract:           name.Draw(t, "contract"),
				Function:           name.Draw(t, "function"),
				Route:              rapid.OneOf(rapid.Just(""), name).Draw(t, "route"),
				Stream:             rapid.StringMatching(`[A-Za-z0-9_@%~ü-]{1,12}`).Draw(t, "stream"),
				Consumer:           fmt.Sprintf("%s%d", rapid.StringMatching(`[A-Za-z0-9_-]{0,12}`).Draw(t, "consumer"), i),
				FilterSubject:      fmt.Sprintf("t%d.%s", ti, rapid.StringMatching(`[a-z0-9]{1,5}(\.[a-zA-Z0-9_-]{1,5}){0,4}`).Draw(t, "subject")),
				MaxPayloadBytes:    rapid.IntRange(minPayloadBytes, MaxPayloadBytes).Draw(t, "payload"),
				OperationTimeoutMS: timeout,
				RootBudgetMS:       rapid.IntRange(minRootBudgetMS, timeout).Draw(t, "budget"),
				MaxDeliver:         rapid.IntRange(minMaxDeliver, MaxMaxDeliver).Draw(t, "max deliver"),
				AckWaitMS:          rapid.IntRange(timeout+AckWaitMarginMS, maxAckWaitMS).Draw(t, "ack wait"),
				NakDelayMS:         rapid.IntRange(MinNakDelayMS, maxNakDelayMS).Draw(t, "nak delay"),
			}
			c.Bindings = append(c.Bindings, b)
		}
		return c
	})
}

// genDestination generates valid destinations.
func genDestination(roots []string) *rapid.Generator[Destination] {
	return rapid.Custom(func(t *rapid.T) Destination {
		var a [4]byte
		for i := range a {
			a[i] = rapid.Byte().Draw(t, "octet")
		}
		addr := netip.AddrPortFrom(netip.AddrFrom4(a), rapid.Uint16Range(1, 65535).Draw(t, "port"))
		// An address never dialled (conn's policy refuses it even when
		// allowed) becomes loopback; a non-public one carries the opt-in.
		if conn.CheckAddress(addr, addr.Addr()) != nil {
			addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), addr.Port())
		}
		d := Destination{
			Address:        addr,
			ServerName:     rapid.StringMatching(`[a-z]([a-z0-9-]{0,10}[a-z0-9])?(\.[a-z0-9]{1,8}){0,3}`).Draw(t, "server name"),
			RootCAsPEM:     rapid.SampledFrom(roots).Draw(t, "roots"),
			AllowNonPublic: conn.CheckAddress(addr, netip.Addr{}) != nil,
		}
		if rapid.Bool().Draw(t, "pinned") {
			d.SPKISHA256 = rapid.StringMatching(`[0-9a-f]{64}`).Draw(t, "pin")
		}
		return d
	})
}

// TestPropertyRoundTrip: a generated valid configuration validates,
// encodes, parses back to itself and re-encodes to the same bytes; every
// strict prefix of its encoding is refused.
func TestPropertyRoundTrip(t *testing.T) {
	roots := []string{
		pemOf(testCert(t, "r1.test", 11)),
		pemOf(testCert(t, "r2.test", 12), testCert(t, "r3.test", 13)),
	}
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig(roots).Draw(t, "config")
		if err := c.Validate(); err != nil {
			t.Fatalf("generated config invalid: %v", err)
		}
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		got, err := ParseConfig(b)
		if err != nil {
			t.Fatalf("ParseConfig: %v", err)
		}
		if diff := cmp.Diff(c, got, cmpConfig); diff != "" {
			t.Fatalf("parse(marshal(c)) (-want +got):\n%s", diff)
		}
		again, err := got.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		if string(again) != string(b) {
			t.Fatal("re-encoding differs")
		}
		for range 8 {
			n := rapid.IntRange(0, len(b)-1).Draw(t, "prefix")
			if _, err := ParseConfig(b[:n]); err == nil {
				t.Fatalf("strict prefix of %d bytes accepted", n)
			}
		}
	})
}
