// Package ledger owns the account that fault scenarios and the soak keep of
// a trigger runtime's work, and the verdict drawn from it; it refuses to be
// anything but test support: no network of its own (ReadView uses the
// caller's), no broker, no use by the core packages.
//
// A ledger holds three records:
//
//   - the events published: binding ID and stream sequence ([Ledger.Published]);
//   - every activation the host saw: binding, sequence and delivery count
//     ([Ledger.Activated], called from the host's function), and what the
//     runtime reported of its step: outcome, broker action and
//     acknowledgement state ([Ledger.ObserveStep]: a [Ledger] is a
//     trigger.StepObserver, and [Ledger.Host] wraps a host so that it is one);
//   - the broker's final view of each consumer as its administrator sees
//     it: ack floor, pending, awaiting acknowledgement, redelivered, and
//     the binding's messages a work-queue stream still holds
//     ([ConsumerView], read by [ReadView] through the caller's connection,
//     polled by [WaitSettled]).
//
// [Ledger.Verdict] draws the verdict:
//
//   - nothing lost: every published event was activated at least once and
//     every consumer ends with nothing pending, nothing awaiting an
//     acknowledgement and, where the stream removes settled messages,
//     nothing of its binding left in the stream (the ack floor is reported,
//     not judged: the broker may restore a stale one after a crash);
//   - every re-execution explained: an event activated again only because
//     the runtime's previous activation of it left no verified settlement
//     (its acknowledgement uncertain, never sent or refused, a shutdown, a
//     negative acknowledgement asking for it, a receipt verified after the
//     ack wait, or no report at all because the runtime's process died);
//     re-executions after a verified acknowledgement are counted apart
//     ([Verdict.AfterVerified]): the critical figure, which a broker that
//     lost a committed acknowledgement (a crash before its state reached the
//     disk) produces.
//
// [Health] checks the third promise, the runtime healthy afterwards:
// goroutines, open descriptors and pool usage back to their baseline.
package ledger
