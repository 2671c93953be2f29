// Package frametest owns server frames shaped like real NATS and
// JetStream traffic and a reader that replays them, so that the parser's
// benchmarks and the peer benchmark under tools/ measure the same bytes.
// It refuses nothing and does no I/O beyond memory; it is for tests and
// benchmarks only.
package frametest
