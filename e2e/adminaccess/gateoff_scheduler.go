package adminaccess

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The specs of kube-scheduler without DRAAdminAccess (the move helpers are in
// gatemoves.go).

var _ = framework.Describe("With DRAAdminAccess off in kube-scheduler", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("sched-off")
	inProfile(f, "scheduler-off")

	ginkgo.It("fails an admin-access claim's allocation with the scheduler's error until the gate is back on", ginkgo.Label("skew", "metrics"), func(ctx context.Context) {
		kep("a scheduler without the gate never allocates admin access; re-enabling schedules the waiting pods")
		requireGateSwitching(ctx)
		s := newScraper(ctx, f, metrics.Scheduler)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		pendingPods := func(ctx context.Context) (float64, error) {
			fams, err := s.Scrape(ctx, metrics.Scheduler, s.node)
			if err != nil {
				return 0, err
			}
			return fams.Sum(env.Rel.Metrics.SchedulerPending, nil), nil
		}
		// The gauge is cluster-wide: pods of earlier specs' namespaces that
		// are still being deleted count until they go, and would leave the
		// gauge below a baseline that included them. Start from a quiet
		// scheduler, so that every count below is this spec's alone.
		eventuallyScraped(ctx, pendingPods).WithTimeout(2*time.Minute).Should(gomega.BeZero(),
			"%s: no pod of an earlier spec is still waiting to be scheduled", env.Rel.Metrics.SchedulerPending)
		const baseline = 0.0
		// The reason these pods wait is admin access's own (the scheduler's
		// gate is off). The allocator refuses with an error, which the
		// DynamicResources plugin returns as an error status (statusError in
		// dynamicresources.go, 1.33-1.35), not as unschedulable: the pods are
		// in scheduler_pending_pods, and scheduler_unschedulable_pods does not
		// count them (seen on 1.35.4: the gauge stayed 0 with both pods waiting).
		dra := map[string]string{"plugin": "DynamicResources", "profile": corev1.DefaultSchedulerName}
		unschedulable := func(ctx context.Context) (float64, error) {
			fams, err := s.Scrape(ctx, metrics.Scheduler, s.node)
			if err != nil {
				return 0, err
			}
			return fams.Sum(env.Rel.Metrics.SchedulerUnschedulable, dra), nil
		}
		unschedulableBefore, err := unschedulable(ctx)
		framework.ExpectNoError(err)

		const waiting = 2
		var pods []*corev1.Pod
		var claims []*resourceapi.ResourceClaim
		for i := 0; i < waiting; i++ {
			claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
			framework.ExpectNoError(err)
			gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeTrue(), "the apiserver (gate on) keeps the field")
			pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
			framework.ExpectNoError(err)
			pods, claims = append(pods, pod), append(claims, claim)
		}
		want := env.Rel.SchedulerGateOffMessage(f.Namespace.Name, claims[0].Name, builder.RequestName)
		expectPodEvent(ctx, pods[0], allocateTimeout, failedScheduling(want))
		eventuallyScraped(ctx, pendingPods).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline+waiting),
			"%s counts the pods that cannot be scheduled", env.Rel.Metrics.SchedulerPending)
		consistentlyScraped(ctx, unschedulable).WithTimeout(stableFor).Should(gomega.Equal(unschedulableBefore),
			"%s{plugin=\"DynamicResources\"} does not count pods whose claim the allocator refused with an error (the scheduler's admin-access gate off): Kubernetes %s returns an error status for them, not unschedulable",
			env.Rel.Metrics.SchedulerUnschedulable, env.Rel.Minor)
		for i, c := range claims {
			stored, err := b.GetClaim(ctx, c.Name)
			framework.ExpectNoError(err)
			gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "claim %s must stay unallocated", c.Name)
			gomega.Expect(snapshot(ctx, pods[i]).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", pods[i].Name)
		}

		ginkgo.By("turning the gate on in kube-scheduler")
		switchGate(ctx, profile.Scheduler, true)
		for _, p := range pods {
			gomega.Expect(expectRunning(ctx, b, p)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		}
		eventuallyScraped(ctx, pendingPods).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline), "and stops counting them")
	})
})
