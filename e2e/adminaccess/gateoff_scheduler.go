// SPDX-License-Identifier: Apache-2.0

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
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The specs of kube-scheduler without DRAAdminAccess (the move helpers are in
// gatemoves.go; the kube-scheduler of the group's own in gatescheduler.go).
//
// With the bundled driver on a cluster of the release's own feature set,
// the group runs beside the other specs under a kube-scheduler of its own
// (gateScheduler): the cluster's binary and flags with the gate off, and
// then, to turn it back on, a new process of the same name with the gate on.
// Only the group's pods name it, so the cluster's kube-scheduler keeps the
// gate for every other spec, and the group no longer holds the Serial part
// for two moves of it. With a driver of the user's own or a cluster made
// with another feature set it moves the cluster's kube-scheduler, Serial, as
// the allocators group does there.

var _ = framework.Describe("With DRAAdminAccess off in kube-scheduler", func() {
	if plan == nil {
		return // Main refused the run already
	}
	if plan.Run.Vendor().Name != "" || plan.Rel.FeatureSetName != "" {
		framework.Context("the cluster's kube-scheduler", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
			f := newFramework("sched-off")
			inProfile(f, "scheduler-off")
			// Before the spec that turns the gate back on.
			for _, sh := range gateOffShapes {
				it(sh.text, ginkgo.Label("skew"), kep(sh.kep), func(ctx context.Context) {
					requireGateSwitching(ctx)
					sh.run(ctx, f)
				})
			}
			it(schedulerOffText, ginkgo.Label("skew", "metrics"), kep("a scheduler without the gate never allocates admin access; re-enabling schedules the waiting pods"), func(ctx context.Context) {
				requireGateSwitching(ctx)
				s := newScraper(ctx, f, metrics.Scheduler)
				schedulerOff(ctx, f, gateOffScheduler{
					profile: corev1.DefaultSchedulerName,
					scrape:  func(ctx context.Context) (metrics.Families, error) { return s.Scrape(ctx, metrics.Scheduler, s.node) },
					turnOn: func(ctx context.Context) {
						ginkgo.By("turning the gate on in kube-scheduler")
						switchGate(ctx, profile.Scheduler, true)
					},
				})
			})
		})
		return
	}
	framework.Context("a kube-scheduler of its own", func() {
		f := newFramework("sched-off")
		for _, sh := range gateOffShapes {
			it(sh.text, ginkgo.Label("skew"), kep(sh.kep), func(ctx context.Context) {
				ginkgo.AddReportEntry(report.ProfileEntry, "scheduler-off", ginkgo.ReportEntryVisibilityNever)
				requireGateSwitching(ctx)
				underGateOffScheduler(ctx, sh.name)
				sh.run(ctx, f)
			})
		}
		it(schedulerOffText, ginkgo.Label("skew", "metrics"), kep("a scheduler without the gate never allocates admin access; re-enabling schedules the waiting pods"), func(ctx context.Context) {
			e := envOf(ctx)
			ginkgo.AddReportEntry(report.ProfileEntry, "scheduler-off", ginkgo.ReportEntryVisibilityNever)
			requireGateSwitching(ctx)
			s := newScraper(ctx, f)
			off, on := gateScheduler(false), gateScheduler(true)
			name := off.name()
			// Removed however the spec ends; stop takes whichever
			// process of the name runs.
			ginkgo.DeferCleanup(inEnv(func(ctx context.Context) {
				if err := off.stop(ctx, e); err != nil {
					framework.Logf("removing kube-scheduler %s: %v", name, err)
				}
			}))
			framework.ExpectNoError(off.start(ctx, e), "starting kube-scheduler %s (%s)", name, off.what())
			off.awaitReady(ctx)
			specScheduler = name
			ginkgo.DeferCleanup(func() { specScheduler = "" })
			schedulerOff(ctx, f, gateOffScheduler{
				profile: name,
				scrape: func(ctx context.Context) (metrics.Families, error) {
					return s.ScrapePod(ctx, schedulerSystemNamespace, name, metrics.Scheduler.Port)
				},
				turnOn: func(ctx context.Context) {
					ginkgo.By("turning the gate on in kube-scheduler: a new process of the same name, with " + on.what())
					off.replaceBy(ctx, on)
				},
			})
		})
	})
})

// schedulerOffText is the spec's name, whichever kube-scheduler it watches.
const schedulerOffText = "fails an admin-access claim's allocation with the scheduler's error until the gate is back on"

// gateOffScheduler is the kube-scheduler without the gate that the spec
// watches, and how it is read and turned back on.
type gateOffScheduler struct {
	// profile is its scheduler name, the label of its metric series.
	profile string
	// scrape reads its metrics.
	scrape func(ctx context.Context) (metrics.Families, error)
	// turnOn returns once it runs with the gate on.
	turnOn func(ctx context.Context)
}

