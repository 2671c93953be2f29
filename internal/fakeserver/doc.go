// Package fakeserver owns a scripted TLS-first server on 127.0.0.1 for the
// client behaviours a real broker will not produce: one listener, which
// plays the same script of raw steps on every accepted connection and
// records what each client sent, and it refuses to interpret the protocol:
// it never parses, validates or answers anything the script does not say.
//
// A script is a list of [Step] values:
//
//   - [Handshake] runs the TLS server handshake (with a generated
//     certificate whose only SAN is the DNS name [Server.ServerName]);
//     steps before it speak plaintext on the socket, steps after it speak
//     inside TLS. [HandshakeCut] starts the handshake and cuts the
//     connection after a number of handshake bytes.
//   - [ReadClientHello], [SendAlert] and [SendRaw] work on the raw socket:
//     read the client's first TLS record, send a TLS alert record, send any
//     bytes outside TLS.
//   - [Send], [ExpectPrefix] and [ExpectMatch] write bytes and read one
//     line (at most Config.MaxLine bytes, LF included) at the current
//     layer.
//   - [WaitClose] reads until the client closes; [Stall] does nothing
//     until the server stops; [Hangup] closes the connection.
//
// When the script ends, the connection is closed. Everything read is
// recorded (bounded by Config.MaxRecord) and returned by [Server.Session]
// with the first failed step, if any, as a [*StepError].
//
// Typical use in a client test:
//
//	srv, err := fakeserver.Start(ctx, fakeserver.Config{Script: append(
//		fakeserver.Greeting(`{"nonce":"abc","headers":true}`),
//		fakeserver.Send([]byte("MSG foreign 99 5\r\nhello\r\n")),
//		fakeserver.WaitClose(),
//	)})
//	defer srv.Close()
//	... dial srv.Addr() with srv.ServerName() and srv.RootCAs() ...
//	rec, err := srv.Session(ctx, 0)
package fakeserver
