package jspull

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// replicatedInfo is a consumer-info reply of an R3 consumer as a node of a
// three-node nats-server 2.14.6 cluster wrote it (tools/broker's cluster,
// asked through a node that did not lead it; field order and the
// "cluster" state as the server emits them), with validBinding's settings:
// config.num_replicas is the operator's choice of three, and "cluster"
// names the leader and the other two replicas, one still catching up.
const replicatedInfo = `{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"ORDERS","name":"worker","created":"2026-12-02T03:21:45.844338173Z","config":{"durable_name":"worker","name":"worker","deliver_policy":"all","ack_policy":"explicit","ack_wait":2000000000,"max_deliver":3,"filter_subject":"orders.new","replay_policy":"instant","max_waiting":1,"max_ack_pending":1,"max_batch":1,"max_expires":100000000,"max_bytes":10240,"num_replicas":3,"metadata":{"_nats.level":"4","_nats.req.level":"0","_nats.ver":"2.14.6"}},"delivered":{"consumer_seq":0,"stream_seq":0},"ack_floor":{"consumer_seq":0,"stream_seq":0},"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":2,"cluster":{"name":"latent-cluster","raft_group":"C-R3F-xkIYECoH","leader":"latent-node-2","leader_since":"2026-12-02T03:21:46.335296912Z","system_account":true,"traffic_account":"AC5TZGQPC4GKLN66Y3SDXKECTV35ASHY7GMJN77NUEAVZBF7RPCKX2UB","replicas":[{"name":"latent-node-0","current":false,"active":24431263,"lag":1,"peer":"o1kz8tsN"},{"name":"latent-node-1","current":true,"active":21959754,"peer":"7LtY97ed"}]},"ts":"2026-12-02T03:21:46.977356697Z"}`

