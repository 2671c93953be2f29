package broker

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

func TestRenderConfig(t *testing.T) {
	id, err := newIdentity([]string{"t1", "t2"}, AccountLimits{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		port int
		want []string // lines that must appear
	}{
		{"first", Options{}, -1, []string{"port: -1", "  handshake_first: true"}},
		{"after info", Options{Handshake: HandshakeAfterInfo}, 4222, []string{"port: 4222", "  handshake_first: false"}},
		{"auto", Options{Handshake: HandshakeAuto}, -1, []string{`  handshake_first: "auto"`}},
		{"fallback", Options{Handshake: HandshakeFallback, FallbackDelay: 300 * time.Millisecond}, -1, []string{`  handshake_first: "300ms"`}},
		{"tls timeout", Options{TLSTimeout: 1500 * time.Millisecond}, -1, []string{`  timeout: "1.5s"`}},
		{"client certificates", Options{ClientCertificates: true}, -1, []string{"  verify: true", `  ca_file: "/d/client-ca.pem"`}},
		{"file store", Options{MaxFileStore: 1 << 20}, -1, []string{"  max_file_store: 1048576", "  max_memory_store: 268435456"}},
		{"extra", Options{Extra: "feature_flags { js_ack_fc_v2: true }"}, -1, []string{"feature_flags { js_ack_fc_v2: true }"}},
		{"domain", Options{JetStreamDomain: "hub"}, -1, []string{`  domain: "hub"`}},
		{"lame duck", Options{LameDuckDuration: MinLameDuckDuration, LameDuckGracePeriod: 1500 * time.Millisecond}, -1, []string{
			`lame_duck_duration: "30s"`,
			`lame_duck_grace_period: "1.5s"`,
		}},
		{"accounts", Options{}, -1, []string{
			`host: "127.0.0.1"`,
			`system_account: "` + id.system.pub + `"`,
			"resolver: MEMORY",
			"  " + id.system.pub + `: "` + id.system.jwt + `"`,
			"  " + id.tenants[0].pub + `: "` + id.tenants[0].jwt + `"`,
			"  " + id.tenants[1].pub + `: "` + id.tenants[1].jwt + `"`,
			`operator: "/d/operator.jwt"`,
			`  store_dir: "/d/jetstream"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := string(renderConfig(configInput{dir: "/d", port: tc.port, opts: tc.opts, identity: id}))
			lines := strings.Split(conf, "\n")
			missing := slices.DeleteFunc(slices.Clone(tc.want), func(w string) bool { return slices.Contains(lines, w) })
			if diff := cmp.Diff([]string{}, missing); diff != "" {
				t.Errorf("missing lines (-want +got):\n%s\nconfig:\n%s", diff, conf)
			}
		})
	}
}

// TestRenderJetStreamBlock: SyncInterval is written inside the jetstream
// block, canonical, and only when set; the lame duck keys only when set.
func TestRenderJetStreamBlock(t *testing.T) {
	id, err := newIdentity([]string{"t1"}, AccountLimits{})
	if err != nil {
		t.Fatal(err)
	}
	head := []string{
		"jetstream {",
		`  store_dir: "/d/jetstream"`,
		"  max_memory_store: 268435456",
		"  max_file_store: 1073741824",
	}
	for _, tc := range []struct {
		name string
		opts Options
		want []string // the jetstream block after head
	}{
		{"server default", Options{}, []string{"}"}},
		{"always", Options{SyncInterval: "always"}, []string{`  sync_interval: "always"`, "}"}},
		{"two minutes", Options{SyncInterval: "2m"}, []string{`  sync_interval: "2m0s"`, "}"}},
		{"MinSyncInterval", Options{SyncInterval: MinSyncInterval.String()}, []string{`  sync_interval: "10ms"`, "}"}},
		{"MaxSyncInterval", Options{SyncInterval: "60m"}, []string{`  sync_interval: "1h0m0s"`, "}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := string(renderConfig(configInput{dir: "/d", port: -1, opts: tc.opts, identity: id}))
			lines := strings.Split(conf, "\n")
			start := slices.Index(lines, "jetstream {")
			end := start + slices.Index(lines[max(start, 0):], "}")
			if start < 0 || end < start {
				t.Fatalf("no jetstream block in:\n%s", conf)
			}
			if diff := cmp.Diff(append(slices.Clone(head), tc.want...), lines[start:end+1]); diff != "" {
				t.Errorf("jetstream block (-want +got):\n%s", diff)
			}
			if strings.Contains(conf, "lame_duck") {
				t.Errorf("lame duck keys written without LameDuckDuration or LameDuckGracePeriod:\n%s", conf)
			}
		})
	}
}

// TestRenderClusterNode: a cluster node's configuration names the node,
// serves the monitor on loopback and holds a cluster block with its route
// port and a route to every node; a single broker's has neither.
func TestRenderClusterNode(t *testing.T) {
	id, err := newIdentity([]string{"t1"}, AccountLimits{})
	if err != nil {
		t.Fatal(err)
	}
	node := &nodeConfig{name: NodeName(1), cluster: ClusterName, routePort: 6002, routePorts: []int{6001, 6002, 6003}}
	conf := string(renderConfig(configInput{dir: "/d", port: 4222, opts: Options{}, identity: id, node: node, monitorPort: 8222}))
	lines := strings.Split(conf, "\n")
	for _, want := range []string{`server_name: "latent-node-1"`, `http: "127.0.0.1:8222"`, "port: 4222"} {
		if !slices.Contains(lines, want) {
			t.Errorf("missing %q in:\n%s", want, conf)
		}
	}
	start := slices.Index(lines, "cluster {")
	if start < 0 || start+9 > len(lines) {
		t.Fatalf("no cluster block in:\n%s", conf)
	}
	want := []string{
		"cluster {",
		`  name: "latent-cluster"`,
		`  listen: "127.0.0.1:6002"`,
		"  routes: [",
		`    "nats-route://127.0.0.1:6001"`,
		`    "nats-route://127.0.0.1:6002"`,
		`    "nats-route://127.0.0.1:6003"`,
		"  ]",
		"}",
	}
	if diff := cmp.Diff(want, lines[start:start+len(want)]); diff != "" {
		t.Errorf("cluster block (-want +got):\n%s", diff)
	}

	single := string(renderConfig(configInput{dir: "/d", port: -1, opts: Options{}, identity: id, monitorPort: 8222}))
	for _, absent := range []string{"cluster", "http", "routes"} {
		if strings.Contains(single, absent) {
			t.Errorf("a single broker's configuration holds %q:\n%s", absent, single)
		}
	}
	if !slices.Contains(strings.Split(single, "\n"), `server_name: "latent-broker"`) {
		t.Errorf("a single broker's server_name is not latent-broker:\n%s", single)
	}
}

// TestRenderNoClientVerify: without Options.ClientCertificates the tls
// block neither requires nor names a client CA.
func TestRenderNoClientVerify(t *testing.T) {
	id, err := newIdentity([]string{"t1"}, AccountLimits{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	conf := string(renderConfig(configInput{dir: "/d", port: -1, opts: Options{}, identity: id}))
	if strings.Contains(conf, "verify") || strings.Contains(conf, clientCAFile) {
		t.Errorf("config requires client certificates:\n%s", conf)
	}
}

// TestRenderProxiedRoutes: with route proxies a node's routes are the
// proxies' addresses and it advertises gossipAdvertise(), so that no node
// dials another's route port directly after a gossiped route INFO.
func TestRenderProxiedRoutes(t *testing.T) {
	id, err := newIdentity([]string{"t1"}, AccountLimits{})
	if err != nil {
		t.Fatal(err)
	}
	node := &nodeConfig{
		name: NodeName(0), cluster: ClusterName, routePort: 6001, routePorts: []int{6001, 6002, 6003},
		routeAddrs: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:7012"), netip.MustParseAddrPort("127.0.0.1:7013")},
		advertise:  gossipAdvertise(),
	}
	lines := strings.Split(string(renderConfig(configInput{dir: "/d", port: 4222, identity: id, node: node, monitorPort: 8222})), "\n")
	start := slices.Index(lines, "cluster {")
	want := []string{
		"cluster {",
		`  name: "latent-cluster"`,
		`  listen: "127.0.0.1:6001"`,
		`  advertise: "127.0.0.1:9"`,
		"  routes: [",
		`    "nats-route://127.0.0.1:7012"`,
		`    "nats-route://127.0.0.1:7013"`,
		"  ]",
		"}",
	}
	if start < 0 || start+len(want) > len(lines) {
		t.Fatalf("no cluster block in:\n%s", strings.Join(lines, "\n"))
	}
	if diff := cmp.Diff(want, lines[start:start+len(want)]); diff != "" {
		t.Errorf("cluster block (-want +got):\n%s", diff)
	}
}

// TestRouteFaultsNeedProxies: the route fault calls of a cluster whose
// routes are direct return ErrDirectRoutes; a pair that is not two nodes
// is ErrUnknownNode.
func TestRouteFaultsNeedProxies(t *testing.T) {
	c := &Cluster{nodes: make([]*Broker, 3)}
	pass := faultproxy.Fault{Kind: faultproxy.Pass}
	if err := c.SetLink(0, 1, pass); !errors.Is(err, ErrDirectRoutes) {
		t.Errorf("SetLink: %v, want ErrDirectRoutes", err)
	}
	if err := c.Partition(pass, []int{0}, []int{1, 2}); !errors.Is(err, ErrDirectRoutes) {
		t.Errorf("Partition: %v, want ErrDirectRoutes", err)
	}
	if err := c.Heal(); !errors.Is(err, ErrDirectRoutes) {
		t.Errorf("Heal: %v, want ErrDirectRoutes", err)
	}
	if c.RouteProxy(0, 1) != nil {
		t.Error("RouteProxy of direct routes is not nil")
	}
	c.proxies = make([][]*faultproxy.Proxy, 3)
	for _, pair := range [][2]int{{0, 0}, {0, 3}, {-1, 1}} {
		if err := c.SetLink(pair[0], pair[1], pass); !errors.Is(err, ErrUnknownNode) {
			t.Errorf("SetLink(%d, %d): %v, want ErrUnknownNode", pair[0], pair[1], err)
		}
	}
	for _, sides := range [][][]int{{{0}, {0, 1}}, {{3}}, {{-1}}} {
		if err := c.Partition(pass, sides...); !errors.Is(err, ErrUnknownNode) {
			t.Errorf("Partition(%v): %v, want ErrUnknownNode", sides, err)
		}
	}
}
