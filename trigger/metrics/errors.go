package metrics

import "errors"

// ErrNoMonitor is returned by Write for a nil *trigger.Monitor.
var ErrNoMonitor = errors.New("metrics: nil monitor")
