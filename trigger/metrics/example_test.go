package metrics_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/metrics"
)

// ExampleHandler mounts the exposition of an installation's monitor, the
// *trigger.Monitor that trigger.Install returns, on the embedder's mux.
func ExampleHandler() {
	mount := func(mux *http.ServeMux, mon *trigger.Monitor) {
		mux.Handle("/metrics", metrics.Handler(mon))
	}
	_ = mount
}

// ExampleAppend renders a snapshot into a reused buffer; here only the
// samples of one family are printed.
func ExampleAppend() {
	s := trigger.Snapshot{Epoch: 3, Steps: 10, Bindings: make([]trigger.Counts, 2)}
	s.Bindings[0].Acked = 4
	s.Bindings[1].Termed = 1
	s.Bindings[1].Exhausted = 1

	var buf []byte
	buf = metrics.Append(buf[:0], s, trigger.StepReport{}, false)
	sc := bufio.NewScanner(bytes.NewReader(buf))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "latent_nats_trigger_acknowledgements_total{") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// latent_nats_trigger_acknowledgements_total{binding="0",action="ack"} 4
	// latent_nats_trigger_acknowledgements_total{binding="0",action="term"} 0
	// latent_nats_trigger_acknowledgements_total{binding="0",action="nak"} 0
	// latent_nats_trigger_acknowledgements_total{binding="0",action="exhausted"} 0
	// latent_nats_trigger_acknowledgements_total{binding="1",action="ack"} 0
	// latent_nats_trigger_acknowledgements_total{binding="1",action="term"} 1
	// latent_nats_trigger_acknowledgements_total{binding="1",action="nak"} 0
	// latent_nats_trigger_acknowledgements_total{binding="1",action="exhausted"} 1
}
