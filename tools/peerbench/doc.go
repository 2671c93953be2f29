// Command peerbench measures the byte streams of parser/frametest through
// this project's parser and through nats.go's receive path in one run, and
// prints the raw benchmark lines and the ratios for docs/BENCHMARKS.md.
//
// It lives in its own module so that nats.go never enters the main module's
// package graph. Every network connection is to a fake server it starts on
// 127.0.0.1, which streams a bounded number of frames and is stopped and
// waited for before the next case.
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
// Usage:
//
//	go run . [-shapes regexp] [-count 5] [-test.benchtime 1s]
package main
