package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/latent-systems/latent-nats/internal/jspull"
)

// The probe of WaitPlacement: a stream no test names, on a subject no
// test uses, and the error code of nats-server v2.14.6 it meets
// (JSClusterNoPeersErrF 10005; a stream not found is
// jspull.CodeStreamNotFound).
const (
	placementProbe   = "LATENT_PLACEMENT_PROBE"
	placementSubject = "_latent.placement.probe"
	errCodeNoPeers   = 10005
)

// ErrNotPlaced is returned by [Cluster.WaitPlacement] when its bound ended
// before the cluster placed the probe stream.
var ErrNotPlaced = errors.New("broker: cluster does not place a replicated stream")

// WaitPlacement waits until the cluster places a stream of replicas
// replicas: it creates a small memory stream (LATENT_PLACEMENT_PROBE, on
// a subject no one publishes to) through r, the requester of a tenant's
// administrator, and deletes it again. A cluster just formed may refuse
// the placement for a while (400/10005 "no suitable peers for placement,
// peer offline"): its meta leader counts a node only once that node's
// first statistics update has reached it (events.go, remoteServerUpdate;
// the updates start 250 ms apart and double), and a node's first updates
// may go out before its routes are up. Such a refusal, and a request that
// got no reply, are asked again every [ClusterPoll]; any other API error
// ends the wait. It is bounded by ctx and MaxClusterWait; at the bound
// the error wraps ErrNotPlaced and the context's error. The probe is
// deleted before it returns nil.
func (c *Cluster) WaitPlacement(ctx context.Context, r Requester, replicas int) error {
	if replicas < 1 || replicas > c.Size() {
		return &OptionError{Field: "replicas"}
	}
	body, err := json.Marshal(map[string]any{
		"name": placementProbe, "subjects": []string{placementSubject},
		"storage": "memory", "num_replicas": replicas, "max_bytes": 1 << 10,
	})
	if err != nil {
		return err
	}
	_, err = poll(ctx, ErrNotPlaced, func(ctx context.Context) (struct{}, bool, error) {
		reply, err := r.Request(ctx, streamCreatePrefix+placementProbe, body)
		if err != nil {
			return struct{}{}, false, err // unanswered: ask again
		}
		var ae *APIError
		switch _, err := decodeAPIReply(reply, streamCreateType); {
		case errors.As(err, &ae) && ae.ErrCode == errCodeNoPeers:
			return struct{}{}, false, err
		case err != nil:
			return struct{}{}, true, err
		}
		return struct{}{}, true, nil
	})
	if err != nil {
		return err
	}
	reply, err := r.Request(ctx, streamDeletePrefix+placementProbe, nil)
	if err != nil {
		return fmt.Errorf("broker: deleting the placement probe: %w", err)
	}
	var ae *APIError
	if _, err := decodeAPIReply(reply, streamDeleteType); err != nil && !(errors.As(err, &ae) && ae.ErrCode == jspull.CodeStreamNotFound) {
		return fmt.Errorf("broker: deleting the placement probe: %w", err)
	}
	return nil
}
