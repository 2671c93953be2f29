package trigger

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"pgregory.net/rapid"
)

// Characters the configuration rules allow, each set with a one-byte
// character first (the filler that brings a string to an exact length).
var (
	// idChars: A-Z a-z 0-9 . _ - :
	idChars = []string{"a", "Z", "0", "9", ".", "_", "-", ":"}
	// targetChars: printable ASCII but space.
	targetChars = []string{"a", "!", "~", "\"", "\\", ".", "*", ">", "/", "Z"}
	// assetChars: valid UTF-8 but space, control characters and . * > \ /;
	// the asset-name rule allows '@', '%', '~', '$' and non-ASCII text.
	assetChars = []string{"a", "Z", "0", "-", "_", "@", "%", "~", "$", "\"", "'", "+", "=", "ü", "\u00a0", "€", "😀"}
	// subjectChars: a token's characters: valid UTF-8 but space, control
	// characters, '.', '*' and '>'.
	subjectChars = []string{"a", "Z", "0", "-", "_", "$", "/", "\\", "\"", "@", "ü", "\u00a0", "😀"}
	// labelChars: the inner characters of a DNS label.
	labelChars = []string{"a", "z", "0", "9", "-"}
)

// boundAddrs are the first and last addresses of the special-purpose
// ranges and the public addresses beside them.
var boundAddrs = []string{
	"0.0.0.0", "0.0.0.1", "0.255.255.255", "1.0.0.0",
	"9.255.255.255", "10.0.0.0", "10.255.255.255", "11.0.0.0",
	"100.63.255.255", "100.64.0.0", "100.127.255.255", "100.128.0.0",
	"126.255.255.255", "127.0.0.0", "127.255.255.255", "128.0.0.0",
	"169.253.255.255", "169.254.0.0", "169.254.255.255", "169.255.0.0",
	"172.15.255.255", "172.16.0.0", "172.31.255.255", "172.32.0.0",
	"191.255.255.255", "192.0.0.0", "192.0.0.255", "192.0.1.0",
	"192.0.2.0", "192.0.2.255", "192.0.3.0", "192.88.98.255",
	"192.88.99.0", "192.88.99.255", "192.88.100.0", "192.167.255.255",
	"192.168.0.0", "192.168.255.255", "192.169.0.0", "198.17.255.255",
	"198.18.0.0", "198.19.255.255", "198.20.0.0", "198.51.99.255",
	"198.51.100.0", "198.51.100.255", "198.51.101.0", "203.0.112.255",
	"203.0.113.0", "203.0.113.255", "203.0.114.0", "223.255.255.255",
	"224.0.0.0", "239.255.255.255", "240.0.0.0", "255.255.255.254",
	"255.255.255.255",
}

// boundedInt draws from [lo, hi], half of the time one of the bounds.
func boundedInt(t *rapid.T, label string, lo, hi int) int {
	return rapid.OneOf(rapid.Just(lo), rapid.Just(hi), rapid.IntRange(lo, hi)).Draw(t, label)
}

// fill draws characters from chars until s is exactly n bytes long,
// using chars[0] (one byte) where a longer character would not fit.
func fill(t *rapid.T, label, s string, chars []string, n int) string {
	var b strings.Builder
	b.WriteString(s)
	for b.Len() < n {
		c := rapid.SampledFrom(chars).Draw(t, label)
		if b.Len()+len(c) > n {
			c = chars[0]
		}
		b.WriteString(c)
	}
	return b.String()
}

// genID draws an ID: 1 to maxIDLen bytes of the ID characters.
func genID(label string) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return fill(t, label, "", idChars, boundedInt(t, label+" length", 1, maxIDLen))
	})
}

// genServerName draws a lower-case DNS name of 1 to 4 labels, each 1 to 63
// bytes, at most maxServerNameLen bytes in all.
func genServerName(t *rapid.T) string {
	n := rapid.IntRange(1, 4).Draw(t, "labels")
	var labels []string
	total := -1
	for range n {
		size := boundedInt(t, "label length", 1, 63)
		if total+1+size > maxServerNameLen {
			size = maxServerNameLen - total - 1
		}
		if size < 1 {
			break
		}
		l := rapid.SampledFrom(labelChars[:4]).Draw(t, "label start")
		if size > 1 {
			l = fill(t, "label", l, labelChars, size-1) + rapid.SampledFrom(labelChars[:4]).Draw(t, "label end")
		}
		labels = append(labels, l)
		total += 1 + size
	}
	return strings.Join(labels, ".")
}

