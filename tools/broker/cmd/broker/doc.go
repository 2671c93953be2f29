// Command broker starts the pinned nats-server for exploring by hand: a
// handshake-first TLS listener on 127.0.0.1, an operator with one account
// per tenant, and credential files for each tenant's admin user and the
// system account. It prints how to reach it and keeps it until Ctrl-C, then
// removes every file it wrote.
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
// -sync sets JetStream's sync_interval ("always" or a duration) and
// -lame-duck-grace the grace period of lame duck mode, which
// `kill -USR2 <pid>` starts (see broker.Options).
package main
