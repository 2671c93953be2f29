package fakeserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// recorder keeps the first max bytes it is given.
type recorder struct {
	buf       []byte
	max       int
	truncated bool
}

func (r *recorder) add(p []byte) {
	room := r.max - len(r.buf)
	if len(p) > room {
		r.truncated = true
		p = p[:room]
	}
	r.buf = append(r.buf, p...)
}

// recordingReader records everything read through it.
type recordingReader struct {
	r   io.Reader
	rec *recorder
}

func (rr *recordingReader) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	rr.rec.add(p[:n])
	return n, err
}

// rawByteReader reads the socket one byte at a time, so that nothing past
// a line is consumed before a later handshake.
type rawByteReader struct {
	r   io.Reader
	buf [1]byte
}

func (b *rawByteReader) ReadByte() (byte, error) {
	if _, err := io.ReadFull(b.r, b.buf[:]); err != nil {
		return 0, err
	}
	return b.buf[0], nil
}

// cutConn fails and closes the connection once more than left bytes would
// have been written.
type cutConn struct {
	net.Conn
	left int
	cut  bool
}

func (c *cutConn) Write(p []byte) (int, error) {
	n := min(len(p), c.left)
	if n > 0 {
		w, err := c.Conn.Write(p[:n])
		c.left -= w
		if err != nil {
			return w, err
		}
	}
	if n < len(p) {
		c.cut = true
		_ = c.Conn.Close()
		return n, net.ErrClosed
	}
	return n, nil
}

// session is one connection's state while its script plays.
type session struct {
	s     *Server
	raw   net.Conn
	plain recorder
	inTLS recorder

	rawReader io.Reader // the socket, recorded into plain
	rawBytes  *rawByteReader
	tlsConn   *tls.Conn     // nil before the handshake
	tlsReader *bufio.Reader // over tlsConn, recorded into inTLS
	sni       string        // server name the client sent, if any
	version   uint16        // negotiated TLS version, after a handshake
}

// serverConfig returns the server's TLS configuration with a hook that
// records the client's SNI.
func (ss *session) serverConfig() *tls.Config {
	cfg := ss.s.tlsCfg.Clone()
	cfg.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		ss.sni = h.ServerName
		return nil, nil
	}
	return cfg
}

// play runs the script on c and closes c.
func (s *Server) play(ctx context.Context, c net.Conn) Record {
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	defer c.Close()

	ss := &session{s: s, raw: c}
	ss.plain.max, ss.inTLS.max = s.cfg.MaxRecord, s.cfg.MaxRecord
	ss.rawReader = &recordingReader{r: c, rec: &ss.plain}
	ss.rawBytes = &rawByteReader{r: ss.rawReader}

	rec := Record{}
	for i, st := range s.cfg.Script {
		if err := ss.step(ctx, st); err != nil {
			if ctx.Err() != nil {
				err = ErrStopped
			}
			rec.Err = &StepError{Index: i, Kind: st.kind, Err: err}
			break
		}
		rec.Steps++
	}
	if ss.tlsConn != nil && rec.Err == nil {
		_ = ss.tlsConn.Close() // close_notify, then the socket
	}
	rec.Plain = bytes.Clone(ss.plain.buf)
	rec.TLS = bytes.Clone(ss.inTLS.buf)
	rec.Truncated = ss.plain.truncated || ss.inTLS.truncated
	rec.SNI, rec.TLSVersion = ss.sni, ss.version
	return rec
}

func (ss *session) step(ctx context.Context, st Step) error {
	switch st.kind {
	case StepSend:
		return ioErr(ss.write(st.data))
	case StepSendRaw, StepSendAlert:
		_, err := ss.raw.Write(st.data)
		return ioErr(err)
	case StepExpectPrefix:
		line, err := ss.readLine()
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(line, []byte(st.prefix)) {
			return ErrUnexpectedLine
		}
		return nil
	case StepExpectMatch:
		line, err := ss.readLine()
		if err != nil {
			return err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if !st.re.Match(line) {
			return ErrUnexpectedLine
		}
		return nil
	case StepHandshake:
		tc := tls.Server(ss.raw, ss.serverConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			return fmt.Errorf("%w: %w", ErrHandshake, err)
		}
		ss.tlsConn = tc
		ss.version = tc.ConnectionState().Version
		ss.tlsReader = bufio.NewReader(&recordingReader{r: tc, rec: &ss.inTLS})
		return nil
	case StepHandshakeCut:
		cc := &cutConn{Conn: ss.raw, left: st.n}
		err := tls.Server(cc, ss.serverConfig()).HandshakeContext(ctx)
		if cc.cut {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrHandshake, err)
		}
		return ErrHandshakeNotCut
	case StepReadClientHello:
		return ss.readClientHello()
	case StepWaitClose:
		var r io.Reader = ss.rawReader
		if ss.tlsReader != nil {
			r = ss.tlsReader
		}
		_, err := io.Copy(io.Discard, r)
		if err == nil || isClosedByPeer(err) {
			return nil
		}
		return ioErr(err)
	case StepStall:
		ss.s.stalledOnce.Do(func() { close(ss.s.stalled) })
		<-ctx.Done()
		return nil
	case StepHangup:
		// Closing cannot fail in a way the script cares about: a client
		// that is already gone is hung up on all the same.
		if ss.tlsConn != nil {
			_ = ss.tlsConn.Close()
		}
		_ = ss.raw.Close()
		return nil
	default:
		return fmt.Errorf("%w: step kind %d", ErrBadConfig, st.kind)
	}
}

func (ss *session) write(p []byte) error {
	if ss.tlsConn != nil {
		_, err := ss.tlsConn.Write(p)
		return err
	}
	_, err := ss.raw.Write(p)
	return err
}

// readLine reads through LF at the current layer; the line, LF included,
// may be at most MaxLine bytes.
func (ss *session) readLine() ([]byte, error) {
	var r io.ByteReader = ss.rawBytes
	if ss.tlsReader != nil {
		r = ss.tlsReader
	}
	max := ss.s.cfg.MaxLine
	var line []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return nil, ioErr(err)
		}
		if len(line) == max {
			return nil, ErrLineTooLong
		}
		line = append(line, c)
		if c == '\n' {
			return line, nil
		}
	}
}

// readClientHello reads one TLS record: type handshake (22), a length up
// to MaxClientHello, and a body whose first byte is ClientHello (1).
func (ss *session) readClientHello() error {
	var hdr [5]byte
	if _, err := io.ReadFull(ss.rawReader, hdr[:]); err != nil {
		return ioErr(err)
	}
	n := int(hdr[3])<<8 | int(hdr[4])
	if hdr[0] != 22 || hdr[1] != 3 || n < 1 || n > MaxClientHello {
		return ErrNotTLS
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(ss.rawReader, body); err != nil {
		return ioErr(err)
	}
	if body[0] != 1 {
		return ErrNotTLS
	}
	return nil
}

// isClosedByPeer reports an error that means the client went away.
func isClosedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// ioErr maps a read or write error to the package's sentinels.
func ioErr(err error) error {
	switch {
	case err == nil:
		return nil
	case isClosedByPeer(err):
		return fmt.Errorf("%w: %w", ErrClientClosed, err)
	default:
		return fmt.Errorf("%w: %w", ErrIO, err)
	}
}
