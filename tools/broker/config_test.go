package broker

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
		{"file store", Options{MaxFileStore: 1 << 20}, -1, []string{"  max_file_store: 1048576", "  max_memory_store: 268435456"}},
		{"extra", Options{Extra: "feature_flags { js_ack_fc_v2: true }"}, -1, []string{"feature_flags { js_ack_fc_v2: true }"}},
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
