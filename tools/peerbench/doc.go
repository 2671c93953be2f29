// Command peerbench compares this project with nats.go v1.55.0 in one run,
// in five modes, and prints the raw figures and the tables for
// docs/BENCHMARKS.md.
//
// It lives in its own module so that nats.go never enters the main module's
// package graph.
//
// # -mode parser (the default)
//
// The byte streams of internal/frametest through this project's parser and
// through nats.go's receive path. Every network connection is to a fake
// server it starts on 127.0.0.1, which streams a bounded number of frames
// and is stopped and waited for before the next case.
//
// Cases, for each shape:
//
//	Latent/mem      parser.Next over an in-memory looping reader
//	Latent/tcp      parser.Next over a TCP connection from the fake server
//	NatsGo/frame    nats.go over TCP, frames addressed to a sid it does not
//	                know: its read loop frames them and drops them
//	NatsGo/msg      nats.go over TCP to a subscription callback: framing,
//	                the *Msg with its copies and decoded headers, delivery
//	Latent/header   parser.ParseHeader plus one HeaderValue (HMSG shapes)
//	NatsGo/header   nats.DecodeHeadersMsg plus one Header.Get (HMSG shapes)
//
// # -mode pull
//
// One visit to a durable pull consumer of the profile (inspect, pull one,
// verified acknowledgement) against one pinned nats-server (tools/broker:
// handshake-first TLS, operator mode, one tenant), in three loops that
// alternate within each round, each on its own connection and its own
// consumer of one stream, with 256-byte messages published beforehand:
//
//	latent     jspull.Consumer Inspect, Next and a verified +ACK over one
//	           conn.Conn
//	core       nats.go core request/reply with the same wire bodies: the
//	           consumer-info request, the same pull body, "+ACK" with a
//	           reply subject and the empty receipt awaited
//	jetstream  nats.go jetstream: Consumer.Info, Consumer.Fetch(1) with
//	           FetchMaxWait(100 ms) and FetchMaxBytes, Msg.DoubleAck (it
//	           cannot send no_wait together with an expiry)
//
// two floors in the same rotation, three bare round trips per visit (a
// request to a subject without subscribers, answered 503 by the broker's
// read loop) over conn.Conn and over nats.go, so that each loop's CPU can be
// read above what its three round trips cost on the machine at hand; after
// the rounds, -host more visits of each message loop with another
// goroutine receiving from a 1 ms ticker, whose lateness shows what the
// loop costs the rest of an embedding program; and two visits to an empty
// consumer: one Inspect that proves it empty,
// and the no-wait pull with the 100 ms expiry that the broker holds until
// it expires. Every user holds exactly the permissions jspull derives. For
// each loop it reports steps per second, latency percentiles, allocations
// and bytes per visit (runtime.MemStats around the loop) and client CPU per
// visit (getrusage of this process; the broker is a separate process).
// Every loop is bounded in count and in time; afterwards the consumers'
// counters are checked (one delivery and one acknowledgement per visit),
// and the broker is stopped and its directory removed.
//
// # -mode idle
//
// What idle consumers cost, against one pinned nats-server (handshake-first
// TLS, operator mode, its HTTP monitor on 127.0.0.1 for the broker's
// counts), in one run with two accounts, each with one memory stream and
// 256 empty durable consumers:
//
//	latent   trigger.Install of 16 and of 256 bindings (consumers with the
//	         profile's exact configuration), the reference host, Run for
//	         the window with poll interval 10 ms and 100 ms
//	nats.go  one connection, jetstream.New, then Consumer and Consume with
//	         the default options for each of 16 and of 256 consumers
//	         (created as nats.go's CreateConsumer would with a durable
//	         name and a filter: the profile's max_batch 1 and 100 ms
//	         max_expires refuse Consume's default pull)
//
// For each phase: goroutines and open descriptors above the phase's
// baseline (sampled at the window's middle and end), live heap, heap in
// use and stacks in use above it after collections, the broker's messages
// in from and out to the measured connection (connz) and in total (varz)
// per second, the client's CPU and allocations per second, for latent the
// visits (Monitor) and the installation's own heap, for nats.go its sent
// messages (Stats) and the pull requests the broker holds (num_waiting).
// Then explicit Steps to empty consumers of 16 and 256 bindings: latency,
// requests and replies per Step (connz), allocations and CPU per Step. Go
// exposes no count of timers; Run's one timer shows in its pacing (visits
// per second follow the poll interval, not the bindings). Both users hold
// stream-scoped wildcard grants (see idleGrants). Every wait is bounded,
// every goroutine and connection stopped and counted back to its baseline,
// and the broker stopped and its directory removed.
//
// # -mode cluster
//
// The pull loops on a cluster of -cluster nodes (3 by default) of the
// pinned nats-server, the stream and every consumer replicated on each
// node, every connection pinned to node 0 and the leaders placed on node 1
// (-cluster-leader remote) or node 0 (local); the loops read a
// replicated consumer's "409 Batch Completed" before its message. For
// each loop and for one consumer-info visit to an empty consumer of each
// client: steps per second, latency, client CPU, and the broker's CPU per
// visit read from every node's /proc/<pid>/stat, raw and net of the
// nodes' background in windows where nothing runs. See runCluster.
//
// # -mode latency
//
// Publish-to-activation latency on one broker: installations of 16, 64
// and 256 bindings (and 256 as four of 64) at poll intervals of 10 and
// 100 ms, then nats.go's Consume() on as many consumers, each fed the
// same bounded, seeded stream of events. See runLatency.
//
// Usage:
//
//	go run . [-shapes regexp] [-count 5] [-test.benchtime 1s]
//	go run . -mode pull [-rounds 5] [-steps 2000] [-warmup 200] [-empty 20]
//	         [-round-time 1m] [-storage memory|file] [-server path]
//	go run . -mode idle [-idle-time 35s] [-idle-small 16] [-idle-visits 512]
//	         [-server path]
//	go run . -mode cluster [-cluster 3] [-cluster-leader remote|local]
//	         [-cluster-empty 1000] [-cluster-held 0] [-cluster-idle 5s]
//	         [the -mode pull flags but -empty and -host]
//	go run . -mode latency [-lat-rate 50] [-lat-time 4s] [-server path]
package main
