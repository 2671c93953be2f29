package wire

const (
	// MaxControlLine caps an encoded PUB, HPUB or SUB control line,
	// op and CRLF included: 4096 bytes, the server's default
	// max_control_line (which counts the arguments only, so this is
	// slightly stricter). CONNECT is not capped here: its size follows from
	// the credentials, and a server configured with a larger
	// max_control_line accepts more.
	MaxControlLine = 4096

	// MaxOutboundHeader caps a header block this client writes,
	// "NATS/1.0\r\n" through the terminating blank line, both CRLFs
	// counted: 8 KiB, the cap the parser applies to the blocks it receives
	// (parser.MaxHeaderBlock, held equal by internal/pkgcheck's
	// TestBoundsAgree), so that what this client publishes it can also read
	// back.
	MaxOutboundHeader = 8192

	// MaxSize is the largest size the server parses (9 digits), the size
	// token this package writes at most; parser reads at most as many
	// digits (its tests hold the two together).
	MaxSize = 999_999_999
)