// schedulerOff is the spec's body: admin-access claims' pods wait with the
// allocator's error and are counted as pending (not as unschedulable) while
// the gate is off in sched, and run once it is on.
func schedulerOff(ctx context.Context, f *framework.Framework, sched gateOffScheduler) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	labelForAdmin(ctx, f.Namespace.Name)
	pendingPods := func(ctx context.Context) (float64, error) {
		fams, err := sched.scrape(ctx)
		if err != nil {
			return 0, err
		}
		return fams.Sum(e.Rel.Metrics.SchedulerPending, nil), nil
	}
	// The gauge is per process: on the cluster's kube-scheduler, pods of
	// earlier specs' namespaces that are still being deleted count until
	// they go, and would leave the gauge below a baseline that included
	// them. Start from a quiet scheduler, so that every count below is this
	// spec's alone (a kube-scheduler of the spec's own is quiet at once).
	eventuallyScraped(ctx, pendingPods).WithTimeout(2*time.Minute).Should(gomega.BeZero(),
		"%s: no pod of an earlier spec is still waiting to be scheduled", e.Rel.Metrics.SchedulerPending)
	// The reason these pods wait is admin access's own (the scheduler's
	// gate is off). The allocator refuses with an error, which the
	// DynamicResources plugin returns as an error status (statusError in
	// dynamicresources.go, 1.33-1.35), not as unschedulable: the pods are
	// in scheduler_pending_pods, and scheduler_unschedulable_pods does not
	// count them (seen on 1.35.4: the gauge stayed 0 with both pods waiting).
	dra := map[string]string{"plugin": "DynamicResources", "profile": sched.profile}
	name := e.Rel.Metrics.SchedulerUnschedulable
	unschedulable := func(ctx context.Context) (float64, error) {
		fams, err := sched.scrape(ctx)
		if err != nil {
			return 0, err
		}
		return fams.Sum(name, dra), nil
	}
	// A scheduler that never counted a pod serves no series of the gauge,
	// and an absent series reads 0 before and after whatever happens. So a
	// pod this scheduler must count comes first: its ordinary claim asks
	// for a device no node has (index 99), which the allocator, gate or
	// not, finds nowhere, and the plugin returns as unschedulable. Its
	// series must then be served, one higher, and stay so while the
	// admin-access pods wait. (The cluster's kube-scheduler may count pods
	// of earlier specs still: before 1.36 it never forgets a deleted one,
	// release.Metrics.UnschedulableForgetsDeleted.)
	start, err := unschedulable(ctx)
	framework.ExpectNoError(err)
	control, err := b.CreateClaim(ctx, b.Claim(builder.DeviceIndex(99)))
	framework.ExpectNoError(err)
	controlPod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(control)))
	framework.ExpectNoError(err)
	expectCannotAllocate(ctx, controlPod)
	unschedulableBefore := start + 1
	eventuallyScraped(ctx, unschedulable).WithTimeout(allocateTimeout).Should(gomega.Equal(unschedulableBefore),
		"%s{plugin=\"DynamicResources\",profile=%q} counts pod %s, whose claim no device matches", name, sched.profile, controlPod.Name)
	fams, err := sched.scrape(ctx)
	framework.ExpectNoError(err)
	expectFamily(fams, name)
	gomega.Expect(fams.Series(name)).To(gomega.HaveKey(metrics.Key(dra)), "%s serves the series of kube-scheduler %s's DynamicResources plugin", name, sched.profile)
	// The control pod waits too, in scheduler_pending_pods, till the end.
	baseline := 1.0
	eventuallyScraped(ctx, pendingPods).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline),
		"%s counts pod %s", e.Rel.Metrics.SchedulerPending, controlPod.Name)

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
	want := e.Rel.SchedulerGateOffMessage(f.Namespace.Name, claims[0].Name, builder.RequestName)
	expectPodEvent(ctx, pods[0], allocateTimeout, failedScheduling(want))
	eventuallyScraped(ctx, pendingPods).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline+waiting),
		"%s counts the pods that cannot be scheduled", e.Rel.Metrics.SchedulerPending)
	// At most the control pod: it leaves the gauge for a moment whenever
	// an event re-queues it (a ResourceSlice that a spec beside this one
	// republishes, seen on 1.35.8: its second FailedScheduling fell in the
	// window and the gauge read 0), but the admin-access pods never join
	// it. A scheduler that counted them would read 2 or 3.
	consistentlyScraped(ctx, unschedulable).WithTimeout(stableFor).Should(gomega.BeNumerically("<=", unschedulableBefore),
		"%s{plugin=\"DynamicResources\"} counts pod %s at most, never the pods whose claim the allocator refused with an error (the scheduler's admin-access gate off): Kubernetes %s returns an error status for them, not unschedulable",
		name, controlPod.Name, e.Rel.Minor)
	for i, c := range claims {
		stored, err := b.GetClaim(ctx, c.Name)
		framework.ExpectNoError(err)
		gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "claim %s must stay unallocated", c.Name)
		gomega.Expect(snapshot(ctx, pods[i]).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", pods[i].Name)
	}

	sched.turnOn(ctx)
	for _, p := range pods {
		gomega.Expect(expectRunning(ctx, b, p)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
	}
	eventuallyScraped(ctx, pendingPods).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline), "and stops counting them (pod %s still waits)", controlPod.Name)
	deletePod(ctx, controlPod)
}
