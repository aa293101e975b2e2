// SPDX-License-Identifier: Apache-2.0

package report

// A spec's state in the report, besides passed, failed and skipped: how
// Ginkgo's outcome, the release table's declared skips and defects, an
// interrupt and a cluster that broke under the run each count.

import (
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterbreak"
)

// KnownDefect is the state of a spec whose promise failed exactly as the
// release table declares for an upstream defect: neither passed nor a suite
// failure, and counted apart.
const KnownDefect = "known defect"

// CutShort is the state of a spec that an interrupt (Ctrl-C, Ginkgo's
// SpecStateInterrupted) stopped mid-run: it neither passed nor failed, so
// it is counted apart, and the sign-off counts it as not run. A spec that
// had failed before the interrupt came keeps its failure (Ginkgo keeps the
// first).
const CutShort = "cut short"

// ClusterBroke is the state of a spec that ran while the cluster was
// broken under the run (a node NotReady, a control-plane component or the
// driver's pod down beyond the grace, outside the suite's own moves:
// e2e/clusterwatch): neither passed nor a requirement's failure, and the
// sign-off counts it as not run. Its reason keeps the spec's own message.
const ClusterBroke = "cluster broke"

// ClusterBreak is something the run relied on that broke under it, not by
// the suite's doing (e2e/clusterbreak: clusterwatch declares it, and report
// stays free of client-go).
type ClusterBreak = clusterbreak.Break

// interruptMessages are Ginkgo's failure messages of a spec or suite node
// an interrupt stopped (its InterruptCause's texts, in an internal
// package), and the suite's failure reason after one.
var interruptMessages = []string{"Interrupted by User", "Interrupted by Other Ginkgo Process"}

// UndeclaredSkip starts the reason of a spec that skipped without a skip the
// release table declares; the report counts it as failed.
const UndeclaredSkip = "skipped without a declared reason: "

// Outcome is how the suite counts one spec: a skip is "skipped" only when the
// spec took a skip the release table declares (declared names its need); any
// other skip is "failed", since a green run must mean every applicable check
// ran. A spec that stopped on a known upstream defect (defect names it,
// release.Defect) is KnownDefect: the spec itself checked that the outcome
// was the one declared. A spec an interrupt stopped mid-run is CutShort. A
// spec that never started (no message: left out by the label filter or
// focus, or never reached after an interrupt) is "not selected".
func Outcome(state types.SpecState, message, declared, defect string) (string, string) {
	switch {
	case state == types.SpecStatePassed:
		return "passed", ""
	case state == types.SpecStateInterrupted:
		return CutShort, FirstLine(message)
	case state == types.SpecStateSkipped || state == types.SpecStatePending:
		reason := FirstLine(message)
		switch {
		case defect != "":
			return KnownDefect, reason
		case reason == "" && declared == "":
			return "not selected", "left out by the label filter or focus"
		case declared == "":
			return "failed", UndeclaredSkip + reason
		}
		return "skipped", reason
	}
	return "failed", message
}

// brokeDuring is ClusterBroke for a spec that ran while a break was open
// (in the grace before a break was declared included: a break begins when
// it was first seen), else state. A pass counts no more than a failure
// then: a promise that something stays unallocated holds while
// kube-scheduler is down. A break after one of
// the suite's own moves excuses nothing: it is the suite's move (or the
// release) failing, and so are the specs that failed during it.
func brokeDuring(breaks []ClusterBreak, start, end time.Time, state string) string {
	for _, b := range breaks {
		if !b.AfterSuiteMove && b.During(start, end) {
			return ClusterBroke
		}
	}
	return state
}
