package broker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

func TestMintUser(t *testing.T) {
	id, err := newIdentity([]string{"t1"}, AccountLimits{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := id.tenant("t1")
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Unix(2_000_000_000, 0)
	spec := UserSpec{
		Name:     "puller",
		PubAllow: []string{"$JS.API.CONSUMER.INFO.S.C"},
		PubDeny:  []string{"x"},
		SubAllow: []string{"_INBOX.>"},
		SubDeny:  []string{"y"},
		Expires:  exp,
	}
	c, err := mint(acc, "t1", spec)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(c.JWT)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Name, Issuer, Subject, Tenant, Account string
		PubAllow, PubDeny, SubAllow, SubDeny   []string
		Expires                                int64
	}
	want := view{"puller", acc.pub, c.User, "t1", acc.pub, spec.PubAllow, spec.PubDeny, spec.SubAllow, spec.SubDeny, exp.Unix()}
	got := view{uc.Name, uc.Issuer, uc.Subject, c.Tenant, c.Account,
		uc.Permissions.Pub.Allow, uc.Permissions.Pub.Deny, uc.Permissions.Sub.Allow, uc.Permissions.Sub.Deny, uc.Expires}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user claims (-want +got):\n%s", diff)
	}

	kp, err := nkeys.FromSeed(c.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if pub, _ := kp.PublicKey(); pub != c.User {
		t.Errorf("seed's public key %s, want %s", pub, c.User)
	}

	// The account JWT carries the JetStream limits and the operator
	// trusts it.
	ac, err := jwt.DecodeAccountClaims(acc.jwt)
	if err != nil {
		t.Fatal(err)
	}
	js := ac.Limits.JetStreamLimits
	if diff := cmp.Diff([]int64{1, 2, 3, 4}, []int64{js.MemoryStorage, js.DiskStorage, js.Streams, js.Consumer}); diff != "" {
		t.Errorf("account JetStream limits (-want +got):\n%s", diff)
	}
	oc, err := jwt.DecodeOperatorClaims(id.operatorJWT)
	if err != nil {
		t.Fatal(err)
	}
	if ac.Issuer != oc.Subject || oc.SystemAccount != id.system.pub {
		t.Errorf("account issuer %s, operator %s, system account %s", ac.Issuer, oc.Subject, oc.SystemAccount)
	}
}

func TestMintUserLimits(t *testing.T) {
	acc, err := newAccount(nil, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	subjects := func(n int) []string { return slices.Repeat([]string{"a"}, n) }
	for _, tc := range []struct {
		name string
		spec UserSpec
		ok   bool
	}{
		{"MaxSubjects", UserSpec{PubAllow: subjects(MaxSubjects)}, true},
		{"MaxSubjects+1", UserSpec{SubDeny: subjects(MaxSubjects + 1)}, false},
		{"empty subject", UserSpec{SubAllow: []string{""}}, false},
		{"name at MaxUserNameLen", UserSpec{Name: strings.Repeat("n", MaxUserNameLen)}, true},
		{"name past MaxUserNameLen", UserSpec{Name: strings.Repeat("n", MaxUserNameLen+1)}, false},
		{"expiry before 1970", UserSpec{Expires: time.Unix(-5, 0)}, false},
		{"expired", UserSpec{Expires: time.Now().Add(-time.Hour)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mint(acc, "", tc.spec)
			if got := err == nil; got != tc.ok || (err != nil && !errors.Is(err, ErrInvalidOptions)) {
				t.Errorf("mint = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestCredsRedacted(t *testing.T) {
	acc, err := newAccount(nil, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mint(acc, "t1", UserSpec{})
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		t.Run(verb, func(t *testing.T) {
			out := fmt.Sprintf(verb, c)
			if strings.Contains(out, string(c.Seed)) || strings.Contains(out, c.JWT) {
				t.Errorf("%s prints a secret", verb)
			}
		})
	}
	file, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	gotJWT, err := jwt.ParseDecoratedJWT(file)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := jwt.ParseDecoratedUserNKey(file)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	if diff := cmp.Diff([]string{c.JWT, c.User}, []string{gotJWT, pub}); diff != "" {
		t.Errorf("creds file round trip (-want +got):\n%s", diff)
	}
}

func TestWriteCredsName(t *testing.T) {
	acc, err := newAccount(nil, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mint(acc, "", UserSpec{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a.creds", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../a.creds", false},
		{"d/a.creds", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := writeCreds(dir, tc.name, c)
			if got := err == nil; got != tc.ok {
				t.Errorf("writeCreds(%q) = %v, want ok %v", tc.name, err, tc.ok)
			}
		})
	}
}
