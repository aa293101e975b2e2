// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// UpgradeRequirement is the ID of the KEP requirement the in-place upgrade
// spec checks (e2e/adminaccess/upgrade.go names it by its text, kep(...);
// it() makes the ID a label of the spec). A unit test holds the two
// together.
const UpgradeRequirement = "KEP5018-GATE-07"

// UpgradeSpec are the labels the in-place upgrade spec carries on rel, as
// it() and the spec's Describe give them: the framework's Serial and
// Disruptive, its group, its requirement's ID and, since the requirement
// needs DRAAdminAccess, upstream's feature-gate labels for the gate's
// maturity in rel.
func UpgradeSpec(rel release.Release) []string {
	out := []string{"Serial", "Disruptive", "upgrade", UpgradeRequirement}
	if r, ok := requirements.ByID(UpgradeRequirement); ok && r.NeedsAdminAccess() {
		for _, u := range AdminAccessGate(rel) {
			out = append(out, u.Label)
		}
	}
	return out
}

// UpgradeSelected says whether a Ginkgo label filter runs the in-place
// upgrade spec on rel: the one reading of it, so that a run whose filter
// leaves the spec out neither gets the next release's bits nor expects
// them (resolved.UpgradeFor takes the answer). An empty filter selects
// every spec. Only the label filter is read: a FOCUS or SKIP that leaves
// the spec out costs the bits' fetch, never a spec that waits for bits
// nobody gets.
func UpgradeSelected(filter string, rel release.Release) (bool, error) {
	if strings.TrimSpace(filter) == "" {
		return true, nil
	}
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return false, fmt.Errorf("label filter %q does not parse: %v", filter, firstLine(err.Error()))
	}
	return match(UpgradeSpec(rel)), nil
}
