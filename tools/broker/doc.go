// Package broker owns the pinned nats-server (v2.14.6, the version
// tools/go.mod pins as a tool), run as a separate process on 127.0.0.1 for
// tests and for exploring by hand; it refuses to be anything else: no other address, no
// plaintext-only mode, no shared state between brokers, and no use by the
// core packages.
//
// A broker is one child process with its own temporary directory:
//
//   - TLS: a generated ECDSA CA and server certificate whose only subject
//     alternative name is a DNS name ([DefaultServerName] unless configured),
//     never the IP address; the client listener runs with
//     `tls { handshake_first: ... }` in one of the [HandshakeMode] values.
//   - Operator mode: a generated operator, a system account and one account
//     per tenant (JetStream enabled with bounded [AccountLimits]), preloaded
//     with `resolver: MEMORY`. Users with caller-given permissions are minted
//     with [Broker.User]; [Broker.Admin] gives a tenant's full-permission user
//     for provisioning (tests and tools only; production code never gets it).
//     [Options.SigningKeys] lists scoped signing keys in tenant accounts
//     (a role whose user scope holds the permissions); [Broker.ScopedUser]
//     mints a user signed by one, whose JWT carries no permissions and
//     stays small however many subjects the scope grants.
//     [Broker.RevokeUser] revokes a user in its account JWT, signed again
//     and sent to the running server as the system user: the server closes
//     that user's connections.
//   - JetStream with file storage in the temporary directory, memory and file
//     store bounded; the child runs with GOMEMLIMIT=256MiB and GOMAXPROCS=1.
//   - Logs captured into a bounded ring ([MaxLogBytes]), see [Broker.Logs].
//
// Lifecycle: [Start] returns once the server logged that it is ready;
// [Broker.Stop] shuts it down gracefully, [Broker.Kill] kills it (a crash),
// [Broker.Restart] starts it again on the same port with the same store, and
// [Broker.Close] stops it and removes every file. Once the server chose
// its port, the configuration ([Broker.ConfigFile]) names it, so the
// server started again with that file, by Restart or by hand, listens on
// the same port. [Broker.Wait] returns when the server process exits,
// whoever ended it ([ErrServerExited]). On Linux the child gets SIGKILL
// when the process that started it dies, so a killed test binary leaves no
// broker behind.
//
// Faults, for scenarios that need the real process to misbehave:
//
//   - crash: [Broker.Kill] (SIGKILL), then [Broker.Restart], which recovers
//     the file store the crash left;
//   - stall: [Broker.Pause] (SIGSTOP) and [Broker.Resume] (SIGCONT); while
//     paused, connections complete in the kernel and get no answer;
//   - drain: [Broker.LameDuck] (SIGUSR2), which tells clients with an INFO
//     "ldm":true, closes them and exits, shortened by
//     [Options.LameDuckGracePeriod];
//   - durability: [Options.SyncInterval], "always" to fsync every write.
//
// Every lifecycle call works on a paused broker (it is continued first, or
// killed as it is).
//
// A cluster ([StartCluster], 2 to 5 nodes, [DefaultClusterSize] in tests)
// is that many brokers routed to each other on 127.0.0.1, each a node with
// its own directory, client port, HTTP monitor and JetStream store, a
// unique server_name ([NodeName], what JetStream reports as a leader) and
// a cluster block naming every node's route port (chosen free before the
// start; the routes must name them). Every node shares one operator,
// system account and tenant accounts, and one CA and certificate, so one
// server name and [Cluster.RootCAs] verify every node and a user minted by
// [Cluster.User] or [Cluster.Admin] connects to any of them. Each node is a
// [*Broker] ([Cluster.Node]) with the faults above, one node at a time;
// Restart keeps its ports and store, and it rejoins. The cluster's waits:
//
//   - [Cluster.WaitFormed]: the running, unpaused nodes follow one
//     JetStream meta leader that counts each as a current peer (each
//     node's /jsz), and each has all its routes to the others (/routez);
//   - [Cluster.WaitPlacement]: the cluster places a replicated stream (a
//     probe created and deleted; brokertest.StartCluster waits for it);
//   - [Cluster.WaitHealthy]: one node's /healthz passes (it caught up);
//   - [Cluster.StreamLeader], [Cluster.ConsumerLeader] and their waits
//     read the leader from the stream's or consumer's info,
//     [Cluster.StepDownStream] and [Cluster.StepDownConsumer] ask the
//     leader to step down (optionally in favour of a node), each through
//     a [Requester] the caller connects as the tenant's admin
//     (tools/broker/clustertest adapts the project's connection).
//
// With [Options.ProxyRoutes] each node's route to each other node goes
// through a fault proxy of its own (package faultproxy; one per ordered
// pair, [Cluster.RouteProxy]), so the links between nodes fail while the
// clients' connections stay: [Cluster.SetLink] sets a fault on both
// routes of a pair (a cut, a stall, a latency; Pass heals),
// [Cluster.Partition] on every link between two sides, [Cluster.Heal]
// clears them all. Every node then advertises one route address that each
// counts as its own, so a route INFO gossiped between nodes never makes
// one dial another around the proxies.
//
// The binary is found by [ServerBinary], the one function of this package
// that reads the environment: LATENT_NATS_SERVER names it (the Makefile sets
// it to .cache/nats-server-v2.14.6), otherwise it is built once with
// `go build` into the user cache directory, under a file lock so parallel
// test binaries do not race, and its `--version` is checked. Another
// release runs only under the explicit opt-in LATENT_NATS_SERVER_VERSION
// (make compat): LATENT_NATS_SERVER must then name a binary reporting that
// version, which is never built here; [Broker.Version] says what runs.
// (Elsewhere
// only the standard library's own lookups happen: the system temporary
// directory when Options.Dir is empty, and PATH to find `go` for a build.)
//
// Tests use the brokertest subpackage, which registers cleanup with
// testing.TB. By hand:
//
//	go run ./tools/broker/cmd/broker -tenants demo
//	go run ./tools/broker/cmd/broker -cluster 3
//
// prints the address (each node's with -cluster), server name, CA file and
// credential files, and keeps the broker until Ctrl-C, or until a server
// exits on its own (exit status 1, every file kept). With -runtime-creds
// it also writes the trigger runtime's credentials of a configuration.
package broker
