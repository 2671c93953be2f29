package jspull

import (
	"fmt"
	"strconv"

	"github.com/latent-systems/latent-nats/conn"
)

// Kind classifies the reply to a pull request. Every status nats-server
// 2.14.6 sends to a pull request has its own Kind; a status outside this
// list is an error (ErrUnknownStatus), never a Kind.
type Kind uint8

const (
	// KindMessage: one message was delivered.
	KindMessage Kind = iota + 1
	// KindNoMessages: 404 No Messages.
	KindNoMessages
	// KindRequestTimeout: 408 Request Timeout, the request's expiry passed
	// with nothing to deliver (the broker holds a no-wait request with an
	// expiry while nothing is pending, or while the consumer is at
	// max_ack_pending).
	KindRequestTimeout
	// KindRequestsPending: 408 Requests Pending, earlier waiting requests
	// already claim every pending message.
	KindRequestsPending
	// KindInterestExpired: 408 Interest Expired, the requester's interest
	// vanished (only for requests crossing an account export).
	KindInterestExpired
	// KindMaxWaiting: 409 Exceeded MaxWaiting, another pull is waiting.
	KindMaxWaiting
	// KindMessageTooLarge: 409 Message Size Exceeds MaxBytes, the next
	// message is larger than the request's max_bytes: a stored message over
	// the payload ceiling, which needs operator correction.
	KindMessageTooLarge
	// KindMaxRequestBatch: 409 Exceeded MaxRequestBatch of <n>.
	KindMaxRequestBatch
	// KindMaxRequestExpires: 409 Exceeded MaxRequestExpires of <duration>.
	KindMaxRequestExpires
	// KindMaxRequestMaxBytes: 409 Exceeded MaxRequestMaxBytes of <n>.
	KindMaxRequestMaxBytes
	// KindConsumerDeleted: 409 Consumer Deleted while the request waited.
	KindConsumerDeleted
	// KindPushBased: 409 Consumer is push based.
	KindPushBased
	// KindLeadershipChange: 409 Leadership Change (clustered consumers).
	KindLeadershipChange
	// KindServerShutdown: 409 Server Shutdown.
	KindServerShutdown
	// KindBatchCompleted: 409 Batch Completed. The broker sends it after a
	// delivered message when max_bytes had room left. As the first reply
	// to a request it comes before the message it follows (a replicated
	// consumer): Next reads that message through a Requester's Await
	// method (see Requester); only a Requester without one sees this Kind.
	KindBatchCompleted
	// KindNoResponders: 503, nothing listens on the pull subject (the
	// consumer does not exist).
	KindNoResponders
	// KindBadRequest: 400 Bad Request - <reason>.
	KindBadRequest
)

