// Package soak owns the soak run of the trigger runtime: several tenants
// and bindings on the pinned broker, a steady stream of events with mixed
// outcomes, and random faults from the fault scenarios' list, ending with
// the ledger's verdict (tools/ledger) and the figures; it refuses to be
// product code: it starts its own broker on 127.0.0.1 and nothing else.
//
// A run goes in rounds until its duration has passed: publish a batch of
// events (verified PubAcks, recorded in the ledger), let the runtime work,
// inject one fault at a random moment, heal it, and go on. The faults
// (Fault) are those of the broker's process: kill -9 and a restart on the
// same port and file store, a graceful restart, a pause (SIGSTOP), lame
// duck and a restart; and those of the link, through a fault proxy
// (tools/faultproxy) between the runtime and the broker: every connection
// reset, the broker's bytes stalled, the runtime's bytes dropped. The
// runtime's sockets go through the proxy, so they are served by the Go
// runtime's network poller. At the end the faults stop, every consumer must settle
// within SettleBound, and the verdict is drawn: nothing lost, every
// re-execution with its cause. A re-execution after a verified
// acknowledgement, a message kept in its stream after one and a retry
// dropped after a verified NAK fail the run where the broker promises
// that a verified acknowledgement survives: when Options.Durable says so,
// and whenever no kill was injected. After kills they are listed as the
// broker's state. A message the broker gave up on at max_deliver after the
// link lost the runtime's TERM is listed and fails no rule.
//
// Command tools/soak/cmd/soak runs it (make soak; SOAK=1h for longer).
package soak
