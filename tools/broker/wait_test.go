package broker_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// TestWait: Wait reports the end of the running process, whoever ended
// it, with ErrServerExited; the end of ctx with ctx's error; a broker not
// running with ErrNotRunning; after Restart it watches the new process.
func TestWait(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ended, end := context.WithCancel(ctx)
	end()

	steps := []struct {
		name   string
		before func() error
		ctx    context.Context
		want   error
	}{
		{"running, ctx ended", func() error { return nil }, ended, context.Canceled},
		{"killed from outside", func() error { return syscall.Kill(b.PID(), syscall.SIGKILL) }, ctx, broker.ErrServerExited},
		{"Restart, ctx ended", func() error { return b.Restart(ctx) }, ended, context.Canceled},
		{"Kill", b.Kill, ctx, broker.ErrNotRunning},
		{"Restart, then killed from outside", func() error {
			if err := b.Restart(ctx); err != nil {
				return err
			}
			return syscall.Kill(b.PID(), syscall.SIGKILL)
		}, ctx, broker.ErrServerExited},
	}
	for _, s := range steps {
		if err := s.before(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if err := b.Wait(s.ctx); !errors.Is(err, s.want) {
			t.Errorf("%s: Wait = %v, want %v", s.name, err, s.want)
		}
	}
}
