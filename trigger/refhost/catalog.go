package refhost

import "github.com/latent-systems/latent-nats/trigger"

// PublicationKey names a publication: a function of a contract offered by
// a service, whatever revision a route selects.
type PublicationKey struct {
	Service  string
	Contract string
	Function string
}

// routeKey names a route of a service; the empty route is its default.
type routeKey struct {
	service, route string
}

// route is where a route leads now.
type route struct {
	revision   string // empty: removed
	generation uint64
}

// keyOf returns the publication a binding delivers to.
func keyOf(b trigger.BindingRef) PublicationKey {
	return PublicationKey{Service: b.Service, Contract: b.Contract, Function: b.Function}
}

// Publish makes a publication eligible (again). It returns ErrInvalidName
// for a name outside the identifier rules.
func (h *Host) Publish(k PublicationKey) error {
	if !validIdentifier(k.Service) || !validIdentifier(k.Contract) || !validIdentifier(k.Function) {
		return ErrInvalidName
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.published[k] = true
	return nil
}

// RevokePublication makes a publication ineligible: PublicationEligible
// refuses it, and an activation reserved before the revocation is refused
// at its final start check (trigger.OutcomePermissionRejected). Publish
// restores it.
func (h *Host) RevokePublication(k PublicationKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.published, k)
}

// RevokeCredential makes the tenant's credential not current;
// RestoreCredential makes it current again. Only that tenant is affected.
func (h *Host) RevokeCredential(tenant string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.revokedCr[tenant] = true
}

// RestoreCredential undoes RevokeCredential.
func (h *Host) RestoreCredential(tenant string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.revokedCr, tenant)
}

// RevokePrincipal makes activations for the principal subject fail
// authentication (trigger.OutcomeAuthenticationRejected) at their final
// start check; RestorePrincipal undoes it.
func (h *Host) RevokePrincipal(subject string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.revokedPr[subject] = true
}

// RestorePrincipal undoes RevokePrincipal.
func (h *Host) RestorePrincipal(subject string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.revokedPr, subject)
}

// SetRoute points the service's route (empty for its default route) at a
// revision and returns the route's new generation: 1 the first time, one
// more on every later call for that route, removals included.
// Reservations already made keep the revision and generation they pinned.
// It returns ErrInvalidName for a name outside the identifier rules.
func (h *Host) SetRoute(service, routeName, revision string) (uint64, error) {
	if !validIdentifier(service) || !validIdentifier(revision) || routeName != "" && !validIdentifier(routeName) {
		return 0, ErrInvalidName
	}
	return h.setRoute(routeKey{service, routeName}, revision), nil
}

// RemoveRoute removes the service's route: later reservations through it
// fail with ErrNoRoute. The generation still grows.
func (h *Host) RemoveRoute(service, routeName string) {
	h.setRoute(routeKey{service, routeName}, "")
}

func (h *Host) setRoute(k routeKey, revision string) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.routes[k]
	if r == nil {
		r = &route{}
		h.routes[k] = r
	}
	r.revision = revision
	r.generation++
	return r.generation
}

// PublicationEligible implements trigger.Host: nil when the binding's
// publication is published, ErrNotPublished otherwise.
func (h *Host) PublicationEligible(b trigger.BindingRef) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.published[keyOf(b)] {
		return ErrNotPublished
	}
	return nil
}

// CredentialCurrent implements trigger.Host: nil unless the tenant's
// credential is revoked (ErrCredentialRevoked).
func (h *Host) CredentialCurrent(tenant string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.revokedCr[tenant] {
		return ErrCredentialRevoked
	}
	return nil
}
