// Package metrics owns the Prometheus text exposition (format 0.0.4) of a
// trigger.Monitor: its Snapshot counts and consumer states and its
// LastStep report, written
// with the standard library into a caller's buffer, and an http.Handler an
// embedder can mount. It refuses identifiers and text as labels: label
// values are binding indexes and fixed enum names, and no subject, stream,
// consumer, binding ID, tenant ID, logical ID, payload or error text ever
// reaches the output.
//
// Contents:
//
//   - The metric family names and their help texts; ContentType and the
//     buffer size hints.
//   - Append, the renderer, and its line encoders; Write, one scrape of a
//     Monitor to an io.Writer; Handler, GET and HEAD only.
//   - Sentinels.
//
// # Labels
//
// The label sets are fixed and bounded. A binding is named by its index in
// Config.Bindings (binding="0" .. binding="255"), never by its ID. The other
// labels take the String names of the runtime's enums: action
// (pull.Action), outcome (trigger.Outcome), class (trigger.ErrorClass),
// resource (trigger.Resource), dial_failure (trigger.DialFailure), result
// (trigger.StepResult) and ack (pull.AckState). A zero enum value, meaning "not applicable", is the
// empty label value. Every enum value of a labelled family is written, zero
// counts included, so a series exists from the first scrape and rate() sees
// its first increment.
//
// What is not exported: Snapshot.LogicalID (an identifier: add it with the
// scrape configuration's target labels) and Snapshot.Totals (the sum of the
// per-binding series; sum by () in a query gives it).
//
// # Families
//
// Installation:
//
//	latent_nats_trigger_epoch                       gauge    configuration epoch
//	latent_nats_trigger_bindings                    gauge    configured bindings
//	latent_nats_trigger_steps_total                 counter  Steps
//	latent_nats_trigger_dials_total                 counter  Dials
//	latent_nats_trigger_connections_replaced_total  counter  Replaced
//	latent_nats_trigger_credential_rotations_total  counter  Rotations
//
// Per binding (label binding), one per trigger.Counts field:
//
//	latent_nats_trigger_visits_total                     Visits
//	latent_nats_trigger_skipped_total                    Skipped
//	latent_nats_trigger_empty_total                      Empty
//	latent_nats_trigger_empty_pulls_total                EmptyPulls
//	latent_nats_trigger_awaiting_redelivery_total        Awaiting
//	latent_nats_trigger_delivered_total                  Delivered
//	latent_nats_trigger_acknowledgements_total{action}   Acked, Termed, Nacked, Exhausted
//	latent_nats_trigger_acknowledgements_uncertain_total Uncertain
//	latent_nats_trigger_acknowledgements_late_total      Late
//	latent_nats_trigger_unacknowledged_total             Unacknowledged
//	latent_nats_trigger_failed_total                     Failed
//	latent_nats_trigger_outcomes_total{outcome}          Outcomes
//	latent_nats_trigger_errors_total{class}              Errors
//	latent_nats_trigger_pool_refusals_total{resource}    Refusals
//	latent_nats_trigger_dial_failures_total{dial_failure} DialFailure
//
// Per binding (label binding), gauges of trigger.ConsumerState: the
// broker's figures as of the binding's last consumer info. The timestamp
// is written for every binding, 0 before its first consumer info; the
// others only once it has one (a 0 before it would read as nothing
// pending), so an alert on time() minus the timestamp covers a binding
// never read. Waiting is not written.
//
//	latent_nats_trigger_consumer_pending                  Pending
//	latent_nats_trigger_consumer_ack_pending              AckPending
//	latent_nats_trigger_consumer_redelivered              Redelivered
//	latent_nats_trigger_consumer_info_leader              Leader (1 or 0)
//	latent_nats_trigger_consumer_info_timestamp_seconds   At
//
// The time of the reading, not its age, is exported: an age computed at
// the scrape would make the exposition depend on a clock, and
// time() - latent_nats_trigger_consumer_info_timestamp_seconds gives it in
// a query, still rising when the runtime stops updating it.
//
// The last step, written only once there is one (trigger.Monitor.LastStep):
//
//	latent_nats_trigger_last_step_info{binding,result,outcome,action,ack,class,resource,dial_failure} 1
//	latent_nats_trigger_last_step_number             gauge  StepReport.Step
//	latent_nats_trigger_last_step_epoch              gauge  StepReport.Epoch
//	latent_nats_trigger_last_step_timestamp_seconds  gauge  StepReport.At
//	latent_nats_trigger_last_step_stream_sequence    gauge  StepReport.StreamSeq
//	latent_nats_trigger_last_step_delivery_count     gauge  StepReport.Delivered
//	latent_nats_trigger_last_step_route_generation   gauge  StepReport.RouteGeneration
//	latent_nats_trigger_last_step_wait_seconds       gauge  StepReport.Wait
//
// StepReport.Cause, the host's typed reason for an outcome, is not written:
// it is an error value, not a fixed set of labels.
//
// # Allocation
//
// Append writes into dst and allocates nothing once dst has the capacity
// (a scrape into a reused buffer). Write and Handler add what
// trigger.Monitor.Snapshot allocates (its copies of the per-binding counts
// and consumer states);
// Handler reuses its output buffers.
package metrics
