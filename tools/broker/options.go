package broker

import (
	"fmt"
	"github.com/latent-systems/latent-nats/conn"
	"io"
	"strings"
	"time"
)

// Limits of this package. Each has a test at the limit and one past it.
const (
	// DefaultServerName is the DNS name in the server certificate (its only
	// subject alternative name) when [Options.ServerName] is empty.
	DefaultServerName = "broker.latent.test"
	// MaxServerNameLen is the longest accepted [Options.ServerName], in bytes.
	MaxServerNameLen = conn.MaxServerNameLen
	// MaxTenantAccounts is the most tenant accounts one broker holds.
	MaxTenantAccounts = 64
	// MaxTenantNameLen is the longest tenant name, in bytes.
	MaxTenantNameLen = 64
	// MaxLogBytes is the size of the ring holding the server's log; older
	// bytes are dropped.
	MaxLogBytes = 64 << 10
	// MaxLogLine is the longest log line inspected for readiness and
	// forwarded whole to [Options.Log], newline included; longer lines are
	// cut there.
	MaxLogLine = 4 << 10
	// MaxStacksBytes is the most output [Broker.Stacks] returns.
	MaxStacksBytes = 8 << 20
	// MaxExtraLen is the longest [Options.Extra], in bytes.
	MaxExtraLen = 16 << 10

	// MemoryLimit is GOMEMLIMIT of the child and the JetStream memory store
	// maximum, in bytes (256 MiB).
	MemoryLimit = 256 << 20
	// DefaultMaxFileStore is the JetStream file store maximum, in bytes,
	// when [Options.MaxFileStore] is zero.
	DefaultMaxFileStore = 1 << 30
	// MaxFileStore is the largest accepted [Options.MaxFileStore].
	MaxFileStore = 8 << 30
	// MaxTLSTimeout is the largest accepted [Options.TLSTimeout].
	MaxTLSTimeout = time.Minute
	// MaxFallbackDelay is the largest accepted [Options.FallbackDelay].
	MaxFallbackDelay = 10 * time.Second

	// MinLameDuckDuration is the shortest [Options.LameDuckDuration]; the
	// server refuses a shorter lame_duck_duration (nats-server v2.14.6
	// opts.go, processConfigFileLine).
	MinLameDuckDuration = 30 * time.Second
	// MaxLameDuckDuration is the longest accepted [Options.LameDuckDuration].
	MaxLameDuckDuration = 10 * time.Minute
	// DefaultLameDuckDuration is the server's lame_duck_duration when
	// [Options.LameDuckDuration] is zero (const.go,
	// DEFAULT_LAME_DUCK_DURATION).
	DefaultLameDuckDuration = 2 * time.Minute
	// DefaultLameDuckGracePeriod is the server's lame_duck_grace_period when
	// [Options.LameDuckGracePeriod] is zero (const.go,
	// DEFAULT_LAME_DUCK_GRACE_PERIOD).
	DefaultLameDuckGracePeriod = 10 * time.Second
	// MinSyncInterval is the shortest duration accepted in
	// [Options.SyncInterval]: shorter ones keep the server's background
	// syncer busy (and below 2 ns the server panics arming its first sync,
	// filestore.go setSyncTimer).
	MinSyncInterval = 10 * time.Millisecond
	// MaxSyncInterval is the longest duration accepted in
	// [Options.SyncInterval].
	MaxSyncInterval = time.Hour

	// StopGrace is how long [Broker.Close] waits for a graceful shutdown
	// before it kills the process.
	StopGrace = 5 * time.Second
	// PauseWait bounds how long [Broker.Pause] waits for the server's
	// threads to stop after SIGSTOP.
	PauseWait = 5 * time.Second
	// CertValidity is how long the generated certificates are valid.
	CertValidity = 30 * 24 * time.Hour
)

// HandshakeMode is the client listener's `handshake_first` setting.
type HandshakeMode int

