package metrics

// ContentType is the media type of the text exposition format, version
// 0.0.4, that Handler serves.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Size hints for a first buffer. They are estimates, not bounds: Append
// grows dst as needed. A binding writes 52 sample lines (13 families; the
// labelled ones once per enum value): about 3.7 KiB with zero counts,
// 3.9 KiB with six-digit counts and 4.6 KiB with every count at its
// largest. The fixed part, about 4.8 KiB, is the help and type lines of
// every family plus the installation and last-step samples. MaxBindings
// bindings with six-digit counts write about 1 MB.
const (
	// fixedSizeHint is the bytes written whatever the number of bindings.
	fixedSizeHint = 6 << 10
	// bindingSizeHint is the bytes written per binding with small counts.
	bindingSizeHint = 4<<10 + 512
)

// sizeHint returns a first buffer capacity for n bindings.
func sizeHint(n int) int {
	return fixedSizeHint + n*bindingSizeHint
}
