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
	if !a.Is4() {
		return 0, ErrNotIPv4
	}
	b := a.As4()
	switch {
	case b[0] == 0:
		return ClassUnspecified, nil
	case b[0] == 10:
		return ClassPrivate, nil
	case b[0] == 100 && b[1]&0xc0 == 64:
		return ClassShared, nil
	case b[0] == 127:
		return ClassLoopback, nil
	case b[0] == 169 && b[1] == 254:
		return ClassLinkLocal, nil
	case b[0] == 172 && b[1]&0xf0 == 16:
		return ClassPrivate, nil
	case b[0] == 192 && b[1] == 0 && b[2] == 0:
		return ClassReserved, nil
	case b[0] == 192 && b[1] == 0 && b[2] == 2:
		return ClassDocumentation, nil
	case b[0] == 192 && b[1] == 88 && b[2] == 99:
		return ClassReserved, nil
	case b[0] == 192 && b[1] == 168:
		return ClassPrivate, nil
	case b[0] == 198 && b[1]&0xfe == 18:
		return ClassBenchmark, nil
	case b[0] == 198 && b[1] == 51 && b[2] == 100:
		return ClassDocumentation, nil
	case b[0] == 203 && b[1] == 0 && b[2] == 113:
		return ClassDocumentation, nil
	case b[0] >= 224 && b[0] < 240:
		return ClassMulticast, nil
	case b == [4]byte{255, 255, 255, 255}:
		return ClassBroadcast, nil
	case b[0] >= 240:
		return ClassReserved, nil
	default:
		return ClassPublic, nil
	}
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
