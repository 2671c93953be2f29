package trigger

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// TestActionFor lists every Outcome at a first delivery, a middle one and
// the last one: the profile's table, exhaustively.
func TestActionFor(t *testing.T) {
	const maxDeliver = 3
	tests := []struct {
		outcome            Outcome
		first, mid, last   pull.Action
		retryable          bool
		termReasonAtFirst  string
		commandAtFirstText string
	}{
		{OutcomeSuccess, pull.ActionAck, pull.ActionAck, pull.ActionAck, false, "", "+ACK"},
		{OutcomeDeclaredFailure, pull.ActionTerm, pull.ActionTerm, pull.ActionTerm, false, "declared failure", "+TERM declared failure"},
		{OutcomeInvalidArguments, pull.ActionTerm, pull.ActionTerm, pull.ActionTerm, false, "invalid arguments", "+TERM invalid arguments"},
		{OutcomeIncompatibleContract, pull.ActionTerm, pull.ActionTerm, pull.ActionTerm, false, "incompatible contract", "+TERM incompatible contract"},
		{OutcomeAuthenticationRejected, pull.ActionTerm, pull.ActionTerm, pull.ActionTerm, false, "authentication rejected", "+TERM authentication rejected"},
		{OutcomePermissionRejected, pull.ActionTerm, pull.ActionTerm, pull.ActionTerm, false, "permission rejected", "+TERM permission rejected"},
		{OutcomeTimeout, pull.ActionNak, pull.ActionNak, pull.ActionExhausted, true, "", `-NAK {"delay":500000000}`},
		{OutcomeCancelled, pull.ActionNak, pull.ActionNak, pull.ActionExhausted, true, "", `-NAK {"delay":500000000}`},
		{OutcomePlatformFailure, pull.ActionNak, pull.ActionNak, pull.ActionExhausted, true, "", `-NAK {"delay":500000000}`},
		// Outside the list: a platform failure.
		{0, pull.ActionNak, pull.ActionNak, pull.ActionExhausted, true, "", `-NAK {"delay":500000000}`},
		{Outcome(numOutcomes + 1), pull.ActionNak, pull.ActionNak, pull.ActionExhausted, true, "", `-NAK {"delay":500000000}`},
	}
	seen := map[Outcome]bool{}
	for _, tc := range tests {
		seen[tc.outcome] = true
		t.Run(tc.outcome.String(), func(t *testing.T) {
			got := []pull.Action{
				ActionFor(tc.outcome, 1, maxDeliver),
				ActionFor(tc.outcome, 2, maxDeliver),
				ActionFor(tc.outcome, maxDeliver, maxDeliver),
				ActionFor(tc.outcome, maxDeliver+1, maxDeliver),
			}
			want := []pull.Action{tc.first, tc.mid, tc.last, tc.last}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("actions at deliveries 1, 2, max, max+1 (-want +got):\n%s", diff)
			}
			if got := tc.outcome.Retryable(); got != tc.retryable {
				t.Errorf("Retryable = %v, want %v", got, tc.retryable)
			}
			cmd, send := commandFor(tc.first, tc.outcome, 500*time.Millisecond)
			if !send {
				t.Fatalf("commandFor(%v) sends nothing", tc.first)
			}
			if diff := cmp.Diff(tc.commandAtFirstText, cmdText(cmd)); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if err := cmd.Validate(); err != nil {
				t.Errorf("command invalid: %v", err)
			}
		})
	}
	for o := Outcome(1); int(o) <= numOutcomes; o++ {
		if !seen[o] {
			t.Errorf("outcome %v missing from the table", o)
		}
	}
}

// TestActionForMaxDeliverOne: with one delivery allowed, a retryable
// failure is exhausted at once.
func TestActionForMaxDeliverOne(t *testing.T) {
	if got := ActionFor(OutcomeTimeout, 1, 1); got != pull.ActionExhausted {
		t.Errorf("ActionFor(timeout, 1, 1) = %v, want exhausted", got)
	}
}

