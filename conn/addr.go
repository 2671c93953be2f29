package conn

import "net/netip"

// addrClass is the IANA special-purpose class of an IPv4 address, named in
// an AddressError's message.
type addrClass uint8

// addrClass values. Every class but classPublic is non-public.
const (
	// classPublic is any address not in a range below.
	classPublic addrClass = iota + 1
	// classUnspecified is 0.0.0.0/8 ("this network"); never dialled.
	classUnspecified
	// classLoopback is 127.0.0.0/8.
	classLoopback
	// classPrivate is 10.0.0.0/8, 172.16.0.0/12 and 192.168.0.0/16.
	classPrivate
	// classShared is 100.64.0.0/10 (carrier-grade NAT).
	classShared
	// classLinkLocal is 169.254.0.0/16.
	classLinkLocal
	// classDocumentation is 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24.
	classDocumentation
	// classBenchmark is 198.18.0.0/15.
	classBenchmark
	// classReserved is 192.0.0.0/24 (protocol assignments), 192.88.99.0/24
	// (6to4 relay) and 240.0.0.0/4 but the broadcast address.
	classReserved
	// classMulticast is 224.0.0.0/4; never dialled.
	classMulticast
	// classBroadcast is 255.255.255.255; never dialled.
	classBroadcast
)

// String returns the class's name.
func (c addrClass) String() string {
	switch c {
	case classPublic:
		return "public"
	case classUnspecified:
		return "unspecified"
	case classLoopback:
		return "loopback"
	case classPrivate:
		return "private"
	case classShared:
		return "shared"
	case classLinkLocal:
		return "link-local"
	case classDocumentation:
		return "documentation"
	case classBenchmark:
		return "benchmark"
	case classReserved:
		return "reserved"
	case classMulticast:
		return "multicast"
	case classBroadcast:
		return "broadcast"
	default:
		return "unknown"
	}
}

// dialable reports whether an address of this class may be dialled at all:
// public addresses always, the other non-public classes only when named
// exactly by Config.AllowNonPublic. Unspecified, multicast and broadcast
// addresses never.
func (c addrClass) dialable() bool {
	switch c {
	case classUnspecified, classMulticast, classBroadcast:
		return false
	default:
		return c != 0
	}
}

// rangeOf returns the special-purpose range holding a plain IPv4 address
// and the range's class; for a public address, the zero Prefix and
// classPublic. It returns ErrNotIPv4 for anything else, IPv4-mapped IPv6
// included. It is the one table of non-public IPv4 ranges: an
// AddressError names the range it refuses from it (AddressError.Range).
func rangeOf(a netip.Addr) (netip.Prefix, addrClass, error) {
	if !a.Is4() {
		return netip.Prefix{}, 0, ErrNotIPv4
	}
	for _, r := range specialRanges() {
		if r.prefix.Contains(a) {
			return r.prefix, r.class, nil
		}
	}
	return netip.Prefix{}, classPublic, nil
}

// classRange is one special-purpose range and its class.
type classRange struct {
	prefix netip.Prefix
	class  addrClass
}

// specialRanges lists the IANA special-purpose IPv4 ranges (RFC 6890 and
// its updates) that are not public, the broadcast address before the
// reserved range that holds it.
func specialRanges() [16]classRange {
	return [...]classRange{
		{prefix4(0, 0, 0, 0, 8), classUnspecified},
		{prefix4(10, 0, 0, 0, 8), classPrivate},
		{prefix4(100, 64, 0, 0, 10), classShared},
		{prefix4(127, 0, 0, 0, 8), classLoopback},
		{prefix4(169, 254, 0, 0, 16), classLinkLocal},
		{prefix4(172, 16, 0, 0, 12), classPrivate},
		{prefix4(192, 0, 0, 0, 24), classReserved},
		{prefix4(192, 0, 2, 0, 24), classDocumentation},
		{prefix4(192, 88, 99, 0, 24), classReserved},
		{prefix4(192, 168, 0, 0, 16), classPrivate},
		{prefix4(198, 18, 0, 0, 15), classBenchmark},
		{prefix4(198, 51, 100, 0, 24), classDocumentation},
		{prefix4(203, 0, 113, 0, 24), classDocumentation},
		{prefix4(224, 0, 0, 0, 4), classMulticast},
		{prefix4(255, 255, 255, 255, 32), classBroadcast},
		{prefix4(240, 0, 0, 0, 4), classReserved},
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
// *AddressError. It is the one address policy: the trigger configuration
// applies it (with allow set to the address itself, only what is never
// dialled fails; with allow unset, every non-public address does).
func CheckAddress(addr netip.AddrPort, allow netip.Addr) error {
	prefix, class, err := rangeOf(addr.Addr())
	if err != nil {
		return &AddressError{Addr: addr, Err: err}
	}
	refuse := func(err error) error {
		return &AddressError{Addr: addr, Range: prefix, Err: err, class: class}
	}
	switch {
	case addr.Port() == 0:
		return refuse(ErrInvalidConfig)
	case !class.dialable():
		return refuse(ErrNonPublicAddress)
	case class == classPublic:
		return nil
	case allow.Is4() && allow == addr.Addr():
		return nil
	default:
		return refuse(ErrNonPublicAddress)
	}
}
