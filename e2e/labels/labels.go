// Package labels holds the suite's spec groups (Ginkgo labels) and checks a
// label filter against them, for the suite and for the Makefile's preflight.
package labels

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Known are the spec groups; README.md lists what each covers.
var Known = []string{"allocation", "authz", "daemonset", "disruptive", "driver", "metrics", "skew", "smoke", "toggle", "upgrade"}

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
		known[l] = true
	}
	var unknown []string
	for _, w := range word.FindAllString(filter, -1) {
		if !known[w] {
			unknown = append(unknown, w)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sorted := append([]string(nil), Known...)
	sort.Strings(sorted)
	return fmt.Errorf("unknown label %s in filter %q: labels are %s", strings.Join(unknown, ", "), filter, strings.Join(sorted, ", "))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
