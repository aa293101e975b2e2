package observe

import (
	"reflect"
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
