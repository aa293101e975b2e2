package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// allocatedOrKnownDefect waits for the claim of pod to be allocated: the
// promise. Where the release table declares the defect case c for this
// release and allocator, the promise must instead fail as declared: the
// scheduler refuses the pod (FailedScheduling, "cannot allocate all
// claims"), and once free(ctx) has taken away what the defect wrongly counts
// against the claim, the same claim is allocated. The spec then ends with
// the known-defect verdict, after seen (when given) has checked what it
// checks of the spec's allocations. Any other outcome fails the spec, a
// promise that held where the defect is declared included (the table is
// stale).
func allocatedOrKnownDefect(ctx context.Context, b *builder.Builder, pod *corev1.Pod, claimName string, c release.DefectCase, free func(context.Context), seen func(context.Context)) *resourceapi.ResourceClaim {
	ginkgo.GinkgoHelper()
	allocator := env.Allocator()
	defect, declared := env.Rel.KnownDefect(c, allocator)
	refusal := gomega.And(gomega.HavePrefix("Warning FailedScheduling: "), gomega.ContainSubstring(release.CannotAllocate))
	var claim *resourceapi.ResourceClaim
	var refused string
	gomega.Eventually(ctx, func(ctx context.Context) error {
		c, err := b.GetClaim(ctx, claimName)
		if err != nil {
			return err
		}
		if c.Status.Allocation != nil {
			claim = c
			return nil
		}
		for _, e := range podEvents(ctx, pod) {
			if ok, _ := refusal.Match(e); ok {
				refused = e
				return nil
			}
		}
		return fmt.Errorf("claim %s is neither allocated nor refused; pod %s's events: %v", claimName, pod.Name, lastOf(podEvents(ctx, pod), 3))
	}).WithTimeout(allocateTimeout).Should(gomega.Succeed())

	switch {
	case claim != nil && declared:
		framework.Failf("%s; claim %s was allocated: %v", defect.NotReproduced(env.Rel.Minor, allocator), claimName, claim.Status.Allocation.Devices.Results)
	case claim != nil:
		return claim
	case !declared:
		framework.Failf("claim %s should be allocated (no upstream defect is declared for Kubernetes %s with the %s allocator), but kube-scheduler refused pod %s: %s",
			claimName, env.Rel.Minor, allocator, pod.Name, refused)
	}

	// The defect as declared: the refusal is for what free takes away.
	framework.Logf("%s: kube-scheduler refused pod %s: %s", defect.Issue, pod.Name, refused)
	free(ctx)
	claim = allocatedClaim(ctx, b, claimName)
	framework.Logf("%s: once freed, claim %s was allocated: %v", defect.Issue, claimName, claim.Status.Allocation.Devices.Results)
	if seen != nil {
		seen(ctx)
	}
	stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
		"pod %s was refused (%s) and its claim %s allocated only once the ordinary claims were gone (allocator %s)",
		pod.Name, refused, claimName, allocator)))
	return nil
}
