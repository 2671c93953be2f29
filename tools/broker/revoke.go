package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// claimsUpdateSubject is the system request that replaces an account's
// JWT in a running server, with %s the account's public key (nats-server
// v2.14.6 events.go, accUpdateEventSubjNew). With `resolver: MEMORY` every
// server of a cluster subscribes to it (events.go, initEventTracking).
const claimsUpdateSubject = "$SYS.REQ.ACCOUNT.%s.CLAIMS.UPDATE"

// RevokeUser revokes user, a user's public nkey ("U..."), in tenant's
// account: the account JWT is signed again by the operator with every JWT
// of that user issued at or before at in its revocations, and sent to the
// running server through req, a Requester connected as the system user
// ([Broker.System]; tools/broker/clustertest.NodeRequester adapts the
// project's connection). The server closes the user's connections at once
// (the revocation's reason) and refuses its later connects; a user minted
// after at, of another key, is untouched. The revocation survives
// [Broker.Restart] (the regenerated configuration preloads the new JWT).
//
// Errors: ErrUnknownTenant, ErrInvalidUser for a key that is not a user's,
// ErrClosed, the Requester's error, ErrMalformedReply, and a
// *ClaimsUpdateError when the server refused the JWT. After an error of
// the request the broker keeps the new JWT for its next start.
func (b *Broker) RevokeUser(ctx context.Context, req Requester, tenant, user string, at time.Time) error {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return ErrClosed
	}
	acc, err := b.identity.tenant(tenant)
	if err != nil {
		return err
	}
	token, err := b.identity.revoke(acc, user, at)
	if err != nil {
		return err
	}
	return pushClaims(ctx, req, acc.pub, token)
}

// revoke adds user's revocation at at to acc's JWT and returns the new JWT.
func (id *identity) revoke(acc *account, user string, at time.Time) (string, error) {
	if !nkeys.IsValidPublicUserKey(user) {
		return "", ErrInvalidUser
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	ac, err := jwt.DecodeAccountClaims(acc.jwt)
	if err != nil {
		return "", fmt.Errorf("broker: account jwt: %w", err)
	}
	ac.RevokeAt(user, at)
	token, err := ac.Encode(id.operator)
	if err != nil {
		return "", fmt.Errorf("broker: account jwt: %w", err)
	}
	acc.jwt = token
	return token, nil
}

// claimsUpdateReply is the server's reply to a claims update
// (ServerAPIClaimUpdateResponse); the server's text is not kept.
type claimsUpdateReply struct {
	Data *struct {
		Code int `json:"code"`
	} `json:"data"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// pushClaims sends an account's JWT to the running server.
func pushClaims(ctx context.Context, req Requester, account, token string) error {
	reply, err := req.Request(ctx, fmt.Sprintf(claimsUpdateSubject, account), []byte(token))
	if err != nil {
		return err
	}
	var r claimsUpdateReply
	if err := json.Unmarshal(reply, &r); err != nil {
		return ErrMalformedReply
	}
	switch {
	case r.Error != nil:
		return &ClaimsUpdateError{Code: r.Error.Code}
	case r.Data == nil:
		return ErrMalformedReply
	case r.Data.Code != http.StatusOK:
		return &ClaimsUpdateError{Code: r.Data.Code}
	}
	return nil
}
