package conn

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
)

// Dial opens one connection to cfg.Addr and completes the handshake:
//
//  1. the address policy and the rest of cfg are checked; nothing is
//     opened when they fail (*AddressError, ErrInvalidConfig);
//  2. StepDial: one TCP socket to the literal address;
//  3. StepTLS: the TLS ClientHello is the first byte written; TLS 1.2 or
//     later, the certificate verified against cfg.Roots for
//     cfg.ServerName (also the SNI), then against cfg.SPKIPin if set; the
//     credential's client certificate presented if the server asks for one
//     (none, if it carries none), and a server that refuses it reported
//     here (ErrClientCertificate), also when, under TLS 1.3, its refusal
//     arrives in place of the INFO;
//  4. StepInfo: the server's INFO, read through the parser inside TLS;
//     host and connect_urls are ignored, lame-duck mode recorded;
//  5. StepAuthenticate: the credential signs the INFO nonce;
//  6. StepConnect: CONNECT (verbose and pedantic off, protocol 1, headers
//     and no_responders on, echo off), the inbox SUB and PING in one write,
//     then PONG (and, from servers since 2.12, the INFO that follows it).
//
// ctx must carry a deadline (ErrNoDeadline); it bounds the whole handshake,
// and its end interrupts whichever step is waiting (the socket's deadline
// is set in the past, see the package documentation, Deadlines): that step
// fails with ctx's error. Failures after the checks are *HandshakeError,
// with the socket closed.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	v, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil, ErrNoDeadline
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ib, err := newInbox(v.Rand, v.prefix)
	if err != nil {
		return nil, err
	}
	h := &handshake{v: &v, deadline: deadline, c: &Conn{
		inbox:          ib,
		maxPayload:     v.maxPayload,
		keepUnanswered: v.KeepUnanswered,
	}}
	if err := h.run(ctx); err != nil {
		if h.c.raw != nil {
			_ = h.c.Close()
		}
		return nil, err
	}
	// The caller may end ctx now that Dial returned: that must not touch
	// the idle socket.
	h.c.cancel.unwatch()
	return h.c, nil
}

// handshake is the short-lived state of one Dial.
type handshake struct {
	v        *validated
	deadline time.Time
	c        *Conn
	info     serverInfo
	connect  wire.Connect
	// certAsked: the server asked for a client certificate in the TLS
	// handshake, so a TLS alert it sends before the INFO may refuse it;
	// certNone: none was presented.
	certAsked, certNone bool
}

// stepError moves a failure to the handshake step it belongs to: a client
// certificate refused after a TLS 1.3 handshake is read where the INFO
// was expected, but belongs to StepTLS.
type stepError struct {
	step Step
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func (h *handshake) run(ctx context.Context) error {
	steps := []struct {
		step Step
		fn   func(context.Context) error
	}{
		{StepDial, h.dial},
		{StepTLS, h.tls},
		{StepInfo, h.readInfo},
		{StepAuthenticate, h.authenticate},
		{StepConnect, h.connectAndPing},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			step := s.step
			if se, ok := err.(*stepError); ok {
				step, err = se.step, se.err
			}
			return &HandshakeError{Step: step, Err: normalise(interrupted(ctx, err))}
		}
	}
	return nil
}

func (h *handshake) dial(ctx context.Context) error {
	dial := h.v.Dialer
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	raw, err := dial(ctx, "tcp4", h.v.Addr.String())
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
			return &refusedError{err: err}
		}
		return err
	}
	if h.v.ThreadSocket {
		if raw, err = threadSocketOf(raw); err != nil {
			return err
		}
	}
	h.c.raw = raw
	if ta, ok := raw.RemoteAddr().(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		if netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()) != h.v.Addr {
			return ErrWrongPeer
		}
	}
	// From here ctx's end interrupts the handshake (see canceller), until
	// Dial returns.
	h.c.cancel.watch(ctx, raw)
	if err := raw.SetDeadline(h.deadline); err != nil {
		return err
	}
	return ctx.Err()
}

// tls runs the client handshake with Handshake, not HandshakeContext: the
// socket deadline bounds it, and the registration made at StepDial makes
// ctx's end interrupt it, without a goroutine started to watch ctx.
func (h *handshake) tls(context.Context) error {
	release := func() {}
	defer func() { release() }()
	cfg := &tls.Config{
		ServerName: h.v.ServerName,
		RootCAs:    h.v.Roots,
		MinVersion: tls.VersionTLS12,
		// Asked once per handshake (renegotiation is off): the key is
		// decoded here and zeroed when the handshake ends.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			h.certAsked = true
			cert, rel, err := h.v.Credential.ClientCertificate()
			release = rel
			if err != nil {
				return nil, err
			}
			if cert == nil {
				h.certNone = true
				return &tls.Certificate{}, nil
			}
			return cert, nil
		},
	}
	if h.v.pinned {
		pin := h.v.SPKIPin
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return ErrPinMismatch
			}
			sum := sha256.Sum256(cs.PeerCertificates[0].RawSubjectPublicKeyInfo)
			if sum != pin {
				return ErrPinMismatch
			}
			return nil
		}
	}
	tc := tls.Client(h.c.raw, cfg)
	h.c.tls = tc
	h.c.rd.c, h.c.rd.raw = tc, h.c.raw
	if err := tc.Handshake(); err != nil {
		return classifyTLS(err, h.certRefused(err))
	}
	return nil
}

