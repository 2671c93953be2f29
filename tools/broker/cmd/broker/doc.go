// Command broker starts the pinned nats-server for exploring by hand: a
// handshake-first TLS listener on 127.0.0.1, an operator with one account
// per tenant, and credential files for each tenant's admin user and the
// system account (and, on request, the trigger runtime's users). It prints
// how to reach it and keeps it until Ctrl-C, then removes every file it
// wrote.
//
//	go run ./tools/broker/cmd/broker -tenants demo,other -handshake first
//	go run ./tools/broker/cmd/broker -sync always -lame-duck-grace 1s
//	go run ./tools/broker/cmd/broker -cluster 3
//
// -cluster N starts N nodes (2 to 5) routed into one JetStream cluster
// instead of one broker, all with the same accounts, certificate and
// server name, and prints each node's name, pid, client address and HTTP
// monitor once a meta leader is elected.
//
// -client-certs makes the broker require client certificates (`verify:
// true`) of a generated client CA and writes one per tenant,
// <tenant>-client.crt and <tenant>-client.key, beside the creds files:
// name them as client_cert and client_key in a credentials file.
//
// -sync sets JetStream's sync_interval ("always" or a duration) and
// -lame-duck-grace the grace period of lame duck mode, which
// `kill -USR2 <pid>` starts (see broker.Options).
//
// If a server process exits on its own, the command says so with the end
// of its log, stops the other nodes, keeps every file and exits with
// status 1, printing the `nats-server -c <dir>/nats.conf` that starts each
// server again on its port (the configuration names it) with the same
// store and accounts.
//
//	go run ./tools/broker/cmd/broker -tenants acme -runtime-creds trigger.json -out creds
//
// -runtime-creds writes the trigger runtime's credentials of a
// configuration (read as provision reads it): per tenant a user of the
// tenant's account with exactly provision.DerivePermissions' grants, as
// <tenant>-runtime.creds (mode 0600) in -out (default the broker's
// directory), at start and again at each SIGHUP to the command; a tenant
// whose destination is not this broker gets a warning.
package main