// TestCommandFor lists every Action.
func TestCommandFor(t *testing.T) {
	tests := []struct {
		action pull.Action
		send   bool
		want   jspull.Command
	}{
		{pull.ActionAck, true, jspull.Ack()},
		{pull.ActionTerm, true, jspull.Term("declared failure")},
		{pull.ActionNak, true, jspull.Nak(time.Second)},
		{pull.ActionExhausted, true, jspull.Term("exhausted")},
		{pull.ActionNone, false, jspull.Command{}},
		{0, false, jspull.Command{}},
		{pull.ActionNone + 1, false, jspull.Command{}},
	}
	for _, tc := range tests {
		t.Run(tc.action.String(), func(t *testing.T) {
			got, send := commandFor(tc.action, OutcomeDeclaredFailure, time.Second)
			if send != tc.send {
				t.Errorf("send = %v, want %v", send, tc.send)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnumStrings names every value of the runtime's enumerations and one
// past the end of each.
func TestEnumStrings(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{Outcome(0).String(), "none"},
		{OutcomeSuccess.String(), "success"},
		{OutcomeDeclaredFailure.String(), "declared failure"},
		{OutcomeInvalidArguments.String(), "invalid arguments"},
		{OutcomeIncompatibleContract.String(), "incompatible contract"},
		{OutcomeAuthenticationRejected.String(), "authentication rejected"},
		{OutcomePermissionRejected.String(), "permission rejected"},
		{OutcomeTimeout.String(), "timeout"},
		{OutcomeCancelled.String(), "cancelled"},
		{OutcomePlatformFailure.String(), "platform failure"},
		{Outcome(numOutcomes + 1).String(), "Outcome(10)"},
		{pull.Action(0).String(), "none"},
		{pull.ActionAck.String(), "ack"},
		{pull.ActionTerm.String(), "term"},
		{pull.ActionNak.String(), "nak"},
		{pull.ActionExhausted.String(), "exhausted"},
		{pull.ActionNone.String(), "none"},
		{(pull.ActionNone + 1).String(), "Action(6)"},
		{ResultSkipped.String(), "skipped"},
		{ResultEmpty.String(), "empty"},
		{ResultDelivered.String(), "delivered"},
		{ResultFailed.String(), "failed"},
		{ResultShutdown.String(), "shutdown"},
		{(ResultShutdown + 1).String(), "StepResult(6)"},
		{pull.AckNone.String(), "none"},
		{pull.AckVerified.String(), "verified"},
		{pull.AckVerifiedLate.String(), "verified late"},
		{pull.AckUncertain.String(), "uncertain"},
		{(pull.AckNone + 1).String(), "AckState(5)"},
		{ErrorClass(0).String(), "none"},
		{ErrorClass(numErrorClasses + 1).String(), "ErrorClass(24)"},
		{DialFailure(0).String(), "none"},
		{DialRefused.String(), "refused"},
		{DialTLS.String(), "tls"},
		{DialAuthorization.String(), "authorization"},
		{DialOther.String(), "other"},
		{DialFailure(numDialFailures + 1).String(), "DialFailure(5)"},
		{ResourceBytes.String(), "bytes"},
		{ResourceProviderConnections.String(), "provider connections"},
		{(ResourceProviderConnections + 1).String(), "Resource(11)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
	names := map[string]ErrorClass{}
	for c := ErrorClass(1); int(c) <= numErrorClasses; c++ {
		s := c.String()
		if prev, dup := names[s]; dup || s == "none" || strings.HasPrefix(s, "ErrorClass(") {
			t.Errorf("class %d named %q (also %d)", c, s, prev)
		}
		names[s] = c
	}
	for r := ResourceBytes; r <= ResourceProviderConnections; r++ {
		if got := r.String(); got == "" || got[0] == 'R' {
			t.Errorf("resource %d has no name: %q", r, got)
		}
	}
}
