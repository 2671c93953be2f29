package jspull

import (
	"strings"
	"testing"
)

// BenchmarkDecodeInfo decodes consumer-info replies and checks them
// against the profile: the reply of nats-server 2.14.6, a replicated
// consumer's (cluster state skipped), and one with unknown fields and
// escaped keys (validated, remembered and skipped).
func BenchmarkDecodeInfo(b *testing.B) {
	cases := []struct{ name, body string }{
		{"matching", matchingInfo},
		{"replicated", replicatedInfo},
		{"unknown-fields", strings.NewReplacer(
			`"ts":`, `"future":{"a":[1,{"b":null}]},"fut\u0075re2":"x","ts":`,
			`"num_replicas":0`, `"num_replicas":0,"future":null,"future2":{},"fut\u0075re3":0`,
			`"stream_seq":4,`, `"stream_seq":4,"future":1,`,
		).Replace(matchingInfo)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			bnd := validBinding()
			body := []byte(tc.body)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			var ci consumerInfo
			for b.Loop() {
				if err := decodeInfo(body, &ci); err != nil {
					b.Fatal(err)
				}
				if ms := checkProfile(&bnd, &ci); ms != nil {
					b.Fatal(ms)
				}
			}
		})
	}
}
