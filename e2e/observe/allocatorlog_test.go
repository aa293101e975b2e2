// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"reflect"
	"strings"
	"testing"
)

func TestAllocatorsInLogCountsStartingAllocationByFile(t *testing.T) {
	log := `I1125 05:01:02.345678       1 allocator_stable.go:123] "Starting allocation" numClaims=1 numSlices=4
I1125 05:01:02.345999       1 allocator_stable.go:125] "Done with allocation" success=true err=null
I1125 05:01:03.000001       1 allocator_incubating.go:166] "Starting allocation" numClaims=1 numSlicesForNode=2
I1125 05:01:04.000001       1 schedule_one.go:100] "Starting allocation" from somewhere else
I1125 05:01:05.000001       1 allocator.go:98] "Starting allocation" numClaims=2
I1125 05:01:06.000001       1 allocator_stable.go:123] "Starting allocation" numClaims=1 numSlices=4`
	want := map[string]int{"stable": 2, "incubating": 1, "structured": 1}
	if got := AllocatorsInLog(log); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := AllocatorsInLog("no such line"); len(got) != 0 {
		t.Errorf("got %v from a log without allocations", got)
	}
}

// A kube-scheduler that specs share: each counts its own namespace's pods
// (lines as 1.36.3 writes them), and a namespace that is a prefix of
// another's takes none of its lines.
func TestAllocatorsInLogForCountsOneNamespacesPods(t *testing.T) {
	log := strings.Join([]string{
		`I1126 22:24:37.497786       1 allocator_stable.go:123] "Starting allocation" logger="FilterWithNominatedPods" pod="alloc-stable-9119/pod-2" numClaims=1 numSlices=36`,
		`I1126 22:24:38.901897       1 allocator_stable.go:123] "Starting allocation" logger="FilterWithNominatedPods" pod="alloc-stable-91190/pod-4" numClaims=1 numSlices=36`,
		`I1126 22:24:39.000000       1 allocator_incubating.go:166] "Starting allocation" logger="FilterWithNominatedPods" pod="alloc-stable-9119/pod-6" numClaims=1`,
		`I1126 22:24:40.000000       1 allocator_stable.go:123] "Starting allocation" numClaims=1 numSlices=36`,
	}, "\n")
	if got, want := AllocatorsInLogFor(log, "alloc-stable-9119"), map[string]int{"stable": 1, "incubating": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := AllocatorsInLogFor(log, "other"); len(got) != 0 {
		t.Errorf("got %v for a namespace with no pods in the log", got)
	}
	if got, want := AllocatorsInLogFor(log, ""), map[string]int{"stable": 3, "incubating": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("every line: got %v, want %v", got, want)
	}
}

// Lines as kube-scheduler 1.36.3 writes them at --vmodule=allocator*=7
// (the allocator's values after the pod its logger carries; a device that
// klog prints as a structure has no device="..." form).
func TestAllocatorLinesFor(t *testing.T) {
	log := strings.Join([]string{
		`I1126 07:07:17.600000       1 allocator_incubating.go:166] "Starting allocation" pod="ns/admin" numClaims=1 numSlicesForNode=2`,
		`I1126 07:07:17.643412       1 allocator_incubating.go:1350] "Insufficient counters" pod="ns/admin" device="testdriver.kep5018.example/kind-worker/whole"`,
		`I1126 07:07:17.643500       1 allocator_incubating.go:1140] "Device not usable" pod="ns/admin" device="testdriver.kep5018.example/kind-worker/whole"`,
		`I1126 07:07:17.643600       1 allocator_incubating.go:1350] "Insufficient counters" pod="ns/other" device="testdriver.kep5018.example/kind-worker/half-0"`,
		`I1126 07:07:17.643743       1 allocator_incubating.go:1424] "Device capacity not enough" pod="ns/admin" device={"Name":"shared-0"}`,
		`I1126 07:07:17.650000       1 schedule_one.go:1000] "Unable to schedule pod" pod="ns/admin"`,
	}, "\n")
	got := AllocatorLinesFor(log, "ns/admin")
	var seen []string
	for _, l := range got {
		seen = append(seen, l.File+" "+l.Message+" "+l.Device)
	}
	want := []string{
		"allocator_incubating.go Starting allocation ",
		"allocator_incubating.go Insufficient counters testdriver.kep5018.example/kind-worker/whole",
		"allocator_incubating.go Device not usable testdriver.kep5018.example/kind-worker/whole",
		"allocator_incubating.go Device capacity not enough ",
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("lines for ns/admin:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if got := AllocatorLinesFor(log, "ns/nobody"); got != nil {
		t.Errorf("a pod the log does not name: %v", got)
	}
}