const (
	// HandshakeFirst is `handshake_first: true`: TLS is the first thing on
	// the socket and the server never writes plaintext. It is the mode used
	// when [Options.Handshake] is zero.
	HandshakeFirst HandshakeMode = iota + 1
	// HandshakeAfterInfo is `handshake_first: false`: the classic flow, a
	// plaintext INFO and then the client's TLS handshake.
	HandshakeAfterInfo
	// HandshakeAuto is `handshake_first: "auto"`: TLS first if the client
	// writes within 50 ms, otherwise a plaintext INFO.
	HandshakeAuto
	// HandshakeFallback is `handshake_first: "<FallbackDelay>"`: like
	// [HandshakeAuto] with the delay given by [Options.FallbackDelay].
	HandshakeFallback
)

// String returns the mode's name.
func (m HandshakeMode) String() string {
	switch m {
	case HandshakeFirst:
		return "first"
	case HandshakeAfterInfo:
		return "after-info"
	case HandshakeAuto:
		return "auto"
	case HandshakeFallback:
		return "fallback"
	default:
		return fmt.Sprintf("HandshakeMode(%d)", int(m))
	}
}

// AccountLimits are the JetStream limits of every tenant account. A zero
// field takes the matching default (DefaultAccountMemory and so on).
type AccountLimits struct {
	MemoryStorage int64 // bytes of memory-backed streams, up to MemoryLimit
	DiskStorage   int64 // bytes of file-backed streams, up to the file store maximum
	Streams       int64
	Consumers     int64
}

// Tenant accounts' JetStream limits when [Options.AccountLimits] leaves a
// field zero.
const (
	DefaultAccountMemory    = 64 << 20
	DefaultAccountDisk      = 256 << 20
	DefaultAccountStreams   = 64
	DefaultAccountConsumers = 256
)

