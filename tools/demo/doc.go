// Command demo is the main job in one command (`make demo`): it starts the
// pinned broker, provisions it, publishes a mix of events, runs the trigger
// runtime with the reference host, its functions WebAssembly guests, until
// every event settled, and checks every outcome; it refuses to leave a
// process or a file behind, and exits 0 only when every expectation held.
//
//	demo -guest PATH [-keep] [-deadline D] [-cluster N] [-v]
//
// The run, in order:
//
//  1. The guest (-guest, required): tools/demo/guest, the demo's functions
//     (place, cancel, charge) written in Go and built by the Go toolchain
//     as a WASI reactor, which make demo does first:
//     GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o PATH ./tools/demo/guest.
//     It is read (at most wasmhost.MaxModuleBytes), compiled once and
//     registered with the reference host through trigger/wasmhost, under
//     the types the scenario declares; a missing or refused module stops
//     the demo before anything is started.
//  2. The pinned nats-server (package tools/broker): handshake-first TLS on
//     127.0.0.1 with a generated CA, operator mode, one account per tenant
//     (acme and globex).
//  3. Provisioning (package tools/provision) with each tenant's
//     administrator: streams ORDERS and PAYMENTS and one durable pull
//     consumer per binding, with the profile's exact settings.
//  4. Runtime users: per tenant a user whose permissions are exactly those
//     provision (pull) derives for the tenant's bindings and its private
//     inbox (subscribe on trigger.InboxPrefix(tenant) + ".>", for example
//     _INBOX.acme.>), nothing else. A
//     user JWT grows with its bindings (four publish subjects each) and the
//     broker reads at most max_control_line (4096 bytes by default) of
//     CONNECT; the demo checks its users fit, and a tenant with many
//     bindings needs a larger max_control_line.
//  5. Events, published with verified PubAcks: good ones, a declared
//     application failure, an invalid payload and a poison event whose
//     function traps (a retryable platform failure) on every delivery.
//  6. The runtime (trigger.Install, Triggers.Run on one goroutine) with the
//     reference host (trigger/refhost), until every event reached a
//     terminal outcome or the deadline (-deadline, 20 s by default) passed,
//     whichever is first. Every activation runs in a fresh instance of the
//     guest, made for it and closed after it; a line each, from
//     wasmhost's report (binding, stream sequence, delivery, the instance's
//     number, the guest's own count of the calls its instance served, the
//     times to instantiate and to call, the result or the failure; never an
//     argument). A progress line per step the monitor reports (binding,
//     stream sequence, delivery count, outcome, action, ack state; never a
//     payload) and a line of totals per second. The monitor keeps one
//     last-step report, not a log, so it is sampled every few milliseconds;
//     deliveries that happen between two samples are counted on one line.
//     Every line, and with -v the runtime's log, goes through one lock.
//  7. The table per binding (delivered, acked, termed, nacked, exhausted,
//     uncertain), the monitor's last-step report, the broker's view of each
//     consumer, the guest's totals (activations, fresh instances, ok
//     results counting one call) and what the pools, the host and the
//     guest's engine still hold.
//
// It exits 0 only if every good event was acknowledged, the declared
// failure and the invalid payload were terminated, the poison event was
// negatively acknowledged max_deliver-1 times and then terminated as
// exhausted, nothing was uncertain, every consumer is empty, every
// reservation was returned, and the guest ran exactly once per delivery
// that reached it (not the invalid payload), each time in an instance no
// other activation ran in, every ok result counting one call (the
// instance served no call before) and no instance left open; 1 otherwise
// (also for a missing guest), 2 for bad flags and 130 when a signal
// stopped it. SIGINT and SIGTERM stop the run and remove everything.
// With -keep the broker keeps running after the run, with the
// configuration, credentials files and .creds files written into its
// directory, until Ctrl-C; then it is stopped and its directory removed.
//
// With -cluster N (2 to 5; make demo CLUSTER=3) it runs on a cluster of N
// routed nodes instead: the streams and consumers are provisioned R3 (one
// per node below three), and each tenant's destination is its own node.
//
// Its parts: flags, signals and exit codes; the run, in the order above;
// the scenario (tenants, bindings, the guest's functions and their types,
// events, the expected table and activations); the guest's activations
// (reading the module, a line each, their counts); setup (users, provisioning, publishing, inspecting consumers);
// the runtime phase and its progress lines; the report (the table, the
// last-step report and verify); -keep's files and description; -cluster's
// nodes, pinning and provisioning; sentinels and outcomeError.
package main
