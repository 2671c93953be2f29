package metrics

// ContentType is the media type of the text exposition format, version
// 0.0.4, that Handler serves.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Size hints for a first buffer. They are estimates, not bounds: Append
// grows dst as needed. A binding writes the per-binding counter families
// (the labelled ones once per enum value) and the five consumer gauges:
// about 4.3 KiB with zero counts, 4.6 KiB with six-digit counts and
// 5.4 KiB with every count at its largest. The fixed part, about 6.6 KiB,
// is the help and type lines of every family plus the installation and
// last-step samples. MaxBindings bindings with six-digit counts write
// about 1.2 MB.
const (
	// fixedSizeHint is the bytes written whatever the number of bindings.
	fixedSizeHint = 7 << 10
	// bindingSizeHint is the bytes written per binding with small counts.
	bindingSizeHint = 5 << 10
)

// sizeHint returns a first buffer capacity for n bindings.
func sizeHint(n int) int {
	return fixedSizeHint + n*bindingSizeHint
}
