// Package apicheck owns the golden list of the module's exported API: one
// line per exported identifier of every package outside internal/ and
// tools/ (API), read from the source with go/parser and go/ast only; it
// refuses nothing, and never builds, type-checks or runs anything.
//
// TestAPI in this package compares the list with api/latent-nats.txt at
// the module root and fails on any difference, printing it; after an
// intended change of the API, accept it with
//
//	go test ./internal/apicheck -update
//
// and review the change of the golden file with the change of the code.
//
// # Lines
//
// Each line is the package's directory relative to the module root, the
// kind, then the identifier:
//
//	trigger const MaxBindings
//	trigger var ErrClosed
//	trigger type Triggers struct
//	trigger method (*Triggers) Run(context.Context, Host) error
//	trigger field Config.Tenants []Tenant
//	trigger type Outcome uint8
//	trigger const OutcomeSuccess Outcome
//	trigger method (Host) ReserveInbound(context.Context, InboundRequest) (Inbound, error)
//	wire embed Text.~string | ~[]byte
//	trigger func Install(*Pools, Installation) (*Triggers, *Monitor, error)
//
// Types are written as in the source, with parameter and result names
// left out (renaming one changes no caller). A constant or variable shows
// the type its declaration writes, if any (a constant's group carries it
// to the lines after it). Kinds: const, var, type (with its underlying
// kind or type: struct, interface, an alias "= T", or the type it is
// defined from), field (of an exported struct type), method (of an
// exported type, interface methods written with the interface as a value
// receiver), embed (a type embedded in an exported struct or interface)
// and func. Lines are sorted by package, then by the type or identifier
// they belong to, so a type's constants, fields and methods follow it. A
// file of any platform counts; a line two files declare alike is listed
// once.
package apicheck