// genAcceptedDestination draws a destination trigger accepts: any IPv4
// address (often one at the edge of a special-purpose range) with
// allow_non_public set as the configuration requires; an address it
// refuses either way is drawn again.
func genAcceptedDestination(roots []string) *rapid.Generator[Destination] {
	return rapid.Custom(func(t *rapid.T) Destination {
		var addr netip.Addr
		if rapid.Bool().Draw(t, "bound address") {
			addr = netip.MustParseAddr(rapid.SampledFrom(boundAddrs).Draw(t, "address"))
		} else {
			addr = netip.AddrFrom4([4]byte(rapid.SliceOfN(rapid.Byte(), 4, 4).Draw(t, "octets")))
		}
		d := Destination{
			Address:    netip.AddrPortFrom(addr, uint16(boundedInt(t, "port", 1, 65535))),
			ServerName: genServerName(t),
			RootCAsPEM: rapid.SampledFrom(roots).Draw(t, "roots"),
		}
		if rapid.Bool().Draw(t, "pinned") {
			d.SPKISHA256 = rapid.StringMatching(`[0-9a-f]{64}`).Draw(t, "pin")
		}
		d.AllowNonPublic = !accepted(d)
		return d
	}).Filter(accepted)
}

// accepted reports whether the configuration accepts d.
func accepted(d Destination) bool {
	var vs violationList
	d.validate(&vs, "d")
	return len(vs.list) == 0
}

// genRuleConfig draws configurations from the configuration's rules, each
// string and number often at one of its bounds.
func genRuleConfig(roots []string) *rapid.Generator[Config] {
	return rapid.Custom(func(t *rapid.T) Config {
		nt := boundedInt(t, "tenants", minTenants, MaxTenants)
		ids := rapid.SliceOfNDistinct(genID("tenant id"), nt, nt, rapid.ID).Draw(t, "tenant ids")
		c := Config{
			Profile:             ProfileName,
			PollIntervalMS:      boundedInt(t, "poll", MinPollIntervalMS, maxPollIntervalMS),
			MaxControlLineBytes: boundedInt(t, "control line", minControlLineBytes, maxControlLineBytes),
			MaxHeaderBytes:      boundedInt(t, "header", minHeaderBytes, maxHeaderBytes),
		}
		for i := range nt {
			c.Tenants = append(c.Tenants, Tenant{
				ID:          ids[i],
				ProviderID:  genID("provider id").Draw(t, "provider id"),
				Destination: genAcceptedDestination(roots).Draw(t, "destination"),
			})
		}
		nb := nt + rapid.IntRange(0, 4).Draw(t, "extra bindings")
		for i := range nb {
			ti := i
			if i >= nt {
				ti = rapid.IntRange(0, nt-1).Draw(t, "tenant")
			}
			target := func(label string) string {
				return fill(t, label, "", targetChars, boundedInt(t, label+" length", 1, MaxTargetNameLen))
			}
			// The tenant's index keeps two tenants' filters apart; the
			// binding's index, its consumers on one stream.
			filterHead := fmt.Sprintf("t%d.", ti)
			consumerHead := fmt.Sprintf("%d-", i)
			timeout := boundedInt(t, "timeout", minOperationTimeoutMS, maxOperationTimeoutMS)
			b := Binding{
				ID:                 fmt.Sprintf("%d-", i) + genID("binding id").Draw(t, "binding id"),
				Tenant:             ids[ti],
				Principal:          target("principal"),
				Service:            target("service"),
				Contract:           target("contract"),
				Function:           target("function"),
				Stream:             fill(t, "stream", "", assetChars, boundedInt(t, "stream length", 1, maxAssetNameLen)),
				Consumer:           fill(t, "consumer", consumerHead, assetChars, boundedInt(t, "consumer length", len(consumerHead), maxAssetNameLen)),
				FilterSubject:      genFilterSubject(t, filterHead),
				MaxPayloadBytes:    boundedInt(t, "payload", minPayloadBytes, MaxPayloadBytes),
				OperationTimeoutMS: timeout,
				RootBudgetMS:       boundedInt(t, "budget", minRootBudgetMS, timeout),
				MaxDeliver:         boundedInt(t, "max deliver", minMaxDeliver, MaxMaxDeliver),
				AckWaitMS:          boundedInt(t, "ack wait", timeout+AckWaitMarginMS, maxAckWaitMS),
				NakDelayMS:         boundedInt(t, "nak delay", MinNakDelayMS, maxNakDelayMS),
			}
			if len(b.ID) > maxIDLen {
				b.ID = b.ID[:maxIDLen]
			}
			if rapid.Bool().Draw(t, "route") {
				b.Route = target("route")
			}
			c.Bindings = append(c.Bindings, b)
		}
		return c
	})
}

