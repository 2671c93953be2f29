package conn_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr string
		want conn.AddrClass
	}{
		{"0.0.0.0", conn.ClassUnspecified},
		{"0.255.255.255", conn.ClassUnspecified},
		{"1.1.1.1", conn.ClassPublic},
		{"9.255.255.255", conn.ClassPublic},
		{"10.0.0.0", conn.ClassPrivate},
		{"10.255.255.255", conn.ClassPrivate},
		{"11.0.0.0", conn.ClassPublic},
		{"100.63.255.255", conn.ClassPublic},
		{"100.64.0.0", conn.ClassShared},
		{"100.127.255.255", conn.ClassShared},
		{"100.128.0.0", conn.ClassPublic},
		{"126.255.255.255", conn.ClassPublic},
		{"127.0.0.1", conn.ClassLoopback},
		{"127.255.255.255", conn.ClassLoopback},
		{"169.253.255.255", conn.ClassPublic},
		{"169.254.0.0", conn.ClassLinkLocal},
		{"169.254.255.255", conn.ClassLinkLocal},
		{"169.255.0.0", conn.ClassPublic},
		{"172.15.255.255", conn.ClassPublic},
		{"172.16.0.0", conn.ClassPrivate},
		{"172.31.255.255", conn.ClassPrivate},
		{"172.32.0.0", conn.ClassPublic},
		{"192.0.0.0", conn.ClassReserved},
		{"192.0.0.255", conn.ClassReserved},
		{"192.0.1.0", conn.ClassPublic},
		{"192.0.2.0", conn.ClassDocumentation},
		{"192.0.2.255", conn.ClassDocumentation},
		{"192.0.3.0", conn.ClassPublic},
		{"192.88.99.1", conn.ClassReserved},
		{"192.88.100.1", conn.ClassPublic},
		{"192.167.255.255", conn.ClassPublic},
		{"192.168.0.0", conn.ClassPrivate},
		{"192.168.255.255", conn.ClassPrivate},
		{"192.169.0.0", conn.ClassPublic},
		{"198.17.255.255", conn.ClassPublic},
		{"198.18.0.0", conn.ClassBenchmark},
		{"198.19.255.255", conn.ClassBenchmark},
		{"198.20.0.0", conn.ClassPublic},
		{"198.51.100.7", conn.ClassDocumentation},
		{"198.51.101.7", conn.ClassPublic},
		{"203.0.113.9", conn.ClassDocumentation},
		{"203.0.114.9", conn.ClassPublic},
		{"223.255.255.255", conn.ClassPublic},
		{"224.0.0.0", conn.ClassMulticast},
		{"239.255.255.255", conn.ClassMulticast},
		{"240.0.0.0", conn.ClassReserved},
		{"255.255.255.254", conn.ClassReserved},
		{"255.255.255.255", conn.ClassBroadcast},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			got, err := conn.Classify(netip.MustParseAddr(tt.addr))
			if err != nil {
				t.Fatalf("Classify: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("class (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassifyRefusesNonIPv4(t *testing.T) {
	for _, a := range []netip.Addr{{}, netip.MustParseAddr("::1"), netip.MustParseAddr("::ffff:8.8.8.8"), netip.MustParseAddr("2001:db8::1")} {
		t.Run(a.String(), func(t *testing.T) {
			if _, err := conn.Classify(a); !errors.Is(err, conn.ErrNotIPv4) {
				t.Errorf("Classify(%v) error = %v, want ErrNotIPv4", a, err)
			}
		})
	}
}

func TestAddrClassString(t *testing.T) {
	want := map[conn.AddrClass]string{
		conn.ClassPublic: "public", conn.ClassUnspecified: "unspecified", conn.ClassLoopback: "loopback",
		conn.ClassPrivate: "private", conn.ClassShared: "shared", conn.ClassLinkLocal: "link-local",
		conn.ClassDocumentation: "documentation", conn.ClassBenchmark: "benchmark",
		conn.ClassReserved: "reserved", conn.ClassMulticast: "multicast", conn.ClassBroadcast: "broadcast",
		0: "unknown", conn.ClassBroadcast + 1: "unknown",
	}
	got := map[conn.AddrClass]string{}
	for c := range want {
		got[c] = c.String()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
}

// TestAddressPolicy dials through a hook that counts dials: every refused
// address must fail before the hook is called, every accepted one must
// reach it with network "tcp4" and the literal address.
func TestAddressPolicy(t *testing.T) {
	errDialled := errors.New("dialled")
	tests := []struct {
		name    string
		addr    netip.AddrPort
		allow   netip.Addr
		wantErr error // nil: the hook is reached
	}{
		{"public", netip.MustParseAddrPort("8.8.8.8:4222"), netip.Addr{}, nil},
		{"loopback without opt-in", netip.MustParseAddrPort("127.0.0.1:4222"), netip.Addr{}, conn.ErrNonPublicAddress},
		{"loopback with exact opt-in", netip.MustParseAddrPort("127.0.0.1:4222"), netip.MustParseAddr("127.0.0.1"), nil},
		{"loopback with another opt-in", netip.MustParseAddrPort("127.0.0.1:4222"), netip.MustParseAddr("127.0.0.2"), conn.ErrNonPublicAddress},
		{"loopback with mapped opt-in", netip.MustParseAddrPort("127.0.0.1:4222"), netip.MustParseAddr("::ffff:127.0.0.1"), conn.ErrNonPublicAddress},
		{"private without opt-in", netip.MustParseAddrPort("10.1.2.3:4222"), netip.Addr{}, conn.ErrNonPublicAddress},
		{"private with opt-in", netip.MustParseAddrPort("10.1.2.3:4222"), netip.MustParseAddr("10.1.2.3"), nil},
		{"shared without opt-in", netip.MustParseAddrPort("100.64.0.1:4222"), netip.Addr{}, conn.ErrNonPublicAddress},
		{"link-local without opt-in", netip.MustParseAddrPort("169.254.169.254:80"), netip.Addr{}, conn.ErrNonPublicAddress},
		{"documentation without opt-in", netip.MustParseAddrPort("192.0.2.1:4222"), netip.Addr{}, conn.ErrNonPublicAddress},
		{"reserved without opt-in", netip.MustParseAddrPort("240.0.0.1:4222"), netip.Addr{}, conn.ErrNonPublicAddress},
		{"unspecified even with opt-in", netip.MustParseAddrPort("0.0.0.0:4222"), netip.MustParseAddr("0.0.0.0"), conn.ErrNonPublicAddress},
		{"multicast even with opt-in", netip.MustParseAddrPort("224.0.0.1:4222"), netip.MustParseAddr("224.0.0.1"), conn.ErrNonPublicAddress},
		{"broadcast even with opt-in", netip.MustParseAddrPort("255.255.255.255:4222"), netip.MustParseAddr("255.255.255.255"), conn.ErrNonPublicAddress},
		{"ipv6", netip.MustParseAddrPort("[2606:4700::1111]:4222"), netip.Addr{}, conn.ErrNotIPv4},
		{"ipv4-mapped ipv6", netip.MustParseAddrPort("[::ffff:8.8.8.8]:4222"), netip.Addr{}, conn.ErrNotIPv4},
		{"ipv4-mapped loopback with opt-in", netip.MustParseAddrPort("[::ffff:127.0.0.1]:4222"), netip.MustParseAddr("::ffff:127.0.0.1"), conn.ErrNotIPv4},
		{"zero address", netip.AddrPort{}, netip.Addr{}, conn.ErrNotIPv4},
		{"port zero", netip.MustParseAddrPort("8.8.8.8:0"), netip.Addr{}, conn.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dials []string
			cfg := testConfig(t)
			cfg.Addr, cfg.AllowNonPublic = tt.addr, tt.allow
			cfg.Dialer = func(_ context.Context, network, address string) (net.Conn, error) {
				dials = append(dials, network+" "+address)
				return nil, errDialled
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			c, err := conn.Dial(ctx, cfg)
			if c != nil {
				t.Fatal("Dial returned a connection")
			}
			if tt.wantErr == nil {
				if !errors.Is(err, errDialled) {
					t.Fatalf("Dial error = %v, want the hook's", err)
				}
				if diff := cmp.Diff([]string{"tcp4 " + tt.addr.String()}, dials); diff != "" {
					t.Errorf("dials (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Dial error = %v, want %v", err, tt.wantErr)
			}
			var ae *conn.AddressError
			if !errors.As(err, &ae) {
				t.Fatalf("Dial error %T is not *AddressError", err)
			}
			if len(dials) != 0 {
				t.Errorf("refused address was dialled: %v", dials)
			}
		})
	}
}

// testConfig is a valid configuration whose address is public and whose
// dialer fails the test if called; tests override what they exercise.
func testConfig(t *testing.T) conn.Config {
	t.Helper()
	secret, err := credential.FromToken("test-token")
	if err != nil {
		t.Fatalf("FromToken: %v", err)
	}
	return conn.Config{
		Addr:       netip.MustParseAddrPort("8.8.8.8:4222"),
		ServerName: "broker.test",
		Roots:      x509Pool(t),
		Credential: secret,
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			t.Error("unexpected dial")
			return nil, errors.New("unexpected dial")
		},
	}
}

// TestRange: each special-purpose range is reported whole from its first
// and its last address, with the class Classify gives; a public address
// has no range.
func TestRange(t *testing.T) {
	tests := []struct {
		first, last string
		want        string
		class       conn.AddrClass
	}{
		{"0.0.0.0", "0.255.255.255", "0.0.0.0/8", conn.ClassUnspecified},
		{"10.0.0.0", "10.255.255.255", "10.0.0.0/8", conn.ClassPrivate},
		{"100.64.0.0", "100.127.255.255", "100.64.0.0/10", conn.ClassShared},
		{"127.0.0.0", "127.255.255.255", "127.0.0.0/8", conn.ClassLoopback},
		{"169.254.0.0", "169.254.255.255", "169.254.0.0/16", conn.ClassLinkLocal},
		{"172.16.0.0", "172.31.255.255", "172.16.0.0/12", conn.ClassPrivate},
		{"192.0.0.0", "192.0.0.255", "192.0.0.0/24", conn.ClassReserved},
		{"192.0.2.0", "192.0.2.255", "192.0.2.0/24", conn.ClassDocumentation},
		{"192.88.99.0", "192.88.99.255", "192.88.99.0/24", conn.ClassReserved},
		{"192.168.0.0", "192.168.255.255", "192.168.0.0/16", conn.ClassPrivate},
		{"198.18.0.0", "198.19.255.255", "198.18.0.0/15", conn.ClassBenchmark},
		{"198.51.100.0", "198.51.100.255", "198.51.100.0/24", conn.ClassDocumentation},
		{"203.0.113.0", "203.0.113.255", "203.0.113.0/24", conn.ClassDocumentation},
		{"224.0.0.0", "239.255.255.255", "224.0.0.0/4", conn.ClassMulticast},
		{"240.0.0.0", "255.255.255.254", "240.0.0.0/4", conn.ClassReserved},
		{"255.255.255.255", "255.255.255.255", "255.255.255.255/32", conn.ClassBroadcast},
		{"1.0.0.0", "9.255.255.255", "invalid Prefix", conn.ClassPublic},
	}
	for _, tt := range tests {
		for _, a := range []string{tt.first, tt.last} {
			t.Run(a, func(t *testing.T) {
				p, class, err := conn.Range(netip.MustParseAddr(a))
				if err != nil {
					t.Fatalf("Range: %v", err)
				}
				if diff := cmp.Diff(tt.want+" "+tt.class.String(), p.String()+" "+class.String()); diff != "" {
					t.Errorf("range and class (-want +got):\n%s", diff)
				}
				// The policy's refusal names the same range.
				// The policy's refusal names the same range; a public
				// address is accepted (an error without a range).
				var ae *conn.AddressError
				err = conn.CheckAddress(netip.AddrPortFrom(netip.MustParseAddr(a), 4222), netip.Addr{})
				got := p
				if errors.As(err, &ae) {
					got = ae.Range
				}
				if got != p || (err == nil) != (class == conn.ClassPublic) {
					t.Errorf("CheckAddress: %v, range %v; want the range %v", err, got, p)
				}
			})
		}
	}
	if _, _, err := conn.Range(netip.MustParseAddr("::ffff:10.0.0.1")); !errors.Is(err, conn.ErrNotIPv4) {
		t.Errorf("Range(IPv4-mapped) = %v, want ErrNotIPv4", err)
	}
}
