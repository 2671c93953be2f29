package trigger

// rotation is the owner's order of visits: tenants in configuration order,
// one visit each in turn, and within a tenant its bindings in configuration
// order, each tenant keeping its own cursor. A flooded tenant therefore
// delays another by at most one visit per rotation, and binding b of tenant
// k is visited every len(tenants) * len(bindings of k) steps exactly.
type rotation struct {
	tenants int
	next    int
}

func newRotation(tenants int) rotation { return rotation{tenants: tenants} }

// nextBinding advances the rotation and returns the binding to visit.
func (t *Triggers) nextBinding() *bindingState {
	ts := &t.tenants[t.rot.next]
	t.rot.next++
	if t.rot.next == t.rot.tenants {
		t.rot.next = 0
	}
	b := ts.bindings[ts.cursor]
	ts.cursor++
	if ts.cursor == len(ts.bindings) {
		ts.cursor = 0
	}
	return &t.bindings[b]
}
