// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
)

// require is the only way a spec skips. Where the release table declares that
// this run cannot give the spec n, the spec skips with the declared reason
// (and the report marks the skip declared, and out of reach where the row
// is one of how the run reaches the cluster). Anywhere else it goes on, and
// probe, when given, must succeed: a failing probe fails the spec with its
// cause. With a probe, a declared skip is taken only when the probe fails, so
// an existing cluster that does answer still runs the spec.
func require(ctx context.Context, n release.Need, probe func(context.Context) error) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	skip, declared := e.Rel.SkipFor(n, e.Mode())
	why := skip.Reason
	if probe != nil {
		err := probe(ctx)
		if err == nil {
			return
		}
		if !declared {
			framework.Failf("this spec needs %s, which a cluster the suite created must give on Kubernetes %s: %v", n, e.Rel.Minor, err)
		}
		why = fmt.Sprintf("%s (%v)", why, err)
	} else if !declared {
		return
	}
	if skip.OutOfReach() {
		// The sign-off counts the spec's requirement out of reach, not
		// inapplicable: a cluster the suite made would check it.
		ginkgo.AddReportEntry(report.OutOfReachEntry, string(n), ginkgo.ReportEntryVisibilityNever)
	}
	stopWithVerdict(report.DeclaredSkipEntry, string(n), why)
}

// requireUpgrade is require for the in-place upgrade spec, whose need
// (release switching) the run decided once (resolved.UpgradeFor): where
// it does not run, the spec stops with that decision's declared skip, the
// release table's reason word for word. A run whose filters were read to
// leave the spec out has no bits for it, and Ginkgo running it anyway is
// the suite's own fault (labels.UpgradeSpec misses a label), not a skip.
func requireUpgrade() {
	ginkgo.GinkgoHelper()
	u := theRun.Upgrade
	switch {
	case u.Runs:
		return
	case !u.Declared:
		framework.Failf("the run was resolved without the upgrade spec (%s), yet Ginkgo runs it: e2e/labels' UpgradeSpec lacks a label the spec carries", u.Why)
	}
	if u.OutOfReach {
		ginkgo.AddReportEntry(report.OutOfReachEntry, string(release.NeedReleaseSwitching), ginkgo.ReportEntryVisibilityNever)
	}
	stopWithVerdict(report.DeclaredSkipEntry, string(release.NeedReleaseSwitching), u.Why)
}

// stopWithVerdict ends a spec that did not pass and did not fail, with the
// entry the report judges it by: a declared skip (its need) or a known
// upstream defect (its issue). Without the entry the report counts the stop
// as an undeclared skip, a failure.
func stopWithVerdict(entry, value, why string) {
	ginkgo.GinkgoHelper()
	ginkgo.AddReportEntry(entry, value, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip(why)
}

// A group's set-up node (newFramework's BeforeEach) runs before the spec's
// body records its KEP requirement (recordKEP), so a skip taken there leaves the
// spec's row without a requirement, and the sign-off then counts that
// requirement as one no spec ran for: not a sign-off, though every spec of
// it took a declared skip. requireAtKEP is require for a set-up node: where
// the run cannot give n, the spec stops as soon as its body has recorded its
// requirement (recordKEP calls takeRequiredSkip), with require's verdict.
//
// pendingNeed is per process: a process runs one spec at a time.
var pendingNeed *release.Need

func requireAtKEP(ctx context.Context, n release.Need) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	pendingNeed = nil
	if _, declared := e.Rel.SkipFor(n, e.Mode()); !declared {
		return
	}
	pendingNeed = &n
	ginkgo.DeferCleanup(func() {
		// A spec that failed before its body began already says why.
		if pendingNeed != nil && !ginkgo.CurrentSpecReport().Failed() {
			pendingNeed = nil
			framework.Failf("this run cannot give the spec %s, and its body never named its KEP requirement, where it would have skipped", n)
		}
	})
}

// takeRequiredSkip takes the skip requireAtKEP found declared, if any.
func takeRequiredSkip(e *testenv.Env) {
	ginkgo.GinkgoHelper()
	if pendingNeed == nil {
		return
	}
	n := *pendingNeed
	pendingNeed = nil
	// Without a probe require reads no context but the environment.
	require(withEnv(context.Background(), e), n, nil)
}

// requireNodeAccess: the spec looks inside the nodes.
func requireNodeAccess(ctx context.Context) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	require(ctx, release.NeedNodeAccess, nil)
	if e.Cluster == nil {
		framework.Failf("this spec looks inside the nodes, but the suite has no kind cluster to reach them")
	}
}

// nodesReachable says whether the suite may look inside the nodes without
// a skip: on the clusters it makes, which run kube-scheduler at the
// allocator's log level and let a component be restarted with other flags.
func nodesReachable(e *testenv.Env) bool {
	_, declared := e.Rel.DeclaredSkip(release.NeedNodeAccess, e.Mode())
	return !declared && e.Cluster != nil
}

// requireGateSwitching: the spec restarts components with the gate switched.
func requireGateSwitching(ctx context.Context) {
	ginkgo.GinkgoHelper()
	require(ctx, release.NeedGateSwitching, nil)
}
