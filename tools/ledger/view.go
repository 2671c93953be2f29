package ledger

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/latent-systems/latent-nats/trigger"
)

// RequestFunc sends one JetStream API request as the binding's tenant
// administrator and returns the reply's payload: the caller's connection,
// bounded by ctx. The ledger itself opens none.
type RequestFunc func(ctx context.Context, subject string, body []byte) ([]byte, error)

// ReadView reads binding b's consumer through request: consumer info,
// then stream info filtered on the binding's subject. Left counts the
// binding's messages the stream still holds when its retention removes a
// settled message (work-queue, interest), and LeftSeqs gives the
// sequences of the first MaxLeftRead of them; a limits stream keeps what
// it delivered, and Left is 0. An API error (503 while JetStream recovers
// after a start) is returned as an error, to be retried.
func ReadView(ctx context.Context, request RequestFunc, b trigger.Binding) (ConsumerView, error) {
	var ci struct {
		NumPending     uint64 `json:"num_pending"`
		NumAckPending  uint64 `json:"num_ack_pending"`
		NumRedelivered uint64 `json:"num_redelivered"`
		AckFloor       struct {
			StreamSeq uint64 `json:"stream_seq"`
		} `json:"ack_floor"`
		Error *apiError `json:"error"`
	}
	if err := readAPI(ctx, request, "$JS.API.CONSUMER.INFO."+b.Stream+"."+b.Consumer, nil, &ci, &ci.Error); err != nil {
		return ConsumerView{}, err
	}
	var si struct {
		Config struct {
			Retention string `json:"retention"`
		} `json:"config"`
		State struct {
			Messages uint64            `json:"messages"`
			Subjects map[string]uint64 `json:"subjects"`
		} `json:"state"`
		Error *apiError `json:"error"`
	}
	var body []byte
	if b.FilterSubject != "" {
		var err error
		if body, err = json.Marshal(map[string]string{"subjects_filter": b.FilterSubject}); err != nil {
			return ConsumerView{}, err
		}
	}
	if err := readAPI(ctx, request, "$JS.API.STREAM.INFO."+b.Stream, body, &si, &si.Error); err != nil {
		return ConsumerView{}, err
	}
	cv := ConsumerView{
		Binding: b.ID, AckFloor: ci.AckFloor.StreamSeq,
		NumPending: ci.NumPending, NumAckPending: ci.NumAckPending, NumRedelivered: ci.NumRedelivered,
	}
	switch {
	case si.Config.Retention == "limits":
	case b.FilterSubject == "":
		cv.Left = si.State.Messages
	default:
		for _, n := range si.State.Subjects {
			cv.Left += n
		}
	}
	if cv.Left > 0 {
		seqs, err := leftSeqs(ctx, request, b, min(cv.Left, MaxLeftRead))
		if err != nil {
			return ConsumerView{}, err
		}
		cv.LeftSeqs = seqs
	}
	return cv, nil
}

// leftSeqs reads the stream sequences of the first n messages of the
// binding its stream holds, one $JS.API.STREAM.MSG.GET after another
// (next_by_subj on the filter subject, or on every subject). A message
// removed meanwhile ends the list early (404).
func leftSeqs(ctx context.Context, request RequestFunc, b trigger.Binding, n uint64) ([]uint64, error) {
	subject := b.FilterSubject
	if subject == "" {
		subject = ">"
	}
	var seqs []uint64
	next := uint64(1)
	for range n {
		body, err := json.Marshal(map[string]any{"seq": next, "next_by_subj": subject})
		if err != nil {
			return nil, err
		}
		var mg struct {
			Message struct {
				Seq uint64 `json:"seq"`
			} `json:"message"`
			Error *apiError `json:"error"`
		}
		err = readAPI(ctx, request, "$JS.API.STREAM.MSG.GET."+b.Stream, body, &mg, &mg.Error)
		switch {
		case err != nil && mg.Error != nil && mg.Error.Code == 404:
			return seqs, nil
		case err != nil:
			return nil, err
		case mg.Message.Seq < next:
			return nil, fmt.Errorf("ledger: $JS.API.STREAM.MSG.GET.%s: sequence %d before %d", b.Stream, mg.Message.Seq, next)
		}
		seqs = append(seqs, mg.Message.Seq)
		next = mg.Message.Seq + 1
	}
	return seqs, nil
}

type apiError struct {
	Code int `json:"code"`
}

// readAPI sends one request and decodes its reply into v; *e is the
// reply's error field.
func readAPI(ctx context.Context, request RequestFunc, subject string, body []byte, v any, e **apiError) error {
	payload, err := request(ctx, subject, body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return fmt.Errorf("ledger: %s: %w", subject, err)
	}
	if *e != nil {
		return fmt.Errorf("ledger: %s: api error %d", subject, (*e).Code)
	}
	return nil
}