// TestReplicatedConsumerInfo: the profile check accepts the replica count
// an operator chose (num_replicas is not a profile setting) and reads
// nothing of the "cluster" state but its leader, while still asserting
// every profile field of a replicated consumer.
func TestReplicatedConsumerInfo(t *testing.T) {
	p, ms, err := inspectBody(validBinding(), []byte(replicatedInfo))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Mismatch(nil), ms); diff != "" {
		t.Errorf("R3 consumer: mismatches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Pending{NumPending: 2, Leader: true}, p); diff != "" {
		t.Errorf("R3 consumer: pending (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		body string
	}{
		{"one replica", strings.Replace(replicatedInfo, `"num_replicas":3`, `"num_replicas":1`, 1)},
		{"five replicas", strings.Replace(replicatedInfo, `"num_replicas":3`, `"num_replicas":5`, 1)},
		{"the stream's count (0)", strings.Replace(replicatedInfo, `"num_replicas":3`, `"num_replicas":0`, 1)},
		{"no leader while electing", strings.Replace(replicatedInfo, `"leader":"latent-node-2",`, ``, 1)},
		{"an offline replica", strings.Replace(replicatedInfo, `"current":true,`, `"current":false,"offline":true,`, 1)},
		{"state the client does not know", strings.Replace(replicatedInfo, `"raft_group":`, `"future":{"x":[1,{"y":null}]},"raft_group":`, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.body == replicatedInfo {
				t.Fatal("the case changed nothing")
			}
			_, ms, err := inspectBody(validBinding(), []byte(tc.body))
			if err != nil || ms != nil {
				t.Errorf("inspect: %v, mismatches %v; want the profile accepted", err, ms)
			}
		})
	}

	// Every profile field is still checked on a replicated consumer.
	for _, tc := range []struct {
		name, old, new string
		want           []Mismatch
	}{
		{"max_ack_pending", `"max_ack_pending":1`, `"max_ack_pending":1000`, []Mismatch{{"max_ack_pending", "1", "1000"}}},
		{"ack_wait", `"ack_wait":2000000000`, `"ack_wait":30000000000`, []Mismatch{{"ack_wait", "2000000000", "30000000000"}}},
		{"filter_subject", `"filter_subject":"orders.new"`, `"filter_subject":"orders.>"`, []Mismatch{{"filter_subject", "orders.new", "orders.>"}}},
		{"max_bytes", `"max_bytes":10240`, `"max_bytes":10241`, []Mismatch{{"max_bytes", "10240", "10241"}}},
		{"max_expires absent", `"max_expires":100000000,`, ``, []Mismatch{{"max_expires", "100000000", "absent"}}},
	} {
		t.Run("mismatch "+tc.name, func(t *testing.T) {
			body := strings.Replace(replicatedInfo, tc.old, tc.new, 1)
			if body == replicatedInfo {
				t.Fatal("the case changed nothing")
			}
			_, ms, err := inspectBody(validBinding(), []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ms); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}

	// The skipped values are still read as JSON, bounded in depth.
	for _, tc := range []struct{ name, old, new string }{
		{"num_replicas not json", `"num_replicas":3`, `"num_replicas":3x`},
		{"cluster cut short", `"peer":"7LtY97ed"}]}`, `"peer":"7LtY97ed"}]`},
		{"cluster too deep", `"raft_group":`, `"deep":` + strings.Repeat(`[`, maxJSONDepth) + strings.Repeat(`]`, maxJSONDepth) + `,"raft_group":`},
		{"duplicate cluster", `"ts":`, `"cluster":{},"ts":`},
		{"duplicate num_replicas", `"num_replicas":3`, `"num_replicas":3,"num_replicas":1`},
	} {
		t.Run("malformed "+tc.name, func(t *testing.T) {
			body := strings.Replace(replicatedInfo, tc.old, tc.new, 1)
			if body == replicatedInfo {
				t.Fatal("the case changed nothing")
			}
			var ci consumerInfo
			if err := decodeInfo([]byte(body), &ci); !errors.Is(err, ErrMalformedInfo) {
				t.Errorf("decodeInfo() = %v, want ErrMalformedInfo", err)
			}
		})
	}
}

// TestConsumerInfoLeader: Pending.Leader is set when the "cluster" state
// names a leader or there is none (a server outside a cluster), and clear
// when it names none (a replica answering while a new consumer elects its
// first leader); "cluster" must be an object with at most one string
// "leader", its other fields validated and skipped.
func TestConsumerInfoLeader(t *testing.T) {
	const cluster = `"cluster":{"name":"latent-cluster","raft_group":"C-R3F-xkIYECoH","leader":"latent-node-2","leader_since":"2026-12-02T03:21:46.335296912Z",`
	for _, tc := range []struct {
		name, old, new string
		want           bool
	}{
		{"leader named", ``, ``, true},
		{"no cluster state", `"cluster":{`, `"x":{`, true},
		{"no leader while electing", `"leader":"latent-node-2",`, ``, false},
		{"empty leader", `"leader":"latent-node-2"`, `"leader":""`, false},
		{"escaped key", `"leader":`, `"lead\u0065r":`, true},
		{"leader first", cluster, `"cluster":{"leader":"latent-node-2","name":"latent-cluster","raft_group":"C-R3F-xkIYECoH","leader_since":"2026-12-02T03:21:46.335296912Z",`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(replicatedInfo, tc.old, tc.new, 1)
			if tc.old != "" && body == replicatedInfo {
				t.Fatal("the case changed nothing")
			}
			p, _, err := inspectBody(validBinding(), []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if p.Leader != tc.want {
				t.Errorf("Leader = %v, want %v", p.Leader, tc.want)
			}
		})
	}
	t.Run("cluster {}", func(t *testing.T) {
		body := strings.Replace(matchingInfo, `"ts":`, `"cluster":{},"ts":`, 1)
		p, _, err := inspectBody(validBinding(), []byte(body))
		if err != nil || p.Leader {
			t.Errorf("inspect: %v, Leader %v; want no leader named", err, p.Leader)
		}
	})

	for _, tc := range []struct{ name, old, new string }{
		{"cluster null", cluster, `"cluster":null,"x":{`},
		{"cluster an array", cluster, `"cluster":[],"x":{`},
		{"cluster a string", cluster, `"cluster":"latent-node-2","x":{`},
		{"leader null", `"leader":"latent-node-2"`, `"leader":null`},
		{"leader a number", `"leader":"latent-node-2"`, `"leader":2`},
		{"duplicate leader", `"leader":"latent-node-2"`, `"leader":"latent-node-2","leader":"latent-node-1"`},
		{"duplicate leader escaped", `"leader":"latent-node-2"`, `"leader":"latent-node-2","l\u0065ader":""`},
		{"duplicate other field", `"raft_group":`, `"name":"x","raft_group":`},
		{"leader not a valid string", `"leader":"latent-node-2"`, `"leader":"\ud800"`},
	} {
		t.Run("malformed "+tc.name, func(t *testing.T) {
			body := strings.Replace(replicatedInfo, tc.old, tc.new, 1)
			if body == replicatedInfo {
				t.Fatal("the case changed nothing")
			}
			var ci consumerInfo
			if err := decodeInfo([]byte(body), &ci); !errors.Is(err, ErrMalformedInfo) {
				t.Errorf("decodeInfo() = %v, want ErrMalformedInfo", err)
			}
		})
	}
}

// clusteredRequester is a fakeRequester whose server announced a cluster
// in its INFO, as *conn.Conn's Clustered reports it.
type clusteredRequester struct{ *fakeRequester }

func (clusteredRequester) Clustered() bool { return true }

// TestInspectClusteredReplica: a reply without "cluster" state is the
// leader's view from a server outside a cluster, and not from a server in
// one: there it is a replica that has not started the consumer's group
// (a restarted node, recovering), answering at once with zero counters
// (nats-server 2.14.6 jsConsumerInfoRequest). A clustered server's reply
// that names the leader is the leader's.
func TestInspectClusteredReplica(t *testing.T) {
	for _, tc := range []struct {
		name      string
		clustered bool
		body      string
		want      bool
	}{
		{"outside a cluster, no cluster state", false, matchingInfo, true},
		{"in a cluster, no cluster state", true, matchingInfo, false},
		{"in a cluster, the leader named", true, replicatedInfo, true},
		{"in a cluster, no leader named", true, strings.Replace(replicatedInfo, `"leader":"latent-node-2",`, ``, 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Requester = &fakeRequester{reply: infoReply(tc.body)}
			if tc.clustered {
				r = clusteredRequester{r.(*fakeRequester)}
			}
			p, err := newTestConsumer(t, &fakeClock{}).Inspect(t.Context(), r)
			if err != nil && !errors.Is(err, ErrProfileMismatch) {
				t.Fatal(err)
			}
			if p.Leader != tc.want {
				t.Errorf("Leader = %v, want %v", p.Leader, tc.want)
			}
		})
	}
}