// Options configure [Start]. Only Tenants is required.
type Options struct {
	// Tenants are the names of the tenant accounts, one account each,
	// unique, 1 to [MaxTenantNameLen] bytes of letters, digits, '-' and '_'.
	Tenants []string
	// Binary is the nats-server to run; empty means [ServerBinary].
	Binary string
	// Dir is the parent of the broker's temporary directory; empty means
	// the system temporary directory.
	Dir string
	// ServerName is the DNS name in the server certificate; empty means
	// [DefaultServerName]. It must not be an IP address.
	ServerName string
	// Handshake is the client listener's TLS mode; zero means HandshakeFirst.
	Handshake HandshakeMode
	// FallbackDelay is the delay of [HandshakeFallback], 1 ms to
	// [MaxFallbackDelay]; it must be zero in every other mode.
	FallbackDelay time.Duration
	// ClientCertificates makes the client listener require a client
	// certificate signed by the broker's client CA (`verify: true` and
	// `ca_file` in its tls block), beside the users' JWTs: see
	// [Broker.IssueClientCert]. Every client then needs one, also the
	// tests' administrators.
	ClientCertificates bool
	// TLSTimeout is the server's TLS handshake timeout, up to
	// [MaxTLSTimeout]; zero means the server's default (2 s).
	TLSTimeout time.Duration
	// MaxFileStore is the JetStream file store maximum in bytes, up to
	// [MaxFileStore]; zero means [DefaultMaxFileStore].
	MaxFileStore int64
	// AccountLimits are the tenant accounts' JetStream limits.
	AccountLimits AccountLimits
	// SigningKeys are scoped signing keys of tenant accounts, at most
	// [MaxSigningKeys]: each tenant's account JWT lists its keys, and
	// [Broker.ScopedUser] mints users signed by one.
	SigningKeys []SigningKey
	// SyncInterval is JetStream's sync_interval, written inside the
	// jetstream block. "" keeps the server's default, a background fsync
	// of each file store's written blocks every 2 minutes (filestore.go
	// defaultSyncInterval, setSyncTimer). "always" makes the server fsync a
	// message block after every write to it and write its index and state
	// files with O_SYNC (filestore.go flushPendingMsgsLocked,
	// writeFileWithOptionalSync), so a message it acknowledged is on disk,
	// not only in the page cache. Otherwise it is a Go duration from
	// [MinSyncInterval] to [MaxSyncInterval], such as "2m", written in its
	// canonical form ("2m0s").
	SyncInterval string
	// LameDuckDuration is the server's lame_duck_duration, the span over
	// which lame duck mode closes the remaining clients (see
	// [Broker.LameDuck]): zero means [DefaultLameDuckDuration], otherwise
	// [MinLameDuckDuration] to [MaxLameDuckDuration]. The server waits at
	// most a second between two closes, so with few clients lame duck mode
	// ends long before this.
	LameDuckDuration time.Duration
	// LameDuckGracePeriod is the server's lame_duck_grace_period, how long
	// lame duck mode waits after it told the clients (an INFO with
	// "ldm":true) before it starts closing them: zero means
	// [DefaultLameDuckGracePeriod], otherwise it must be positive and below
	// the lame duck duration in effect, as the server requires (server.go,
	// validateOptions). A short one (a second) makes a short lame duck.
	LameDuckGracePeriod time.Duration
	// JetStreamDomain is the server's JetStream domain (`domain` in its
	// jetstream block); empty means none. Letters, digits, '-' and '_',
	// at most MaxTenantNameLen bytes (the tenant-name rule). With the v2
	// ack format (`feature_flags { js_ack_fc_v2: true }` in Extra) its
	// ack subjects name it.
	JetStreamDomain string
	// Extra is appended verbatim to the server configuration, for example
	// `feature_flags { js_ack_fc_v2: true }`, `max_control_line: 1024`,
	// `max_payload: 65536` or `ping_interval: "1s"`. At most [MaxExtraLen]
	// bytes; it must not repeat a key this package writes (server_name,
	// listen, tls, jetstream, operator, system_account, resolver,
	// resolver_preload, lame_duck_duration, lame_duck_grace_period, and for
	// a cluster's nodes http and cluster).
	Extra string
	// ProxyRoutes, for [StartCluster], sends each node's route to each
	// other node through a fault proxy of its own (package faultproxy),
	// so that a test cuts, stalls, delays and heals the links between
	// nodes ([Cluster.SetLink], [Cluster.Partition], [Cluster.Heal]).
	// [Start] ignores it.
	ProxyRoutes bool
	// Log receives a copy of the server's log, whole lines at a time
	// (cut at [MaxLogLine]); nil means none. Writes happen on the goroutine
	// that copies the child's output, so Log must not block for long. A
	// cluster's nodes write one line at a time each after its node's name
	// (see [StartCluster]).
	Log io.Writer
}

func (o Options) serverName() string {
	if o.ServerName == "" {
		return DefaultServerName
	}
	return o.ServerName
}

func (o Options) handshake() HandshakeMode {
	if o.Handshake == 0 {
		return HandshakeFirst
	}
	return o.Handshake
}

func (o Options) maxFileStore() int64 {
	if o.MaxFileStore == 0 {
		return DefaultMaxFileStore
	}
	return o.MaxFileStore
}

func (o Options) lameDuckDuration() time.Duration {
	if o.LameDuckDuration == 0 {
		return DefaultLameDuckDuration
	}
	return o.LameDuckDuration
}

// syncAlways is the SyncInterval that makes the server sync every write.
const syncAlways = "always"

// syncInterval returns SyncInterval as it is written into the
// configuration ("" when it is not written) and whether it is valid.
func (o Options) syncInterval() (string, bool) {
	switch o.SyncInterval {
	case "":
		return "", true
	case syncAlways:
		return syncAlways, true
	}
	d, err := time.ParseDuration(o.SyncInterval)
	if err != nil || d < MinSyncInterval || d > MaxSyncInterval {
		return "", false
	}
	return d.String(), true
}

