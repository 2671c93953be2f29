package conn

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/netip"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
)

// Limits of this package. Each has a test at the limit and one past it.
const (
	// MinReadCap is the smallest Config.MaxControlLine and Config.MaxHeader:
	// 1 KiB holds the INFO of nats-server 2.14.6 and the longest MSG line
	// a valid subscription and reply can make.
	MinReadCap = 1 << 10
	// MaxReadLine is the largest Config.MaxControlLine: the parser's cap,
	// parser.MaxLine.
	MaxReadLine = parser.MaxLine
	// MaxReadHeader is the largest Config.MaxHeader: the parser's cap,
	// parser.MaxHeaderBlock.
	MaxReadHeader = parser.MaxHeaderBlock

	// MaxPayloadLimit caps Config.MaxPayload: 1 MiB, the server's default
	// max_payload. It counts message bytes only, not the header block or
	// the trailing CRLF.
	MaxPayloadLimit = 1 << 20
	// MaxInboxPrefixLen caps Config.InboxPrefix (see ValidInboxPrefix), in
	// bytes: room for "_INBOX." and a 64-byte tenant token. The longest
	// reply subject is then 124 bytes (prefix, '.', the 22-byte token,
	// '.', 20 digits), so a request subject of the longest accepted
	// (maxRequestSubjectLen) with it and the size tokens stays well inside
	// the control line this package writes (4 KiB, internal/wire's
	// MaxControlLine). It is the one bound of an inbox prefix: the pull layer
	// derives permissions only for a prefix that passes ValidInboxPrefix.
	MaxInboxPrefixLen = 80
	// MaxServerNameLen caps Config.ServerName (see ValidServerName), in
	// bytes: the longest DNS name.
	MaxServerNameLen = 253
	// MaxConnectLen caps the CONNECT line (with the SUB and PING written
	// with it), CRLFs included. It is the write buffer's smallest size: a
	// CONNECT needing more (a user JWT with many grants) is refused rather
	// than grown into.
	MaxConnectLen = 12 << 10
	// MaxPingsPerExchange caps the server PINGs answered during one
	// handshake, request or check; one more closes the connection
	// (ErrControlFlood). A server pings an idle client every two minutes.
	MaxPingsPerExchange = 4
	// MaxControlFramesPerExchange caps the PING and INFO frames read during
	// one handshake, request or check, PINGs included; one more closes the
	// connection (ErrControlFlood).
	MaxControlFramesPerExchange = 8
	// MaxInfoNonceLen caps the nonce of the server's INFO, in bytes
	// (2.14.6 sends 15, base64url): a nonce this package accepts is one
	// credential signs (at most credential.MaxNonceLen).
	MaxInfoNonceLen = 64
	// DefaultInboxPrefix is Config.InboxPrefix when the field is empty.
	DefaultInboxPrefix = "_INBOX"
)

// Limits of this package that no caller sets: the defaults and caps of
// Config fields documented there, and the request subject's cap.
const (
	// defaultMaxPayload is Config.MaxPayload when the field is zero: 64 KiB.
	defaultMaxPayload = 64 << 10
	// maxRequestSubjectLen caps the subject of a request, in bytes. With
	// the longest reply subject and size tokens the control line stays
	// under internal/wire's MaxControlLine, the cap of the control line of
	// a request this package writes (PUB or HPUB, op and CRLF included).
	maxRequestSubjectLen = 2048
	// maxClientNameLen caps Config.Name, in bytes.
	maxClientNameLen = 64
)

// Dialer opens the TCP socket: it is called once per Dial with network
// "tcp4" and the approved address as a literal "a.b.c.d:port". A
// *net.Dialer's DialContext fits.
type Dialer func(ctx context.Context, network, address string) (net.Conn, error)

