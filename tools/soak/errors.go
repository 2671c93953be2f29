package soak

import "errors"

// Sentinels matched with errors.Is.
var (
	// ErrInvalidOptions: an Options field is out of its bounds.
	ErrInvalidOptions = errors.New("soak: invalid options")
	// ErrSetup: the broker, provisioning or installation failed before
	// the run.
	ErrSetup = errors.New("soak: setup failed")
	// ErrRuntime: Run returned an error of its own, not for its context.
	ErrRuntime = errors.New("soak: runtime stopped with an error")
	// ErrVerdict: the ledger's verdict failed (wrapping
	// ledger.ErrVerdict), or the consumers did not settle (wrapping a
	// *ledger.SettleError: how many reads failed, the first and the last
	// error, when the last read succeeded; and the broker's state).
	ErrVerdict = errors.New("soak: verdict failed")
	// ErrHarness: a fault was not healed when the run began settling
	// (the broker not running or still paused, the link not passing):
	// the harness's failure, not the runtime's, and no verdict is drawn.
	ErrHarness = errors.New("soak: a fault was not healed")
)
