package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// require is the only way a spec skips. Where the release table declares that
// this run cannot give the spec n, the spec skips with the declared reason
// (and the report marks the skip declared). Anywhere else it goes on, and
// probe, when given, must succeed: a failing probe fails the spec with its
// cause. With a probe, a declared skip is taken only when the probe fails, so
// an existing cluster that does answer still runs the spec.
func require(ctx context.Context, n release.Need, probe func(context.Context) error) {
	ginkgo.GinkgoHelper()
	why, declared := env.Rel.DeclaredSkip(n, env.Mode())
	if probe != nil {
		err := probe(ctx)
		if err == nil {
			return
		}
		if !declared {
			framework.Failf("this spec needs %s, which a cluster the suite created must give on Kubernetes %s: %v", n, env.Rel.Minor, err)
		}
		why = fmt.Sprintf("%s (%v)", why, err)
	} else if !declared {
		return
	}
	stopWithVerdict(report.DeclaredSkipEntry, string(n), why)
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

// requireNodeAccess: the spec looks inside the nodes.
func requireNodeAccess(ctx context.Context) {
	ginkgo.GinkgoHelper()
	require(ctx, release.NeedNodeAccess, nil)
	if env.Cluster == nil {
		framework.Failf("this spec looks inside the nodes, but the suite has no kind cluster to reach them")
	}
}

// nodesReachable says whether the suite may look inside the nodes without
// a skip: on the clusters it makes, which run kube-scheduler at the
// allocator's log level and let a component be restarted with other flags.
func nodesReachable() bool {
	_, declared := env.Rel.DeclaredSkip(release.NeedNodeAccess, env.Mode())
	return !declared && env.Cluster != nil
}

// requireGateSwitching: the spec restarts components with the gate switched.
func requireGateSwitching(ctx context.Context) {
	ginkgo.GinkgoHelper()
	require(ctx, release.NeedGateSwitching, nil)
}
