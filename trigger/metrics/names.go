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

// Per-binding consumer gauges, one per trigger.ConsumerState field: the
// broker's figures as of the binding's last consumer info. The timestamp
// is written for every binding (0 before a first reading); the others only
// once the binding has one, since a value before it would read as none
// pending.
const (
	nameConsumerPending = prefix + "consumer_pending"
	helpConsumerPending = "num_pending at the binding's last consumer info: stream messages matching its filter never delivered to its consumer."

	nameConsumerAckPending = prefix + "consumer_ack_pending"
	helpConsumerAckPending = "num_ack_pending at the binding's last consumer info: deliveries awaiting an acknowledgement, a NAKed one waiting out its delay included."

	nameConsumerRedelivered = prefix + "consumer_redelivered"
	helpConsumerRedelivered = "num_redelivered at the binding's last consumer info: messages delivered more than once whose count the broker still keeps."

	nameConsumerLeader = prefix + "consumer_info_leader"
	helpConsumerLeader = "1 when the binding's last consumer info was the consumer leader's view (its cluster state names a leader, or the broker is outside a cluster), 0 when a replica answered during a first election."

	nameConsumerTime = prefix + "consumer_info_timestamp_seconds"
	helpConsumerTime = "When the runtime read the binding's last consumer info, in seconds since the Unix epoch on its own clock; 0 before the first. Its age is time() minus this."
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
