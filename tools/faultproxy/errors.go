package faultproxy

import (
	"errors"
	"fmt"
)

// Sentinels. Match them with errors.Is.
var (
	// ErrClosed reports a call on a proxy after Close.
	ErrClosed = errors.New("faultproxy: closed")
	// ErrInvalidTarget reports a target that is not a 127.0.0.0/8 address
	// with a port.
	ErrInvalidTarget = errors.New("faultproxy: target must be an ipv4 loopback address and port")
	// ErrInvalidDirection reports a Direction other than Up or Down.
	ErrInvalidDirection = errors.New("faultproxy: invalid direction")
	// ErrInvalidFault is matched by every *FaultError.
	ErrInvalidFault = errors.New("faultproxy: invalid fault")
	// ErrNotTarget is matched by every *TargetError.
	ErrNotTarget = errors.New("faultproxy: dial of an address other than the target")
	// ErrNoDeadline reports a wait whose context has no deadline.
	ErrNoDeadline = errors.New("faultproxy: context has no deadline")
)

// FaultError reports the field of a Fault that Set refuses.
type FaultError struct {
	// Kind is the fault's kind, as given.
	Kind Kind
	// Field is "kind", "after" or "delay".
	Field string
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("faultproxy: invalid fault: %s: %s", e.Kind, e.Field)
}

// Unwrap returns ErrInvalidFault.
func (e *FaultError) Unwrap() error { return ErrInvalidFault }

// TargetError reports a dial through Proxy.Dialer of a network other than
// tcp or tcp4, or of an address other than the proxy's target written as a
// literal a.b.c.d:port.
type TargetError struct {
	Network string
	Address string
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("faultproxy: dial of an address other than the target: %s %s", e.Network, e.Address)
}

// Unwrap returns ErrNotTarget.
func (e *TargetError) Unwrap() error { return ErrNotTarget }

// WaitError reports a wait whose context ended before its condition held.
// Stats are the last counts seen; Err is the context's error.
type WaitError struct {
	Stats Stats
	Err   error
}

func (e *WaitError) Error() string {
	return fmt.Sprintf("faultproxy: wait ended: %v (last %+v)", e.Err, e.Stats)
}

// Unwrap returns the context's error.
func (e *WaitError) Unwrap() error { return e.Err }
