package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/latent-systems/latent-nats/acksubject"
	"net/http"
	"time"
)

// Requester sends one request to the cluster, as a user of the account
// that owns the streams asked about (a tenant's admin), and returns the
// payload of its reply. It must bound its blocking by ctx's deadline, and
// return an error for a request that got no reply, including a status
// reply such as 503 no responders. The cluster's methods copy nothing out
// of the payload they are given but what they decode, so a Requester may
// reuse the buffer on its next call. The tools/broker/clustertest package
// adapts the project's connection; this package's own tests use a raw
// client.
type Requester interface {
	Request(ctx context.Context, subject string, payload []byte) ([]byte, error)
}

// RequestFunc is a function as a Requester.
type RequestFunc func(ctx context.Context, subject string, payload []byte) ([]byte, error)

// Request calls f.
func (f RequestFunc) Request(ctx context.Context, subject string, payload []byte) ([]byte, error) {
	return f(ctx, subject, payload)
}

// JetStream API subjects and reply types of nats-server v2.14.6
// (jetstream_api.go: JSApiStreamInfoT, JSApiConsumerInfoT,
// JSApiStreamLeaderStepDownT, JSApiConsumerLeaderStepDownT,
// JSApiStreamCreateT, JSApiStreamDeleteT).
const (
	streamCreatePrefix     = "$JS.API.STREAM.CREATE."
	streamDeletePrefix     = "$JS.API.STREAM.DELETE."
	streamCreateType       = "io.nats.jetstream.api.v1.stream_create_response"
	streamDeleteType       = "io.nats.jetstream.api.v1.stream_delete_response"
	streamInfoPrefix       = "$JS.API.STREAM.INFO."
	consumerInfoPrefix     = "$JS.API.CONSUMER.INFO."
	streamStepDownPrefix   = "$JS.API.STREAM.LEADER.STEPDOWN."
	consumerStepDownPrefix = "$JS.API.CONSUMER.LEADER.STEPDOWN."

	streamInfoType       = "io.nats.jetstream.api.v1.stream_info_response"
	consumerInfoType     = "io.nats.jetstream.api.v1.consumer_info_response"
	streamStepDownType   = "io.nats.jetstream.api.v1.stream_leader_stepdown_response"
	consumerStepDownType = "io.nats.jetstream.api.v1.consumer_leader_stepdown_response"
)

// LeaderAttempt bounds one request of a wait for a leader: while a group
// elects, its info request goes unanswered (only the leader answers), so
// each attempt gives up after this and the wait asks again.
const LeaderAttempt = 2 * time.Second

// asset names a stream, or a stream's consumer.
type asset struct {
	stream, consumer string
}

// validAssetName is the broker's asset-name rule, whose one home is
// acksubject.CheckName.
func validAssetName(s string) bool { return acksubject.CheckName(s) == nil }

func (a asset) validate() error {
	if !validAssetName(a.stream) {
		return &OptionError{Field: "stream name"}
	}
	if a.consumer != "" && !validAssetName(a.consumer) {
		return &OptionError{Field: "consumer name"}
	}
	return nil
}

// infoRequest returns the info subject and the reply type of a.
func (a asset) infoRequest() (string, string) {
	if a.consumer == "" {
		return streamInfoPrefix + a.stream, streamInfoType
	}
	return consumerInfoPrefix + a.stream + "." + a.consumer, consumerInfoType
}

// stepDownRequest returns the step-down subject and the reply type of a.
func (a asset) stepDownRequest() (string, string) {
	if a.consumer == "" {
		return streamStepDownPrefix + a.stream, streamStepDownType
	}
	return consumerStepDownPrefix + a.stream + "." + a.consumer, consumerStepDownType
}

// apiReply is what this package reads of a JetStream API reply: the type,
// an error, the "cluster" object of an info reply (ClusterInfo, whose
// leader is a server_name) and the "success" of a step-down.
type apiReply struct {
	Type  string `json:"type"`
	Error *struct {
		Code    int `json:"code"`
		ErrCode int `json:"err_code"`
	} `json:"error"`
	Cluster *struct {
		Leader string `json:"leader"`
	} `json:"cluster"`
	Success bool `json:"success"`
}

// decodeAPIReply decodes body, which must have type typ, and returns the
// API error it carries as an *APIError.
func decodeAPIReply(body []byte, typ string) (apiReply, error) {
	var r apiReply
	if err := json.Unmarshal(body, &r); err != nil || r.Type != typ {
		return apiReply{}, ErrMalformedReply
	}
	if r.Error != nil {
		return apiReply{}, &APIError{Code: r.Error.Code, ErrCode: r.Error.ErrCode}
	}
	return r, nil
}

