// Package labels holds the suite's spec groups (Ginkgo labels) and checks a
// label filter against them, for the suite and for the runner's preflight (e2e/run).
package labels

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Known are the spec groups; README.md lists what each covers. Serial and
// Disruptive are the e2e framework's own labels (framework.WithSerial,
// framework.WithDisruptive), spelt as it spells them; Ginkgo matches labels
// without regard to case, and so does Check.
var Known = []string{"allocation", "allocators", "authz", "consumable", "daemonset", "Disruptive", "driver", "extended", "lock", "metrics", "partitionable", "prioritized", "Serial", "skew", "smoke", "taints", "toggle", "upgrade"}

// FrameworkLabels are the labels the e2e framework's decorators give a spec.
var FrameworkLabels = map[string]string{"WithSerial": "Serial", "WithDisruptive": "Disruptive"}

var word = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_-]*`)

// Check refuses a filter Ginkgo cannot parse, or one that names a label no
// spec carries: such a filter silently selects nothing, which must not read
// as a green run.
func Check(filter string) error {
	if _, err := types.ParseLabelFilter(filter); err != nil {
		return fmt.Errorf("label filter %q does not parse: %v", filter, firstLine(err.Error()))
	}
	known := map[string]bool{}
	for _, l := range Known {
		known[strings.ToLower(l)] = true
	}
	var unknown []string
	for _, w := range word.FindAllString(filter, -1) {
		if !known[strings.ToLower(w)] {
			unknown = append(unknown, w)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sorted := append([]string(nil), Known...)
	sort.Slice(sorted, func(i, j int) bool { return strings.ToLower(sorted[i]) < strings.ToLower(sorted[j]) })
	return fmt.Errorf("unknown label %s in filter %q: labels are %s", strings.Join(unknown, ", "), filter, strings.Join(sorted, ", "))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
