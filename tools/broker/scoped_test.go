package broker

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/jwt/v2"
)

// TestMintScopedUser checks the JWTs of a scoped signing key: the account
// lists the key with its user scope, and a user signed by it names the key
// as issuer and the account as issuer account, carries no permissions, and
// passes the scope's own check (the one nats-server applies).
func TestMintScopedUser(t *testing.T) {
	key := SigningKey{
		Tenant: "t1", Role: "trigger",
		PubAllow: []string{"$JS.API.CONSUMER.INFO.S.C"}, PubDeny: []string{"x"},
		SubAllow: []string{"_INBOX.t1.>"}, SubDeny: []string{"y"},
	}
	other := SigningKey{Tenant: "t2", Role: "trigger", PubAllow: []string{"z"}}
	id, err := newIdentity([]string{"t1", "t2"}, AccountLimits{}, key, other)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := id.tenant("t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(acc.scoped) != 1 {
		t.Fatalf("t1 holds %d scoped keys, want 1", len(acc.scoped))
	}
	ac, err := jwt.DecodeAccountClaims(acc.jwt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ac.SigningKeys) != 1 {
		t.Fatalf("account JWT lists %d signing keys, want 1", len(ac.SigningKeys))
	}
	sc, ok := ac.SigningKeys[acc.scoped[0].pub]
	if !ok {
		t.Fatalf("account JWT does not list the scoped key %s", acc.scoped[0].pub)
	}
	us, ok := sc.(*jwt.UserScope)
	if !ok {
		t.Fatalf("signing key scope is %T, want *jwt.UserScope", sc)
	}
	type scopeView struct {
		Role                                 string
		PubAllow, PubDeny, SubAllow, SubDeny []string
		Subs, Data, Payload                  int64
	}
	wantScope := scopeView{"trigger", key.PubAllow, key.PubDeny, key.SubAllow, key.SubDeny, jwt.NoLimit, jwt.NoLimit, jwt.NoLimit}
	tp := us.Template
	gotScope := scopeView{us.Role, tp.Pub.Allow, tp.Pub.Deny, tp.Sub.Allow, tp.Sub.Deny, tp.Subs, tp.Data, tp.Payload}
	if diff := cmp.Diff(wantScope, gotScope); diff != "" {
		t.Errorf("scope (-want +got):\n%s", diff)
	}

	exp := time.Unix(2_000_000_000, 0)
	c, err := mintScoped(acc, "t1", "trigger", UserSpec{Name: "runtime", Expires: exp})
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(c.JWT)
	if err != nil {
		t.Fatal(err)
	}
	type userView struct {
		Name, Issuer, IssuerAccount, Subject, Account string
		Expires                                       int64
		EmptyPermissions                              bool
	}
	want := userView{"runtime", acc.scoped[0].pub, acc.pub, c.User, acc.pub, exp.Unix(), true}
	got := userView{uc.Name, uc.Issuer, uc.IssuerAccount, uc.Subject, c.Account, uc.Expires, uc.HasEmptyPermissions()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scoped user claims (-want +got):\n%s", diff)
	}
	if err := us.ValidateScopedSigner(uc); err != nil {
		t.Errorf("scope refuses its user: %v", err)
	}
	// A user of the account's own key is not the scope's.
	plain, err := mint(acc, "t1", UserSpec{})
	if err != nil {
		t.Fatal(err)
	}
	puc, err := jwt.DecodeUserClaims(plain.JWT)
	if err != nil {
		t.Fatal(err)
	}
	if puc.IssuerAccount != "" || puc.Issuer != acc.pub {
		t.Errorf("plain user: issuer %s, issuer account %q; want the account and none", puc.Issuer, puc.IssuerAccount)
	}
}

func TestMintScopedUserRefused(t *testing.T) {
	id, err := newIdentity([]string{"t1"}, AccountLimits{}, SigningKey{Tenant: "t1", Role: "trigger"})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := id.tenant("t1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		role string
		spec UserSpec
		want error
	}{
		{"unknown role", "other", UserSpec{}, ErrUnknownRole},
		{"publish allow", "trigger", UserSpec{PubAllow: []string{"a"}}, ErrInvalidOptions},
		{"publish deny", "trigger", UserSpec{PubDeny: []string{"a"}}, ErrInvalidOptions},
		{"subscribe allow", "trigger", UserSpec{SubAllow: []string{"a"}}, ErrInvalidOptions},
		{"subscribe deny", "trigger", UserSpec{SubDeny: []string{}}, ErrInvalidOptions},
		{"name past MaxUserNameLen", "trigger", UserSpec{Name: string(make([]byte, MaxUserNameLen+1))}, ErrInvalidOptions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := mintScoped(acc, "t1", tc.role, tc.spec); !errors.Is(err, tc.want) {
				t.Errorf("mintScoped = %v, want %v", err, tc.want)
			}
		})
	}
}