// leader asks for a's info through r and returns the node the reply names
// as the leader. In a cluster only the leader answers an info request
// while the group has one, naming itself (jetstream_api.go,
// jsStreamInfoRequest, jsConsumerInfoRequest).
func (c *Cluster) leader(ctx context.Context, r Requester, a asset) (*Broker, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	subject, typ := a.infoRequest()
	body, err := r.Request(ctx, subject, nil)
	if err != nil {
		return nil, err
	}
	reply, err := decodeAPIReply(body, typ)
	if err != nil {
		return nil, err
	}
	if reply.Cluster == nil || reply.Cluster.Leader == "" {
		return nil, ErrNoLeader
	}
	b := c.NodeNamed(reply.Cluster.Leader)
	if b == nil {
		return nil, ErrUnknownNode
	}
	return b, nil
}

// StreamLeader asks for the stream's info ($JS.API.STREAM.INFO.<stream>)
// through r and returns the node its "cluster" object names as leader:
// ErrNoLeader when it names none, ErrUnknownNode when the name is not a
// node's, an *APIError for an error reply (404/10059: no such stream).
func (c *Cluster) StreamLeader(ctx context.Context, r Requester, stream string) (*Broker, error) {
	return c.leader(ctx, r, asset{stream: stream})
}

// ConsumerLeader is StreamLeader for a consumer
// ($JS.API.CONSUMER.INFO.<stream>.<consumer>; 404/10014: no such
// consumer).
func (c *Cluster) ConsumerLeader(ctx context.Context, r Requester, stream, consumer string) (*Broker, error) {
	return c.leader(ctx, r, asset{stream: stream, consumer: consumer})
}

// WaitStreamLeader asks StreamLeader until it names a leader other than
// not (nil: any leader) and returns it, each attempt bounded by
// LeaderAttempt, ClusterPoll apart, all bounded by ctx and MaxClusterWait:
// at the bound the error wraps ErrNoLeader, the context's error and the
// last attempt's. A reply that the stream does not exist (404) ends the
// wait at once.
func (c *Cluster) WaitStreamLeader(ctx context.Context, r Requester, stream string, not *Broker) (*Broker, error) {
	return c.waitLeader(ctx, r, asset{stream: stream}, not)
}

// WaitConsumerLeader is WaitStreamLeader for a consumer.
func (c *Cluster) WaitConsumerLeader(ctx context.Context, r Requester, stream, consumer string, not *Broker) (*Broker, error) {
	return c.waitLeader(ctx, r, asset{stream: stream, consumer: consumer}, not)
}

func (c *Cluster) waitLeader(ctx context.Context, r Requester, a asset, not *Broker) (*Broker, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	return poll(ctx, ErrNoLeader, func(ctx context.Context) (*Broker, bool, error) {
		actx, cancel := context.WithTimeout(ctx, LeaderAttempt)
		defer cancel()
		b, err := c.leader(actx, r, a)
		var apiErr *APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Code == http.StatusNotFound:
			return nil, true, err
		case err != nil:
			return nil, false, err
		case b == not:
			return nil, false, nil
		}
		return b, true, nil
	})
}

// StepDownStream asks the stream's leader to step down
// ($JS.API.STREAM.LEADER.STEPDOWN.<stream>) through r, in favour of node
// to (the request's placement "preferred") or, with to nil, of a peer the
// leader picks. It returns once the leader accepted ("success": true),
// before the new leader is elected: WaitStreamLeader with the old leader
// waits for that. An *APIError is the server's refusal (a preferred node
// that already leads or holds no replica is 400/10005).
func (c *Cluster) StepDownStream(ctx context.Context, r Requester, stream string, to *Broker) error {
	return c.stepDown(ctx, r, asset{stream: stream}, to)
}

// StepDownConsumer is StepDownStream for a consumer
// ($JS.API.CONSUMER.LEADER.STEPDOWN.<stream>.<consumer>).
func (c *Cluster) StepDownConsumer(ctx context.Context, r Requester, stream, consumer string, to *Broker) error {
	return c.stepDown(ctx, r, asset{stream: stream, consumer: consumer}, to)
}

func (c *Cluster) stepDown(ctx context.Context, r Requester, a asset, to *Broker) error {
	if err := a.validate(); err != nil {
		return err
	}
	var payload []byte
	if to != nil {
		if c.Index(to) < 0 {
			return ErrUnknownNode
		}
		var err error
		payload, err = json.Marshal(map[string]any{"placement": map[string]string{"preferred": to.Name()}})
		if err != nil {
			return fmt.Errorf("broker: step-down request: %w", err)
		}
	}
	subject, typ := a.stepDownRequest()
	body, err := r.Request(ctx, subject, payload)
	if err != nil {
		return err
	}
	reply, err := decodeAPIReply(body, typ)
	if err != nil {
		return err
	}
	if !reply.Success {
		return ErrMalformedReply
	}
	return nil
}
