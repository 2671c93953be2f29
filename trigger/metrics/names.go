package metrics

// prefix begins every family name.
const prefix = "latent_nats_trigger_"

// Family types of the exposition format.
const (
	typeCounter = "counter"
	typeGauge   = "gauge"
)

// Label names. Their values are binding indexes and the String names of
// the trigger package's enums, never identifiers or text from a broker.
const (
	labelBinding  = "binding"
	labelAction   = "action"
	labelOutcome  = "outcome"
	labelClass    = "class"
	labelResource = "resource"
	labelDial     = "dial_failure"
	labelResult   = "result"
	labelAck      = "ack"
)

// Installation families.
const (
	nameEpoch = prefix + "epoch"
	helpEpoch = "Configuration epoch of the installation."

	nameBindings = prefix + "bindings"
	helpBindings = "Bindings in the configuration; the binding label is an index below this."

	nameSteps = prefix + "steps_total"
	helpSteps = "Steps taken by the installation."

	nameDials = prefix + "dials_total"
	helpDials = "Connections dialled by the installation, successfully or not."

	nameReplaced = prefix + "connections_replaced_total"
	helpReplaced = "Idle connections found unusable when a step needed them (closed by the broker, lame duck, idle past MaxIdleAge, credential rotated)."

	nameRotations = prefix + "credential_rotations_total"
	helpRotations = "Tenant credentials rotated into the installation."
)

// Per-binding families, one per trigger.Counts field or array.
const (
	nameVisits = prefix + "visits_total"
	helpVisits = "Steps that selected the binding."

	nameSkipped = prefix + "skipped_total"
	helpSkipped = "Visits a check or reservation stopped before the pull; the reason is counted in " + nameErrors + "."

	nameEmpty = prefix + "empty_total"
	helpEmpty = "Visits that consumer info proved empty (one round trip, no pull)."

	nameEmptyPulls = prefix + "empty_pulls_total"
	helpEmptyPulls = "Visits whose pull found nothing."

	nameAwaiting = prefix + "awaiting_redelivery_total"
	helpAwaiting = "Visits that sent no pull: the binding's one delivery awaits a redelivery the broker cannot make before its NAK delay or ack wait has passed."

	nameDelivered = prefix + "delivered_total"
	helpDelivered = "Messages pulled."

	nameAcks = prefix + "acknowledgements_total"
	helpAcks = "Acknowledgement commands sent, by action (exhausted: +TERM of a retryable failure at the last delivery), verified or not."

	nameUncertain = prefix + "acknowledgements_uncertain_total"
	helpUncertain = "Acknowledgement commands without a verified receipt; the broker may redeliver."

	nameLate = prefix + "acknowledgements_late_total"
	helpLate = "Acknowledgement receipts verified after the ack wait; the broker may have redelivered meanwhile."

	nameUnacknowledged = prefix + "unacknowledged_total"
	helpUnacknowledged = "Deliveries for which no acknowledgement command was sent (shutdown or a refused check)."

	nameFailed = prefix + "failed_total"
	helpFailed = "Visits whose broker exchange failed before a delivery; the class is counted in " + nameErrors + "."

	nameOutcomes = prefix + "outcomes_total"
	helpOutcomes = "Activation outcomes."

	nameErrors = prefix + "errors_total"
	helpErrors = "Steps by class of what went wrong."

	nameRefusals = prefix + "pool_refusals_total"
	helpRefusals = "Shared pool reservations refused, by the limit that refused."

	nameDialFailures = prefix + "dial_failures_total"
	helpDialFailures = "Failed dials (class dial in " + nameErrors + "), by why: refused, tls, authorization or other."
)

// Last-step families, written once the monitor has a report.
const (
	nameLastInfo = prefix + "last_step_info"
	helpLastInfo = "The last step that delivered a message or failed: its binding and fixed enum names; value 1."

	nameLastNumber = prefix + "last_step_number"
	helpLastNumber = "Step number of the last reported step."

	nameLastEpoch = prefix + "last_step_epoch"
	helpLastEpoch = "Configuration epoch of the last reported step."

	nameLastTime = prefix + "last_step_timestamp_seconds"
	helpLastTime = "Start of the last reported step, in seconds since the Unix epoch."

	nameLastSeq = prefix + "last_step_stream_sequence"
	helpLastSeq = "Stream sequence of the last reported delivery, 0 without one."

	nameLastDelivered = prefix + "last_step_delivery_count"
	helpLastDelivered = "Broker delivery count of the last reported delivery, 0 without one."

	nameLastRoute = prefix + "last_step_route_generation"
	helpLastRoute = "Route generation pinned by the last reported step, 0 when none was."

	nameLastWait = prefix + "last_step_wait_seconds"
	helpLastWait = "Pacing after the last reported step, in seconds."
)