// Config configures Dial. Addr, ServerName, Roots and Credential are
// required.
type Config struct {
	// Addr is the one address dialled: a plain IPv4 address and a port. No
	// name is resolved and no address a server advertises is followed.
	Addr netip.AddrPort
	// AllowNonPublic names the one non-public address (loopback, private,
	// shared, link-local, documentation, benchmark, reserved) that Addr may
	// be. A non-public Addr that differs from it is refused before any
	// socket is opened. Unspecified, multicast and broadcast addresses are
	// refused regardless.
	AllowNonPublic netip.Addr
	// ServerName is the DNS name the server certificate must carry; it is
	// sent as SNI and verified independently of Addr. An IP address is
	// refused.
	ServerName string
	// Roots are the only certificate authorities trusted; never the
	// system's.
	Roots *x509.CertPool
	// SPKIPin, when not all zero, is the SHA-256 of the server
	// certificate's SubjectPublicKeyInfo, checked after normal
	// verification.
	SPKIPin [sha256.Size]byte
	// Credential authenticates CONNECT, and its client certificate, when
	// it carries one (credential.Secret.AddClientCertificate,
	// FromClientCertificate), is presented when the server asks for one in
	// the TLS handshake; its private key is decoded for that handshake only
	// and zeroed after it. Dial neither wipes nor checks its expiry (the
	// JWT's or the certificate's): the caller owns it and checks it is
	// current.
	Credential *credential.Secret
	// Name is the client name sent in CONNECT; optional, printable ASCII,
	// at most 64 bytes.
	Name string
	// InboxPrefix is the subject prefix of the private inbox: the
	// connection subscribes "<prefix>.<22 random base62>.*", so a
	// subscribe permission of "<prefix>.>" suffices. Empty means
	// DefaultInboxPrefix. It must be a literal subject of at most
	// MaxInboxPrefixLen bytes.
	InboxPrefix string
	// MaxPayload caps the payload of a request and of its reply, in bytes,
	// 1 to MaxPayloadLimit; zero means 64 KiB. It sizes both
	// buffers (see the package documentation).
	MaxPayload int
	// MaxControlLine caps each protocol line read from the server, CRLF
	// counted, MinReadCap to MaxReadLine bytes; zero means MaxReadLine.
	// The server's INFO must fit in it.
	MaxControlLine int
	// MaxHeader caps each message's header block, its blank line counted,
	// MinReadCap to MaxReadHeader bytes; zero means MaxReadHeader.
	MaxHeader int
	// Dialer opens the socket; nil means a zero net.Dialer. With
	// ThreadSocket on Linux a *net.TCPConn it returns is taken over (see
	// the package documentation, Thread socket): Dial closes it and keeps a
	// duplicate of its descriptor, so the caller must not keep and use or
	// close it; the Conn's Close closes the connection.
	Dialer Dialer
	// ThreadSocket, on Linux, takes the socket out of the Go runtime's
	// network poller and waits for it in ppoll(2) on the calling thread
	// (see the package documentation, Thread socket): less client CPU per
	// request, at the price of net.Conn's contracts for other goroutines:
	// ctx's end, Close and SetDeadline from another goroutine do not wake
	// a read or write that waits, which then ends at its own deadline. Off
	// (the default), and on other platforms, the runtime's poller serves
	// the socket.
	ThreadSocket bool
	// Rand is the source of the inbox prefix; nil means crypto/rand.
	Rand io.Reader
	// KeepUnanswered keeps the connection when a request that is not a
	// delivery request (Call.Delivery) reaches its
	// deadline unanswered between frames: the call returns an error
	// matching ErrUnanswered and context.DeadlineExceeded (not ErrClosed),
	// and a reply to that request arriving later is discarded (see the
	// package documentation, Deadlines). Off (the default), such a
	// deadline closes the connection.
	KeepUnanswered bool
}

// validated is a Config with defaults applied.
type validated struct {
	Config
	maxPayload int
	maxLine    int
	maxHeader  int
	prefix     string
	pinned     bool
}

