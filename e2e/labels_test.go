package e2e

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// knownLabels are the spec groups; README.md lists what each covers.
var knownLabels = map[string]bool{
	"smoke": true, "driver": true, "authz": true, "allocation": true, "daemonset": true,
	"skew": true, "toggle": true, "upgrade": true, "metrics": true, "disruptive": true,
}

var labelWord = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_-]*`)

// checkLabelFilter refuses a filter that names a label no spec carries: such
// a filter silently selects nothing, which must not read as a green run.
func checkLabelFilter() error {
	filter := ginkgo.GinkgoLabelFilter()
	var unknown []string
	for _, w := range labelWord.FindAllString(filter, -1) {
		if !knownLabels[w] {
			unknown = append(unknown, w)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	var known []string
	for l := range knownLabels {
		known = append(known, l)
	}
	sort.Strings(known)
	return fmt.Errorf("unknown label %s in filter %q: labels are %s", strings.Join(unknown, ", "), filter, strings.Join(known, ", "))
}

// kep records the KEP requirement a spec covers, for report.md.
func kep(requirement string) {
	ginkgo.AddReportEntry(report.KEPEntry, requirement, ginkgo.ReportEntryVisibilityNever)
}
