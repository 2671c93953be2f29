package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendConnect(t *testing.T) {
	tests := []struct {
		name string
		c    Connect
		want string
	}{
		{"defaults sent explicitly", Connect{},
			`{"verbose":false,"pedantic":false,"tls_required":false,"protocol":1,"echo":false,"headers":false,"no_responders":false}`},
		{"jwt and sig", Connect{TLSRequired: true, JWT: "eyJ.a.b", Sig: "c2ln", Name: "t", Lang: "go", Version: "0.1",
			Protocol: 1, Echo: true, Headers: true, NoResponders: true},
			`{"verbose":false,"pedantic":false,"tls_required":true,"jwt":"eyJ.a.b","sig":"c2ln","name":"t","lang":"go","version":"0.1","protocol":1,"echo":true,"headers":true,"no_responders":true}`},
		{"nkey", Connect{NKey: "UABC", Sig: "c2ln", Headers: true},
			`{"verbose":false,"pedantic":false,"tls_required":false,"nkey":"UABC","sig":"c2ln","protocol":1,"echo":false,"headers":true,"no_responders":false}`},
		{"user pass", Connect{User: "u", Pass: "p\"\r\n"},
			`{"verbose":false,"pedantic":false,"tls_required":false,"user":"u","pass":"p\"\r\n","protocol":1,"echo":false,"headers":false,"no_responders":false}`},
		{"token", Connect{AuthToken: "tok", Verbose: true, Pedantic: true},
			`{"verbose":true,"pedantic":true,"tls_required":false,"auth_token":"tok","protocol":1,"echo":false,"headers":false,"no_responders":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendConnect([]byte("x"), &tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("xCONNECT "+tt.want+"\r\n", string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !json.Valid(got[len("xCONNECT ") : len(got)-2]) {
				t.Error("not valid JSON")
			}
		})
	}
}

func TestAppendConnectShouldFail(t *testing.T) {
	tests := []struct {
		name string
		c    *Connect
	}{
		{"nil", nil},
		{"protocol 2", &Connect{Protocol: 2}},
		{"protocol -1", &Connect{Protocol: -1}},
		{"no responders without headers", &Connect{NoResponders: true}},
		{"jwt and nkey", &Connect{JWT: "j", NKey: "U", Sig: "s"}},
		{"sig alone", &Connect{Sig: "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendConnect([]byte("x"), tt.c)
			if !errors.Is(err, ErrInvalidConnect) {
				t.Fatalf("got %v, want ErrInvalidConnect", err)
			}
			if string(got) != "x" {
				t.Errorf("dst changed to %q", got)
			}
		})
	}
}

func TestConnectRedacted(t *testing.T) {
	c := Connect{JWT: "JWTSECRET", Sig: "SIGSECRET", Pass: "PASSSECRET", AuthToken: "TOKSECRET", User: "alice", NKey: "UPUBLIC"}
	forms := map[string]string{
		"String":   c.String(),
		"GoString": c.GoString(),
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v"} {
		forms[verb] = fmt.Sprintf(verb, c)
		forms["pointer "+verb] = fmt.Sprintf(verb, &c)
	}
	for name, s := range forms {
		t.Run(name, func(t *testing.T) {
			for _, secret := range []string{"JWTSECRET", "SIGSECRET", "PASSSECRET", "TOKSECRET"} {
				if strings.Contains(s, secret) {
					t.Errorf("%s shows %s: %s", name, secret, s)
				}
			}
			if !strings.Contains(s, redacted) || !strings.Contains(s, "alice") {
				t.Errorf("%s lost the redacted form: %s", name, s)
			}
		})
	}
}
