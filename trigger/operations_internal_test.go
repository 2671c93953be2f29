package trigger

import "testing"

// TestRequestOperations: an ingress request admits three protocol
// operations (consumer info, the pull, the acknowledgement) and refuses a
// fourth, failing the visit as an internal error, counted as every
// failure is.
func TestRequestOperations(t *testing.T) {
	var v visit
	for i := range maxRequestOperations {
		if !v.operation() {
			t.Fatalf("operation %d refused", i+1)
		}
	}
	if v.r.Result != 0 || v.r.Error != 0 {
		t.Fatalf("after three operations the report is %+v, want untouched", v.r)
	}
	if v.operation() {
		t.Fatal("a fourth operation admitted")
	}
	if v.r.Result != ResultFailed || v.r.Error != ClassInternal {
		t.Errorf("after a fourth operation the report is %+v, want failed, internal", v.r)
	}
	if v.ops != maxRequestOperations {
		t.Errorf("%d operations counted, want %d", v.ops, maxRequestOperations)
	}
}