func (c *Config) validate() (validated, error) {
	v := validated{Config: *c, maxPayload: c.MaxPayload, prefix: c.InboxPrefix}
	if err := CheckAddress(c.Addr, c.AllowNonPublic); err != nil {
		return v, err
	}
	if err := ValidServerName(c.ServerName); err != nil {
		return v, err
	}
	if c.Roots == nil {
		return v, fmt.Errorf("%w: roots are required", ErrInvalidConfig)
	}
	if c.Credential == nil {
		return v, fmt.Errorf("%w: credential is required", ErrInvalidConfig)
	}
	if len(c.Name) > maxClientNameLen || !printableASCII(c.Name) {
		return v, fmt.Errorf("%w: client name", ErrInvalidConfig)
	}
	if v.prefix == "" {
		v.prefix = DefaultInboxPrefix
	}
	if err := ValidInboxPrefix(v.prefix); err != nil {
		return v, err
	}
	if v.maxPayload == 0 {
		v.maxPayload = defaultMaxPayload
	}
	if v.maxPayload < 1 || v.maxPayload > MaxPayloadLimit {
		return v, fmt.Errorf("%w: max payload", ErrInvalidConfig)
	}
	v.maxLine, v.maxHeader = c.MaxControlLine, c.MaxHeader
	if v.maxLine == 0 {
		v.maxLine = MaxReadLine
	}
	if v.maxLine < MinReadCap || v.maxLine > MaxReadLine {
		return v, fmt.Errorf("%w: max control line", ErrInvalidConfig)
	}
	if v.maxHeader == 0 {
		v.maxHeader = MaxReadHeader
	}
	if v.maxHeader < MinReadCap || v.maxHeader > MaxReadHeader {
		return v, fmt.Errorf("%w: max header", ErrInvalidConfig)
	}
	v.pinned = c.SPKIPin != [sha256.Size]byte{}
	return v, nil
}

// parserLimits are the caps of the connection's parser.
func (v *validated) parserLimits() parser.Limits {
	return parser.Limits{MaxControlLine: v.maxLine, MaxHeader: v.maxHeader, MaxPayload: v.maxPayload}
}

// writeBufferSize is the capacity of the connection's write buffer.
func writeBufferSize(maxPayload int) int {
	return max(wire.MaxControlLine+wire.MaxOutboundHeader+maxPayload+2, MaxConnectLen)
}

// ValidInboxPrefix checks an inbox prefix (Config.InboxPrefix once its
// default is applied): a subject one may publish to (wire's subject rules,
// no wildcard token) of at most MaxInboxPrefixLen bytes. The error wraps
// ErrInvalidConfig.
func ValidInboxPrefix(prefix string) error {
	if len(prefix) > MaxInboxPrefixLen || wire.ValidPublishSubject(prefix) != nil {
		return fmt.Errorf("%w: inbox prefix", ErrInvalidConfig)
	}
	return nil
}

// ValidServerName checks a server name (Config.ServerName): a DNS name of
// 1 to MaxServerNameLen bytes, dot-separated labels of 1 to 63 letters
// (either case), digits and '-', no label starting or ending with '-', and
// not an IP address. It is the one rule of a server name; the trigger
// configuration and the broker harness add what they require beyond it.
// The error wraps ErrInvalidConfig.
func ValidServerName(s string) error {
	bad := fmt.Errorf("%w: server name must be a dns name", ErrInvalidConfig)
	if s == "" || len(s) > MaxServerNameLen {
		return bad
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return bad
	}
	label := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == '.':
			if label == 0 || s[i-1] == '-' {
				return bad
			}
			label = 0
		case b == '-':
			if label == 0 {
				return bad
			}
			label++
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
			label++
		default:
			return bad
		}
		if label > 63 {
			return bad
		}
	}
	if label == 0 || s[len(s)-1] == '-' {
		return bad
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
