package jspull

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
)

func validBinding() Binding {
	return Binding{
		Stream:         "ORDERS",
		Consumer:       "worker",
		FilterSubject:  "orders.new",
		PayloadCeiling: 1024,
		AckWait:        2 * time.Second,
		MaxDeliver:     3,
	}
}

func TestBindingValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Binding)
		field string // "" means valid
	}{
		{"valid", func(*Binding) {}, ""},
		{"stream empty", func(b *Binding) { b.Stream = "" }, "stream"},
		{"stream with dot", func(b *Binding) { b.Stream = "a.b" }, "stream"},
		{"stream at max length", func(b *Binding) { b.Stream = strings.Repeat("s", MaxNameLen) }, ""},
		{"stream one past max length", func(b *Binding) { b.Stream = strings.Repeat("s", MaxNameLen+1) }, "stream"},
		{"stream with asset-name punctuation", func(b *Binding) { b.Stream = "a@b%c~d$e" }, ""},
		{"consumer with star", func(b *Binding) { b.Consumer = "w*" }, "consumer"},
		{"consumer with gt", func(b *Binding) { b.Consumer = "w>" }, "consumer"},
		{"consumer with slash", func(b *Binding) { b.Consumer = "w/x" }, "consumer"},
		{"consumer with backslash", func(b *Binding) { b.Consumer = `w\x` }, "consumer"},
		{"consumer with space", func(b *Binding) { b.Consumer = "w x" }, "consumer"},
		{"consumer with tab", func(b *Binding) { b.Consumer = "w\tx" }, "consumer"},
		{"consumer with form feed", func(b *Binding) { b.Consumer = "w\fx" }, "consumer"},
		{"consumer with NUL", func(b *Binding) { b.Consumer = "w\x00x" }, "consumer"},
		{"consumer with DEL", func(b *Binding) { b.Consumer = "w\x7fx" }, "consumer"},
		{"consumer invalid utf-8", func(b *Binding) { b.Consumer = "w\xffx" }, "consumer"},
		{"consumer with C1 control", func(b *Binding) { b.Consumer = "w\u0085x" }, "consumer"},
		{"consumer with U+00A0", func(b *Binding) { b.Consumer = "w\u00a0x" }, ""},
		{"filter empty", func(b *Binding) { b.FilterSubject = "" }, "filter_subject"},
		{"filter wildcard token", func(b *Binding) { b.FilterSubject = "orders.*" }, "filter_subject"},
		{"filter full wildcard", func(b *Binding) { b.FilterSubject = "orders.>" }, "filter_subject"},
		{"filter star inside token", func(b *Binding) { b.FilterSubject = "orders.a*" }, "filter_subject"},
		{"filter empty token", func(b *Binding) { b.FilterSubject = "orders..new" }, "filter_subject"},
		{"filter leading dot", func(b *Binding) { b.FilterSubject = ".orders" }, "filter_subject"},
		{"filter trailing dot", func(b *Binding) { b.FilterSubject = "orders." }, "filter_subject"},
		{"filter with space", func(b *Binding) { b.FilterSubject = "orders new" }, "filter_subject"},
		{"filter with CR", func(b *Binding) { b.FilterSubject = "orders\rnew" }, "filter_subject"},
		{"filter with C1 control", func(b *Binding) { b.FilterSubject = "orders.\u009bnew" }, "filter_subject"},
		{"filter invalid utf-8", func(b *Binding) { b.FilterSubject = "orders.\xff" }, "filter_subject"},
		{"filter at max length", func(b *Binding) { b.FilterSubject = strings.Repeat("f", MaxFilterSubjectLen) }, ""},
		{"filter one past max length", func(b *Binding) { b.FilterSubject = strings.Repeat("f", MaxFilterSubjectLen+1) }, "filter_subject"},
		{"ceiling at min", func(b *Binding) { b.PayloadCeiling = MinPayloadCeiling }, ""},
		{"ceiling below min", func(b *Binding) { b.PayloadCeiling = MinPayloadCeiling - 1 }, "payload_ceiling"},
		{"ceiling at max", func(b *Binding) { b.PayloadCeiling = MaxPayloadCeiling }, ""},
		{"ceiling past max", func(b *Binding) { b.PayloadCeiling = MaxPayloadCeiling + 1 }, "payload_ceiling"},
		{"ack wait at min", func(b *Binding) { b.AckWait = MinAckWait }, ""},
		{"ack wait below min", func(b *Binding) { b.AckWait = MinAckWait - 1 }, "ack_wait"},
		{"ack wait at max", func(b *Binding) { b.AckWait = MaxAckWait }, ""},
		{"ack wait past max", func(b *Binding) { b.AckWait = MaxAckWait + 1 }, "ack_wait"},
		{"max deliver at min", func(b *Binding) { b.MaxDeliver = MinMaxDeliver }, ""},
		{"max deliver below min", func(b *Binding) { b.MaxDeliver = MinMaxDeliver - 1 }, "max_deliver"},
		{"max deliver at max", func(b *Binding) { b.MaxDeliver = MaxMaxDeliver }, ""},
		{"max deliver past max", func(b *Binding) { b.MaxDeliver = MaxMaxDeliver + 1 }, "max_deliver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBinding()
			tt.edit(&b)
			err := b.Validate()
			if got := bindingField(err); got != tt.field {
				t.Fatalf("Validate() field = %q, want %q (err %v)", bindingField(err), tt.field, err)
			}
			if (err != nil) != errors.Is(err, ErrInvalidBinding) {
				t.Fatalf("Validate() = %v, does not match ErrInvalidBinding", err)
			}
		})
	}
}