// classifyTLS maps a handshake failure onto ErrPlaintext, ErrCertificate,
// ErrClientCertificate (certRefused: the server refused the client
// certificate, see handshake.certRefused) or ErrTLS, keeping the original
// reachable but out of the message.
func classifyTLS(err error, certRefused bool) error {
	var rh tls.RecordHeaderError
	var cv *tls.CertificateVerificationError
	switch {
	case isTimeout(err):
		return err
	case certRefused:
		return &tlsFailure{kind: ErrClientCertificate, err: err}
	case errors.As(err, &rh):
		return &tlsFailure{kind: ErrPlaintext, err: err}
	case errors.Is(err, ErrPinMismatch), errors.As(err, &cv):
		return &tlsFailure{kind: ErrCertificate, err: err}
	default:
		return &tlsFailure{kind: ErrTLS, err: err}
	}
}

func (h *handshake) readInfo(context.Context) error {
	c := h.c
	c.p = parser.New(&c.rd, h.v.parserLimits())
	c.rd.p = c.p
	f, err := c.p.Next()
	if err != nil {
		if h.certRefused(err) {
			return &stepError{step: StepTLS, err: &tlsFailure{kind: ErrClientCertificate, err: err}}
		}
		return err
	}
	switch f.Op {
	case parser.OpInfo:
	case parser.OpErr:
		return &ServerError{Kind: classify(f.ErrText)}
	default:
		return ErrUnexpectedFrame
	}
	si, err := parseInfo(f.Info)
	if err != nil {
		return err
	}
	h.info = si
	c.lameDuck = si.LameDuck
	c.jetStream = si.JetStream
	c.clustered = si.Cluster != ""
	c.serverMax = int(min(si.MaxPayload, int64(MaxPayloadLimit)+wire.MaxOutboundHeader))
	return nil
}

func (h *handshake) authenticate(context.Context) error {
	var nonce []byte
	if h.info.Nonce != "" {
		nonce = []byte(h.info.Nonce)
	}
	auth, err := h.v.Credential.Authenticate(nonce)
	if err != nil {
		return err
	}
	h.connect = wire.Connect{
		TLSRequired:  true,
		JWT:          auth.JWT,
		NKey:         auth.NKey,
		Sig:          auth.Sig,
		User:         auth.User,
		Pass:         auth.Pass,
		AuthToken:    auth.Token,
		Name:         h.v.Name,
		Lang:         "go",
		Protocol:     1,
		Headers:      true,
		NoResponders: true,
	}
	return nil
}

// connectAndPing writes CONNECT, SUB and PING and waits for the answer;
// the socket deadline bounds it.
func (h *handshake) connectAndPing(context.Context) error {
	c := h.c
	c.wbuf = make([]byte, 0, writeBufferSize(h.v.maxPayload))
	out, err := appendHandshake(c.wbuf, &h.connect, c.inbox.subject())
	h.connect = wire.Connect{}
	if err != nil {
		return err
	}
	_, err = c.tls.Write(out)
	clear(out) // CONNECT carries credentials
	if err != nil {
		return err
	}
	return h.awaitPong()
}

// appendHandshake appends CONNECT, the inbox SUB and PING to dst, at most
// MaxConnectLen bytes. On error nothing of the credentials is left in dst's
// array or in one append may have grown it into.
func appendHandshake(dst []byte, connect *wire.Connect, inbox string) ([]byte, error) {
	out, err := wire.AppendConnect(dst, connect)
	if err == nil {
		out, err = wire.AppendSub(out, inbox, inboxSID)
	}
	if err == nil && len(out)+len("PING\r\n") > MaxConnectLen {
		err = fmt.Errorf("%w: connect line", ErrTooLarge)
	}
	if err != nil {
		clear(dst[:cap(dst)])
		clear(out[:cap(out)])
		return dst[:0], err
	}
	return wire.AppendPing(out), nil
}

// awaitPong reads until PONG, and from servers since 2.12 the INFO that
// follows it, answering server PINGs.
func (h *handshake) awaitPong() error {
	c := h.c
	expectInfo := sendsConnectInfo(h.info.Version)
	pong := false
	var ctl control
	for range MaxControlFramesPerExchange + 2 {
		f, err := c.p.Next()
		if err != nil {
			return err
		}
		switch f.Op {
		case parser.OpPong:
			if pong {
				return ErrUnexpectedFrame
			}
			pong = true
			if !expectInfo {
				return nil
			}
			continue
		case parser.OpInfo:
			if pong {
				ld, err := asyncInfo(f.Info)
				c.lameDuck = c.lameDuck || ld
				return err
			}
		case parser.OpErr:
			return &ServerError{Kind: classify(f.ErrText)}
		case parser.OpPing:
		default:
			return ErrUnexpectedFrame
		}
		if err := ctl.handle(c, f); err != nil {
			return err
		}
	}
	return ErrControlFlood
}
