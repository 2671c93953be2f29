package pkgcheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModuleLayers holds the allowed imports of every package of the
// module, outside the standard library: the module's own packages by their
// directory, any other module by its path. Only non-test files count (a
// package's tests may import test helpers such as internal/fakeserver,
// internal/pkgcheck, go-cmp and rapid; make lint keeps nats.go out of
// the whole graph, tests included). A new package needs a row here; an
// import its row does not allow fails, whatever the platform of the file
// that makes it. tools/peerbench is its own module and is not checked.
func TestModuleLayers(t *testing.T) {
	const (
		jwt    = "github.com/nats-io/jwt/v2"
		nkeys  = "github.com/nats-io/nkeys"
		unix   = "golang.org/x/sys/unix"
		wazero = "github.com/tetratelabs/wazero"
	)
	layers := map[string]Layer{
		// The core, bottom up.
		"acksubject":    {nil, "the $JS.ACK grammar imports nothing of the project"},
		"internal/wire": {nil, "encodes client ops into a caller's buffer; the lowest layer, internal: conn is the public way to send"},
		"parser":        {nil, "decodes server frames from a reader; beside internal/wire, below conn"},
		"credential":    {[]string{jwt, nkeys}, "tenant credentials: user JWTs and nkey signing"},
		"conn": {[]string{"credential", "internal/jsontree", "internal/wire", "parser", unix},
			"one connection: encodes with internal/wire, decodes with parser and reads INFO with internal/jsontree, authenticates with credential; unix for the socket peek and the thread socket"},
		"pull": {nil, "the vocabulary of what was done with a delivery: the Action sent and the AckState of its receipt"},
		"internal/jspull": {[]string{"acksubject", "conn", "internal/jsonlex", "internal/wire", "pull"},
			"the runtime's pull layer, the three operations over one connection: the ack subject of a delivery checked by acksubject, consumer info lexed strictly, subjects of derived permissions checked by internal/wire, what was done named by pull"},
		"trigger": {[]string{"conn", "credential", "internal/boundedfile", "internal/jspull", "internal/jsontree", "pull"},
			"the runtime speaks to the broker through internal/jspull and conn only, and names what it did with pull's vocabulary: no wire or parser detail (a delivered header's field is read through conn); its configuration and credentials file are read by the one strict JSON tree and schema walk, the credentials file and its secrets by the one bounded file reader"},
		"trigger/metrics": {[]string{"pull", "trigger"}, "exports the runtime's monitor"},
		"trigger/refhost": {[]string{"internal/jsonlex", "trigger"}, "the reference host implements trigger's Host interface; its argument codec lexes JSON strictly"},
		"trigger/wasmhost": {[]string{"trigger", "trigger/refhost", wazero, wazero + "/api", wazero + "/experimental", wazero + "/imports/wasi_snapshot_preview1", wazero + "/sys"},
			"WebAssembly guests behind the reference host's catalog and admission; the one package that links wazero"},

		// Internal helpers.
		"internal/boundedfile": {nil, "the one bounded read of an operator's file: regular, whole, at most a bound, standard library only"},
		"internal/jsontree":    {[]string{"internal/jsonlex"}, "the strict JSON tree and schema walk of the configuration and the credentials file, over jsonlex's tokens"},
		"internal/jsonlex":     {nil, "the strict JSON lexer under internal/jspull's, refhost's and jsontree's decoders"},
		"internal/pkgcheck":    {nil, "checks of the module's own source, standard library only"},
		"internal/fakeserver":  {[]string{"internal/testpki"}, "a scripted TLS server for tests below conformance; its certificates from testpki"},
		"internal/frametest":   {nil, "frames shaped like broker traffic for the parser's and the peer benchmarks"},
		"internal/apicheck":    {[]string{"internal/pkgcheck"}, "the golden list of the exported API, read with go/parser and go/ast over pkgcheck's walk of the module"},
		"internal/testpki":     {nil, "generated certificate authorities and client certificates for tests and the broker harness, standard library only"},
		"internal/wittest":     {[]string{"pgregory.net/rapid", "trigger/refhost"}, "the random WIT types and values the codec's and the canonical ABI's property tests share (tests only)"},

		// Test-only packages: their files beside doc.go are tests.
		"fuzz":        {nil, "cross-package fuzz targets (tests only)"},
		"conformance": {nil, "tests against the pinned broker (tests only)"},

		// Tools: above the core, which imports none of them.
		"tools/broker":                {[]string{"acksubject", "conn", "internal/jspull", "internal/testpki", jwt, nkeys, "tools/faultproxy"}, "runs the pinned broker with its operator and accounts, and the client CA it may require; a cluster's routes through fault proxies; the name rules and the JetStream API's error codes from their homes"},
		"tools/broker/brokertest":     {[]string{"tools/broker", "tools/broker/clustertest", "tools/validate", "trigger"}, "the broker or cluster for one test, a cluster waited on until it places; the tools' inputs written for a configuration"},
		"tools/broker/clustertest":    {[]string{"conn", "credential", "tools/broker"}, "a three-node cluster for tests, waited on through conn"},
		"tools/broker/cmd/broker":     {[]string{"tools/broker", "tools/provision", "tools/validate", "trigger"}, "the broker command; its runtime creds carry provision's grants for a configuration validate reads"},
		"tools/faultproxy":            {nil, "a fault-injecting TCP proxy; its Dialer fits conn's without importing it"},
		"tools/ledger":                {[]string{"pull", "trigger"}, "the delivery ledger over the runtime's reports"},
		"tools/validate":              {[]string{"credential", "internal/boundedfile", "trigger"}, "checks configurations and credential files with trigger's readers (no JSON decoder of its own) and reads the configuration file with the one bounded file reader, and gives the tools the credentials file's shape to write"},
		"tools/validate/cmd/validate": {[]string{"tools/validate"}, "the validate command"},
		"tools/provision": {[]string{"conn", "credential", jwt, "internal/jspull", "tools/validate", "trigger"},
			"operator credentials and permissions derived from a validated configuration, checked against the broker"},
		"tools/provision/cmd/provision": {[]string{"tools/provision"}, "the provision command"},
		"tools/deadletter": {[]string{"conn", "internal/jspull", "internal/wire", "parser", "tools/provision", "tools/validate", "trigger"},
			"operator credentials reading provision's capture streams: names checked by internal/jspull, copies' headers by parser, replays' headers built by internal/wire"},
		"tools/deadletter/cmd/deadletter": {[]string{"tools/deadletter"}, "the deadletter command"},
		"tools/demo": {[]string{"conn", "credential", "internal/jspull", "internal/wire", "pull", "tools/broker", "tools/provision", "tools/validate", "trigger", "trigger/refhost", "trigger/wasmhost"},
			"the main job end to end against a broker it starts, its functions WebAssembly guests"},
		"tools/demo/guest": {nil, "the demo's functions as a WebAssembly guest (GOOS=wasip1), standard library only"},
		"tools/soak": {[]string{"conn", "credential", "tools/broker", "tools/faultproxy", "tools/ledger", "tools/provision", "trigger", "trigger/refhost"},
			"the runtime under random faults, judged by the ledger"},
		"tools/soak/cmd/soak": {[]string{"tools/soak"}, "the soak command"},
	}
	if diff := cmp.Diff([]string(nil), LayerViolations(layers, ModuleImports(t))); diff != "" {
		t.Errorf("imports outside the layers (-want +got):\n%s", diff)
	}
}

// TestLayerViolations: a package without a layer, an import its layer does
// not allow and a layer without a package are each reported; allowed
// imports, also unused ones, are not.
func TestLayerViolations(t *testing.T) {
	layers := map[string]Layer{
		"low":  {nil, "bottom"},
		"mid":  {[]string{"low", "example.com/x"}, "above low"},
		"gone": {nil, "removed"},
	}
	pkgs := map[string][]string{
		"low": {"mid"},
		"mid": {"low"},
		"new": {},
	}
	want := []string{
		"gone: layer of a package that does not exist",
		"low: imports mid, which its layer does not allow",
		"new: package without a layer: list its allowed imports and why",
	}
	if diff := cmp.Diff(want, LayerViolations(layers, pkgs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}
