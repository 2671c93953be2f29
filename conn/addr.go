package conn

import "net/netip"

// AddrClass is the IANA special-purpose class of an IPv4 address.
type AddrClass uint8

// AddrClass values. Every class but ClassPublic is non-public.
const (
	// ClassPublic is any address not in a range below.
	ClassPublic AddrClass = iota + 1
	// ClassUnspecified is 0.0.0.0/8 ("this network"); never dialled.
	ClassUnspecified
	// ClassLoopback is 127.0.0.0/8.
	ClassLoopback
	// ClassPrivate is 10.0.0.0/8, 172.16.0.0/12 and 192.168.0.0/16.
	ClassPrivate
	// ClassShared is 100.64.0.0/10 (carrier-grade NAT).
	ClassShared
	// ClassLinkLocal is 169.254.0.0/16.
	ClassLinkLocal
	// ClassDocumentation is 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24.
	ClassDocumentation
	// ClassBenchmark is 198.18.0.0/15.
	ClassBenchmark
	// ClassReserved is 192.0.0.0/24 (protocol assignments), 192.88.99.0/24
	// (6to4 relay) and 240.0.0.0/4 but the broadcast address.
	ClassReserved
	// ClassMulticast is 224.0.0.0/4; never dialled.
	ClassMulticast
	// ClassBroadcast is 255.255.255.255; never dialled.
	ClassBroadcast
)

// String returns the class's name.
func (c AddrClass) String() string {
	switch c {
	case ClassPublic:
		return "public"
	case ClassUnspecified:
		return "unspecified"
	case ClassLoopback:
		return "loopback"
	case ClassPrivate:
		return "private"
	case ClassShared:
		return "shared"
	case ClassLinkLocal:
		return "link-local"
	case ClassDocumentation:
		return "documentation"
	case ClassBenchmark:
		return "benchmark"
	case ClassReserved:
		return "reserved"
	case ClassMulticast:
		return "multicast"
	case ClassBroadcast:
		return "broadcast"
	default:
		return "unknown"
	}
}

// Dialable reports whether an address of this class may be dialled at all:
// public addresses always, the other non-public classes only when named
// exactly by Config.AllowNonPublic. Unspecified, multicast and broadcast
// addresses never.
func (c AddrClass) Dialable() bool {
	switch c {
	case ClassUnspecified, ClassMulticast, ClassBroadcast:
		return false
	default:
		return c != 0
	}
}

// Classify returns the class of a plain IPv4 address. It returns
// ErrNotIPv4 for anything else, IPv4-mapped IPv6 included.
func Classify(a netip.Addr) (AddrClass, error) {
	_, class, err := Range(a)
	return class, err
}

// Range returns the special-purpose range holding a plain IPv4 address and
// the range's class; for a public address, the zero Prefix and
// ClassPublic. It returns ErrNotIPv4 for anything else, IPv4-mapped IPv6
// included. It is the one table of non-public IPv4 ranges: the trigger
// configuration names the range it refuses from it.
func Range(a netip.Addr) (netip.Prefix, AddrClass, error) {
	if !a.Is4() {
		return netip.Prefix{}, 0, ErrNotIPv4
	}
	for _, r := range specialRanges() {
		if r.prefix.Contains(a) {
			return r.prefix, r.class, nil
		}
	}
	return netip.Prefix{}, ClassPublic, nil
}

// classRange is one special-purpose range and its class.
type classRange struct {
	prefix netip.Prefix
	class  AddrClass
}

// specialRanges lists the IANA special-purpose IPv4 ranges (RFC 6890 and
// its updates) that are not public, the broadcast address before the
// reserved range that holds it.
func specialRanges() [16]classRange {
	return [...]classRange{
		{prefix4(0, 0, 0, 0, 8), ClassUnspecified},
		{prefix4(10, 0, 0, 0, 8), ClassPrivate},
		{prefix4(100, 64, 0, 0, 10), ClassShared},
		{prefix4(127, 0, 0, 0, 8), ClassLoopback},
		{prefix4(169, 254, 0, 0, 16), ClassLinkLocal},
		{prefix4(172, 16, 0, 0, 12), ClassPrivate},
		{prefix4(192, 0, 0, 0, 24), ClassReserved},
		{prefix4(192, 0, 2, 0, 24), ClassDocumentation},
		{prefix4(192, 88, 99, 0, 24), ClassReserved},
		{prefix4(192, 168, 0, 0, 16), ClassPrivate},
		{prefix4(198, 18, 0, 0, 15), ClassBenchmark},
		{prefix4(198, 51, 100, 0, 24), ClassDocumentation},
		{prefix4(203, 0, 113, 0, 24), ClassDocumentation},
		{prefix4(224, 0, 0, 0, 4), ClassMulticast},
		{prefix4(255, 255, 255, 255, 32), ClassBroadcast},
		{prefix4(240, 0, 0, 0, 4), ClassReserved},
	}
}

// prefix4 is the prefix a.b.c.d/bits.
func prefix4(a, b, c, d byte, bits int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{a, b, c, d}), bits)
}

// CheckAddress applies the address policy Dial applies before it opens a
// socket: addr must be a plain IPv4 address with a non-zero port; a
// non-public address must equal allow exactly; unspecified, multicast and
// broadcast addresses are refused whatever allow says. Errors are
// *AddressError.
func CheckAddress(addr netip.AddrPort, allow netip.Addr) error {
	class, err := Classify(addr.Addr())
	if err != nil {
		return &AddressError{Addr: addr, Err: err}
	}
	if addr.Port() == 0 {
		return &AddressError{Addr: addr, Class: class, Err: ErrInvalidConfig}
	}
	switch {
	case !class.Dialable():
		return &AddressError{Addr: addr, Class: class, Err: ErrNonPublicAddress}
	case class == ClassPublic:
		return nil
	case allow.Is4() && allow == addr.Addr():
		return nil
	default:
		return &AddressError{Addr: addr, Class: class, Err: ErrNonPublicAddress}
	}
}
