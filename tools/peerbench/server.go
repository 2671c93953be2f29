package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ioTimeout bounds every read and write of the fake server and every wait
// of the benchmark.
const ioTimeout = 60 * time.Second

// chunkBytes is how much the fake server writes per call.
const chunkBytes = 64 << 10

// fakeServer accepts one client on 127.0.0.1 and streams frames to it.
type fakeServer struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex // serialises writes to conn
	conn net.Conn
	errs chan error
	// subscribed is closed once the client has subscribed and flushed
	// (natsgo mode) or connected (raw mode).
	subscribed chan struct{}
}

// startServer listens on 127.0.0.1:0. In handshake mode it plays the NATS
// handshake (INFO, PONG to each PING) and waits for a SUB followed by a
// PING; in raw mode the client is ready as soon as it connects.
func startServer(handshake bool) (*fakeServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &fakeServer{ln: ln, errs: make(chan error, 2), subscribed: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(ioTimeout))
		c, err := ln.Accept()
		if err != nil {
			s.errs <- err
			close(s.subscribed)
			return
		}
		s.mu.Lock()
		s.conn = c
		s.mu.Unlock()
		if !handshake {
			close(s.subscribed)
			s.drain(c, false)
			return
		}
		info := `INFO {"server_id":"FAKE","server_name":"fake","version":"2.14.6","proto":1,"go":"go1.26.8",` +
			`"host":"127.0.0.1","port":4222,"headers":true,"max_payload":1048576,"client_id":1} ` + "\r\n"
		if err := s.write([]byte(info)); err != nil {
			s.errs <- err
			close(s.subscribed)
			return
		}
		s.drain(c, true)
	}()
	return s, nil
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

// drain reads what the client sends until it closes; in handshake mode it
// answers every PING with PONG and closes subscribed after the first PING
// that follows a SUB.
func (s *fakeServer) drain(c net.Conn, handshake bool) {
	_ = c.SetReadDeadline(time.Now().Add(ioTimeout))
	br := bufio.NewReader(c)
	sawSub, signalled := false, false
	defer func() {
		if !signalled && handshake {
			close(s.subscribed)
		}
	}()
	for range 1 << 20 {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		if !handshake {
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte("SUB ")):
			sawSub = true
		case bytes.Equal(line, []byte("PING\r\n")):
			if err := s.write([]byte("PONG\r\n")); err != nil {
				s.errs <- err
				return
			}
			if sawSub && !signalled {
				signalled = true
				close(s.subscribed)
			}
		}
	}
}

func (s *fakeServer) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return errors.New("peerbench: no client")
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(ioTimeout))
	_, err := s.conn.Write(b)
	return err
}

// stream writes n copies of frame in chunks of whole frames, then tail.
func (s *fakeServer) stream(frame []byte, n int, tail []byte) error {
	select {
	case <-s.subscribed:
	case <-time.After(ioTimeout):
		return errors.New("peerbench: client never subscribed")
	}
	per := max(1, chunkBytes/len(frame))
	chunk := bytes.Repeat(frame, per)
	for n > 0 {
		k := min(n, per)
		if err := s.write(chunk[:k*len(frame)]); err != nil {
			return fmt.Errorf("peerbench: stream: %w", err)
		}
		n -= k
	}
	if len(tail) > 0 {
		return s.write(tail)
	}
	return nil
}

// close stops the listener and the connection and waits for the server
// goroutine.
func (s *fakeServer) close() error {
	_ = s.ln.Close()
	s.mu.Lock()
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	select {
	case err := <-s.errs:
		return err
	default:
		return nil
	}
}