func (o Options) accountLimits() AccountLimits {
	l := o.AccountLimits
	if l.MemoryStorage == 0 {
		l.MemoryStorage = DefaultAccountMemory
	}
	if l.DiskStorage == 0 {
		l.DiskStorage = min(DefaultAccountDisk, o.maxFileStore())
	}
	if l.Streams == 0 {
		l.Streams = DefaultAccountStreams
	}
	if l.Consumers == 0 {
		l.Consumers = DefaultAccountConsumers
	}
	return l
}

func (o Options) validate() error {
	if len(o.Tenants) == 0 || len(o.Tenants) > MaxTenantAccounts {
		return &OptionError{Field: "Tenants"}
	}
	seen := make(map[string]bool, len(o.Tenants))
	for _, name := range o.Tenants {
		if !validTenant(name) || seen[name] {
			return &OptionError{Field: "Tenants"}
		}
		seen[name] = true
	}
	if !certServerName(o.serverName()) {
		return &OptionError{Field: "ServerName"}
	}
	switch o.handshake() {
	case HandshakeFirst, HandshakeAfterInfo, HandshakeAuto:
		if o.FallbackDelay != 0 {
			return &OptionError{Field: "FallbackDelay"}
		}
	case HandshakeFallback:
		if o.FallbackDelay < time.Millisecond || o.FallbackDelay > MaxFallbackDelay {
			return &OptionError{Field: "FallbackDelay"}
		}
	default:
		return &OptionError{Field: "Handshake"}
	}
	if o.TLSTimeout < 0 || o.TLSTimeout > MaxTLSTimeout {
		return &OptionError{Field: "TLSTimeout"}
	}
	if o.MaxFileStore < 0 || o.MaxFileStore > MaxFileStore {
		return &OptionError{Field: "MaxFileStore"}
	}
	l := o.accountLimits()
	if l.MemoryStorage < 0 || l.MemoryStorage > MemoryLimit ||
		l.DiskStorage < 0 || l.DiskStorage > o.maxFileStore() ||
		l.Streams < 0 || l.Consumers < 0 {
		return &OptionError{Field: "AccountLimits"}
	}
	if err := validateSigningKeys(o.SigningKeys, o.Tenants); err != nil {
		return err
	}
	if o.JetStreamDomain != "" && !validTenant(o.JetStreamDomain) {
		return &OptionError{Field: "JetStreamDomain"}
	}
	if _, ok := o.syncInterval(); !ok {
		return &OptionError{Field: "SyncInterval"}
	}
	if o.LameDuckDuration != 0 && (o.LameDuckDuration < MinLameDuckDuration || o.LameDuckDuration > MaxLameDuckDuration) {
		return &OptionError{Field: "LameDuckDuration"}
	}
	if o.LameDuckGracePeriod < 0 || o.LameDuckGracePeriod >= o.lameDuckDuration() {
		return &OptionError{Field: "LameDuckGracePeriod"}
	}
	if len(o.Extra) > MaxExtraLen || strings.ContainsRune(o.Extra, 0) {
		return &OptionError{Field: "Extra"}
	}
	return nil
}

func validTenant(s string) bool {
	if s == "" || len(s) > MaxTenantNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if !ok {
			return false
		}
	}
	return true
}

// certServerName accepts the server names the harness issues certificates
// for: a server name by conn's rule (conn.ValidServerName, the one home of
// it), and beyond it lower case, at least two labels, and a last label
// that is not all digits (it reads as an address to some parsers).
func certServerName(s string) bool {
	if conn.ValidServerName(s) != nil || strings.ToLower(s) != s {
		return false
	}
	dot := strings.LastIndexByte(s, '.')
	return dot > 0 && strings.Trim(s[dot+1:], "0123456789") != ""
}
