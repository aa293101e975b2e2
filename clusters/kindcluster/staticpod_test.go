package kindcluster

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTakenBeforeReleasesOnlyAnOlderProcesssLease(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 5, 0, time.UTC)
	at := func(d time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{AcquireTime: &metav1.MicroTime{Time: start.Add(d)}}}
	}
	for name, tc := range map[string]struct {
		lease *coordinationv1.Lease
		want  bool
	}{
		"taken by the killed process":             {at(-40 * time.Second), true},
		"taken a moment before the new start":     {at(-time.Millisecond), true},
		"taken by the new process":                {at(2 * time.Second), false},
		"taken in the new process's first second": {at(0), false},
		"never acquired":                          {&coordinationv1.Lease{}, false},
	} {
		if got := takenBefore(tc.lease, start); got != tc.want {
			t.Errorf("%s: takenBefore = %t, want %t", name, got, tc.want)
		}
	}
}