// genFilterSubject draws a literal subject after head, up to
// maxFilterSubjectLen bytes: tokens of subject characters, separated by
// single dots, none empty.
func genFilterSubject(t *rapid.T, head string) string {
	s := fill(t, "subject", "", subjectChars, boundedInt(t, "subject length", len(head)+1, maxFilterSubjectLen)-len(head))
	b := []byte(s)
	for range rapid.IntRange(0, 6).Draw(t, "dots") {
		i := rapid.IntRange(1, len(b)).Draw(t, "dot") - 1
		// Only a one-byte character gives way to a dot, with a character
		// on either side that is not one.
		if i > 0 && i < len(b)-1 && b[i] < 0x80 && b[i-1] != '.' && b[i+1] != '.' {
			b[i] = '.'
		}
	}
	return head + string(b)
}

// errReached is what the test dialer returns: conn.Dial got past every
// check of its configuration.
var errReached = errors.New("dialer reached")

// TestPropertyAcceptedConfigValidatesBelow: every configuration
// ParseConfig accepts (drawn from its rules, at their bounds) installs,
// and for each tenant the conn.Config the runtime dials with passes every
// check conn.Dial makes before it opens a socket, and for each binding
// the jspull.Binding the runtime uses validates and its tenant's
// permissions derive.
func TestPropertyAcceptedConfigValidatesBelow(t *testing.T) {
	roots := []string{
		pemOf(testCert(t, "r1.test", 11)),
		pemOf(testCert(t, "r2.test", 12), testCert(t, "r3.test", 13)),
	}
	rapid.Check(t, func(t *rapid.T) {
		raw, err := genRuleConfig(roots).Draw(t, "config").MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		cfg, err := ParseConfig(raw)
		if err != nil {
			t.Fatalf("ParseConfig refused a configuration drawn from its rules: %v", err)
		}
		var creds []Credential
		for _, tn := range cfg.Tenants {
			s, err := credential.FromToken("token-" + tn.ID)
			if err != nil {
				t.Fatal(err)
			}
			creds = append(creds, Credential{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Secret: s})
		}
		pools, err := NewPools(PoolConfig{Limits: DefaultPoolLimits()})
		if err != nil {
			t.Fatal(err)
		}
		defer pools.Close()
		trig, _, err := Install(pools, Installation{LogicalID: "rules", Epoch: 1, Config: cfg, Credentials: creds})
		if err != nil {
			t.Fatalf("Install: %v", err)
		}
		defer trig.Close()

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := range trig.tenants {
			ts := &trig.tenants[i]
			cc := trig.connConfig(ts)
			cc.Dialer = func(_ context.Context, network, address string) (net.Conn, error) {
				if network != "tcp4" || address != ts.cfg.Destination.Address.String() {
					t.Errorf("tenant %d: dialled %s %s, want tcp4 %s", i, network, address, ts.cfg.Destination.Address)
				}
				return nil, errReached
			}
			if _, err := conn.Dial(ctx, cc); !errors.Is(err, errReached) {
				t.Fatalf("tenant %d: conn.Dial refused the runtime's conn.Config: %v", i, err)
			}
			var pbs []jspull.Binding
			for _, bi := range ts.bindings {
				pb := trig.bindings[bi].pullBinding()
				if err := pb.Validate(); err != nil {
					t.Fatalf("binding %d: the runtime's jspull.Binding does not validate: %v", bi, err)
				}
				pbs = append(pbs, pb)
			}
			if _, err := jspull.DerivePermissions(cc.InboxPrefix, pbs...); err != nil {
				t.Fatalf("tenant %d: DerivePermissions: %v", i, err)
			}
		}
	})
}
