package adminaccess

import (
	"github.com/onsi/ginkgo/v2"

	"github.com/kep5018/adminaccess-conformance/e2e/labels"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// checkLabelFilter refuses a filter that names a label no spec carries (see labels.Check).
func checkLabelFilter() error { return labels.Check(ginkgo.GinkgoLabelFilter()) }

// kep records the KEP requirement a spec covers, for report.md.
func kep(requirement string) {
	ginkgo.AddReportEntry(report.KEPEntry, requirement, ginkgo.ReportEntryVisibilityNever)
	takeRequiredSkip()
}