// String returns the Kind's name, or "Kind(n)" outside the enumeration.
func (k Kind) String() string {
	switch k {
	case KindMessage:
		return "message"
	case KindNoMessages:
		return "no messages"
	case KindRequestTimeout:
		return "request timeout"
	case KindRequestsPending:
		return "requests pending"
	case KindInterestExpired:
		return "interest expired"
	case KindMaxWaiting:
		return "exceeded max waiting"
	case KindMessageTooLarge:
		return "message size exceeds max bytes"
	case KindMaxRequestBatch:
		return "exceeded max request batch"
	case KindMaxRequestExpires:
		return "exceeded max request expires"
	case KindMaxRequestMaxBytes:
		return "exceeded max request max bytes"
	case KindConsumerDeleted:
		return "consumer deleted"
	case KindPushBased:
		return "consumer is push based"
	case KindLeadershipChange:
		return "leadership change"
	case KindServerShutdown:
		return "server shutdown"
	case KindBatchCompleted:
		return "batch completed"
	case KindNoResponders:
		return "no responders"
	case KindBadRequest:
		return "bad request"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Class groups Kinds by what the caller does next.
type Class uint8

const (
	// ClassMessage: a message to run and acknowledge.
	ClassMessage Class = iota + 1
	// ClassEmpty: nothing to deliver now.
	ClassEmpty
	// ClassBusy: the consumer's capacity is taken (another waiting request,
	// earlier requests claiming the pending messages); try on a later visit.
	ClassBusy
	// ClassOversize: a stored message does not fit the ceiling; the broker
	// will not deliver it and an operator must correct it.
	ClassOversize
	// ClassMisconfigured: the consumer refuses the profile's request (its
	// limits or type changed since Inspect); an operator must correct it.
	ClassMisconfigured
	// ClassGone: the consumer no longer exists.
	ClassGone
	// ClassUnavailable: the broker is changing leader or shutting down.
	ClassUnavailable
)

// String returns the Class's name, or "Class(n)" outside the enumeration.
func (c Class) String() string {
	switch c {
	case ClassMessage:
		return "message"
	case ClassEmpty:
		return "empty"
	case ClassBusy:
		return "busy"
	case ClassOversize:
		return "oversize"
	case ClassMisconfigured:
		return "misconfigured"
	case ClassGone:
		return "gone"
	case ClassUnavailable:
		return "unavailable"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Class returns the Class of k, 0 outside the enumeration.
func (k Kind) Class() Class {
	switch k {
	case KindMessage:
		return ClassMessage
	case KindNoMessages, KindRequestTimeout, KindBatchCompleted:
		return ClassEmpty
	case KindRequestsPending, KindMaxWaiting, KindInterestExpired:
		return ClassBusy
	case KindMessageTooLarge:
		return ClassOversize
	case KindMaxRequestBatch, KindMaxRequestExpires, KindMaxRequestMaxBytes, KindPushBased, KindBadRequest:
		return ClassMisconfigured
	case KindConsumerDeleted, KindNoResponders:
		return ClassGone
	case KindLeadershipChange, KindServerShutdown:
		return ClassUnavailable
	}
	return 0
}

// Status descriptions nats-server 2.14.6 sends to pull requests
// (consumer.go processNextMsgRequest, processWaiting, nextWaiting,
// releaseAnyPendingRequests, checkPendingRequests; jetstream.go
// signalPullConsumers; client.go for 503, which has no description).
const (
	descNoMessages        = "No Messages"
	descRequestTimeout    = "Request Timeout"
	descRequestsPending   = "Requests Pending"
	descInterestExpired   = "Interest Expired"
	descMaxWaiting        = "Exceeded MaxWaiting"
	descMessageTooLarge   = "Message Size Exceeds MaxBytes"
	descMaxRequestBatch   = "Exceeded MaxRequestBatch of "
	descMaxRequestExpires = "Exceeded MaxRequestExpires of "
	descMaxRequestBytes   = "Exceeded MaxRequestMaxBytes of "
	descConsumerDeleted   = "Consumer Deleted"
	descPushBased         = "Consumer is push based"
	descLeadershipChange  = "Leadership Change"
	descServerShutdown    = "Server Shutdown"
	descBatchCompleted    = "Batch Completed"
	descBadRequest        = "Bad Request - "
)

// statusKind maps a status line to its Kind, or 0 when the status is not
// one nats-server 2.14.6 sends to a pull request. Descriptions with a
// variable part ("of <n>", "- <reason>") need a non-empty one.
func statusKind(code int, desc []byte) Kind {
	switch code {
	case 404:
		if string(desc) == descNoMessages {
			return KindNoMessages
		}
	case 408:
		switch string(desc) {
		case descRequestTimeout:
			return KindRequestTimeout
		case descRequestsPending:
			return KindRequestsPending
		case descInterestExpired:
			return KindInterestExpired
		}
	case 409:
		return status409(desc)
	case statusNoResponders:
		if len(desc) == 0 {
			return KindNoResponders
		}
	case 400:
		if hasSuffixAfter(desc, descBadRequest) {
			return KindBadRequest
		}
	}
	return 0
}

func status409(desc []byte) Kind {
	switch string(desc) {
	case descMaxWaiting:
		return KindMaxWaiting
	case descMessageTooLarge:
		return KindMessageTooLarge
	case descConsumerDeleted:
		return KindConsumerDeleted
	case descPushBased:
		return KindPushBased
	case descLeadershipChange:
		return KindLeadershipChange
	case descServerShutdown:
		return KindServerShutdown
	case descBatchCompleted:
		return KindBatchCompleted
	}
	switch {
	case hasSuffixAfter(desc, descMaxRequestBatch):
		return KindMaxRequestBatch
	case hasSuffixAfter(desc, descMaxRequestExpires):
		return KindMaxRequestExpires
	case hasSuffixAfter(desc, descMaxRequestBytes):
		return KindMaxRequestMaxBytes
	}
	return 0
}

// hasSuffixAfter reports whether desc is prefix followed by at least one
// byte.
func hasSuffixAfter(desc []byte, prefix string) bool {
	return len(desc) > len(prefix) && string(desc[:len(prefix)]) == prefix
}

// statusNoResponders is the status the broker answers a request with when
// nothing listens on its subject (nats-server 2.14.6 client.go), with no
// description.
const statusNoResponders = 503

// noRespondersReply reports the broker's answer that nothing listens on a
// request's subject: status 503, no description and no payload. A pull's
// reply is classified by statusKind, which names it KindNoResponders.
func noRespondersReply(rep *conn.Reply) bool {
	return rep.Status == statusNoResponders && len(rep.Description) == 0 && len(rep.Payload) == 0
}

// ReplyStatus maps the status of the reply to a JetStream API request for
// a caller with errors of its own: no status is nil, the broker's answer
// that nothing listens (noRespondersReply) is noResponders, and any other
// status is unexpected, wrapped with the code.
func ReplyStatus(rep *conn.Reply, noResponders, unexpected error) error {
	switch {
	case rep.Status == 0:
		return nil
	case noRespondersReply(rep):
		return noResponders
	}
	return fmt.Errorf("%w: %d", unexpected, rep.Status)
}
