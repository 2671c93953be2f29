package metrics

import (
	"io"

	"github.com/latent-systems/latent-nats/trigger"
)

// Write writes one scrape of m to w: its Snapshot and LastStep, rendered by
// Append into a new buffer and written with one call to w.Write. It returns
// ErrNoMonitor for a nil m, else the error of w.Write.
//
// The snapshot and the last step are read one after the other, each under
// the monitor's lock: a step may finish in between, so the last step can be
// one the counts do not include yet.
func Write(w io.Writer, m *trigger.Monitor) error {
	if m == nil {
		return ErrNoMonitor
	}
	s := m.Snapshot()
	last, ok := m.LastStep()
	b := Append(make([]byte, 0, sizeHint(len(s.Bindings))), s, last, ok)
	_, err := w.Write(b)
	return err
}