func TestValidNameMatchesSentinel(t *testing.T) {
	for _, name := range []string{"", "a.b", "a*", "a>", `a\b`, "a/b", "a b", strings.Repeat("n", MaxNameLen+1)} {
		if err := ValidName(name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidName(%q) = %v, want ErrInvalidName", name, err)
		}
	}
	for _, name := range []string{"a", "ORDERS", "a-b_c", "a@b", "ünï", strings.Repeat("n", MaxNameLen)} {
		if err := ValidName(name); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", name, err)
		}
	}
}

// TestValidFilterSubjectWildcard: a subject whose only fault is '*' or
// '>' is ErrWildcardSubject; any other fault is not; both match
// ErrInvalidSubject.
func TestValidFilterSubjectWildcard(t *testing.T) {
	tests := []struct {
		subject  string
		wildcard bool
	}{
		{"orders.*", true},
		{"orders.>", true},
		{"orders.a*b", true},
		{">", true},
		{"orders..*", true},
		{"orders..new", false},
		{"orders *", false},
		{"", false},
		{strings.Repeat("*", MaxFilterSubjectLen+1), false},
	}
	for _, tt := range tests {
		err := ValidFilterSubject(tt.subject)
		if !errors.Is(err, ErrInvalidSubject) || errors.Is(err, ErrWildcardSubject) != tt.wildcard {
			t.Errorf("ValidFilterSubject(%q) = %v, want wildcard %v", tt.subject, err, tt.wildcard)
		}
	}
}

// TestLongestDeliveryLineFitsMinReadCap: the HMSG line of a delivery on the
// longest filter subject, with the longest v2 ack subject, a 20-digit sid
// and the largest sizes of a binding, fits the smallest control-line cap
// a connection accepts.
func TestLongestDeliveryLineFitsMinReadCap(t *testing.T) {
	sizes := " " + strconv.Itoa(8<<10) + " " + strconv.Itoa(8<<10+MaxPayloadCeiling)
	n := len("HMSG ") + MaxFilterSubjectLen + len(" ") + 20 + len(" ") + acksubject.MaxLen + len(sizes) + len("\r\n")
	if n > conn.MinReadCap {
		t.Errorf("longest delivery line is %d bytes, over conn.MinReadCap %d", n, conn.MinReadCap)
	}
}

func TestBindingSubjects(t *testing.T) {
	b := validBinding()
	if got, want := b.InfoSubject(), "$JS.API.CONSUMER.INFO.ORDERS.worker"; got != want {
		t.Errorf("InfoSubject() = %q, want %q", got, want)
	}
	if got, want := b.NextSubject(), "$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker"; got != want {
		t.Errorf("NextSubject() = %q, want %q", got, want)
	}
	if got, want := b.MaxBytes(), 1024+9216; got != want {
		t.Errorf("MaxBytes() = %d, want %d", got, want)
	}
}

// bindingField returns the Field of a *BindingError, "" for any other
// error or nil.
func bindingField(err error) string {
	var be *BindingError
	if !errors.As(err, &be) {
		return ""
	}
	return be.Field
}
