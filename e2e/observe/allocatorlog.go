package observe

import (
	"regexp"
	"strings"
)

// startingAllocation is the line each structured allocator implementation
// logs at level 5 when kube-scheduler asks it to allocate, in klog's text
// header form: "I1125 05:01:02.345678       1 allocator_stable.go:123]
// "Starting allocation" numClaims=1 ...". The file names the implementation
// (allocator_stable.go, allocator_incubating.go, allocator_experimental.go;
// allocator.go where there is one implementation).
var startingAllocation = regexp.MustCompile(`\s(allocator(?:_([a-z]+))?)\.go:\d+\] "Starting allocation"`)

// AllocatorsInLog counts kube-scheduler's "Starting allocation" lines in a
// log by implementation: stable, incubating, experimental, or "structured"
// for the single implementation of 1.33.
func AllocatorsInLog(log string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(log, "\n") {
		m := startingAllocation.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[2]
		if name == "" {
			name = "structured"
		}
		out[name]++
	}
	return out
}
