// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The metric specs are Serial: the counters and gauges are cluster-wide, and
// other specs running alongside would move them.

// ordinaryShapeTemplates makes the templates whose claims the controller
// must count admin_access="false" though they name adminAccess or are not
// exact requests: adminAccess: false, and a firstAvailable list where the
// cluster has the prioritized list. Each is checked as stored, so that a
// field kube-apiserver dropped cannot pass for the shape.
func ordinaryShapeTemplates(ctx context.Context, b *builder.Builder) []*resourceapi.ResourceClaimTemplate {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	explicit, err := b.CreateTemplate(ctx, b.Template(builder.NoAdminAccess()))
	framework.ExpectNoError(err)
	gomega.Expect(observe.RequestsAdminAccessFields(explicit.Spec.Spec.Devices)).To(gomega.Equal([]string{"false"}), "template %s's requests[].adminAccess as stored", explicit.Name)
	out := []*resourceapi.ResourceClaimTemplate{explicit}
	if _, off := e.Rel.DeclaredSkip(release.NeedPrioritizedList, e.Mode()); off {
		return out
	}
	list, err := b.CreateTemplate(ctx, b.TemplateFirstAvailable([][]builder.RequestOption{{builder.DeviceIndex(e.Driver.Devices + 7)}, nil}))
	framework.ExpectNoError(err)
	gomega.Expect(observe.RequestsAdminAccessFields(list.Spec.Spec.Devices)).To(gomega.Equal([]string{"-"}), "template %s's requests as stored: one firstAvailable list", list.Name)
	return append(out, list)
}

var _ = framework.Describe("Admin access metrics", ginkgo.Label("metrics"), framework.WithSerial(), func() {
	f := newFramework("metrics")

	it("counts claims created from admin-access and ordinary templates exactly, by admin_access", kep("resourceclaim_controller_creates_total shows admin access in use"), func(ctx context.Context) {
		e := envOf(ctx)
		s := newScraper(ctx, f, metrics.ControllerManager)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		adminTmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		ordinaryTmpl, err := b.CreateTemplate(ctx, b.Template())
		framework.ExpectNoError(err)
		// The controller labels a claim admin_access="true" when any of its
		// requests asks for it (getAdminAccessMetricLabel), not only the first.
		secondTmpl, err := b.CreateTemplate(ctx, b.TemplateOf(builder.Request(), builder.Request(builder.AdminAccess())))
		framework.ExpectNoError(err)
		// And only when one asks for it with true: an explicit false, and
		// a firstAvailable list (a subrequest has no adminAccess field),
		// are ordinary claims.
		ordinaryShapes := ordinaryShapeTemplates(ctx, b)
		before, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)

		// One admin claim from secondTmpl, one ordinary claim per shape.
		admin, ordinary := 4, 2+len(ordinaryShapes)
		pods := append(startFromTemplate(ctx, b, adminTmpl, admin-1), startFromTemplate(ctx, b, ordinaryTmpl, 2)...)
		pods = append(pods, startFromTemplate(ctx, b, secondTmpl, 1)...)
		for _, tmpl := range ordinaryShapes {
			pods = append(pods, startFromTemplate(ctx, b, tmpl, 1)...)
		}
		podsWithClaims(ctx, pods)
		want := expectedCreates(e.Rel.Metrics, admin, ordinary)
		delta := s.createsSince(before)
		eventuallyScraped(ctx, delta).WithTimeout(allocateTimeout).Should(gomega.Equal(want), "%s moves by exactly the claims created", e.Rel.Metrics.CreatesTotal)
		consistentlyScraped(ctx, delta).WithTimeout(stableFor).Should(gomega.Equal(want), "and by no more")
		after, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)
		m := e.Rel.Metrics
		expectFamily(after, m.CreatesTotal)
		if m.OwnerLabels {
			owned := func(f metrics.Families, admin string) float64 {
				return f.Sum(m.CreatesTotal, map[string]string{"admin_access": admin, "status": "success", "owner_api_group": "", "owner_api_kind": "Pod"})
			}
			gomega.Expect(owned(after, "true")-owned(before, "true")).To(gomega.Equal(float64(admin)), "%s labels a pod's claims owner_api_kind=\"Pod\"", m.CreatesTotal)
			gomega.Expect(owned(after, "false") - owned(before, "false")).To(gomega.Equal(float64(ordinary)))
		}
		for _, old := range m.Retired {
			gomega.Expect(after.Has(old)).To(gomega.BeFalse(), "Kubernetes %s no longer serves %s", e.Rel.Minor, old)
		}
	})

	it("keeps resourceclaim_controller_resource_claims equal to the claims that exist", kep("resourceclaim_controller_resource_claims shows admin-access claims and their allocation"), func(ctx context.Context) {
		e := envOf(ctx)
		s := newScraper(ctx, f, metrics.ControllerManager)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		matches := func(what string) {
			ginkgo.GinkgoHelper()
			eventuallyScraped(ctx, func(ctx context.Context) error {
				fams, err := s.controllerManager(ctx)
				if err != nil {
					return err
				}
				want, err := expectedClaimGauge(ctx)
				if err != nil {
					return err
				}
				if got := claimGauge(e.Rel.Metrics, fams); fmt.Sprint(got) != fmt.Sprint(want) {
					return fmt.Errorf("gauge %v, claims that exist say %v", got, want)
				}
				return nil
			}).WithTimeout(allocateTimeout).Should(gomega.Succeed(), what)
		}
		claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		// A gauge that matched because the apiserver dropped the field would prove nothing.
		gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeTrue(), "the stored claim keeps adminAccess")
		matches("with an unallocated admin-access claim")
		pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		expectRunning(ctx, b, pod)
		matches("with the admin-access claim allocated")
		// The admin_access="false" series must move for a claim of the
		// spec's own, not only for what other specs left.
		ordinaryPod, _, _ := runOn(ctx, b, anyWorker(ctx), builder.NotDeviceIndex(0))
		matches("with an ordinary claim of the spec's own, allocated")
		secondTmpl, err := b.CreateTemplate(ctx, b.TemplateOf(builder.Request(builder.NotDeviceIndex(0)), builder.Request(builder.AdminAccess())))
		framework.ExpectNoError(err)
		fromSecond := startFromTemplate(ctx, b, secondTmpl, 1)[0]
		expectRunning(ctx, b, fromSecond)
		secondClaim := podClaim(ctx, b, fromSecond)
		gomega.Expect(observe.RequestsAdminAccessFields(secondClaim.Spec.Devices)).To(gomega.Equal([]string{"unset", "true"}), "claim %s's requests[].adminAccess as stored", secondClaim.Name)
		matches("with a claim whose second request asks for admin access, allocated (counted admin_access=true)")
		for _, tmpl := range ordinaryShapeTemplates(ctx, b) {
			claim := b.ClaimOf()
			claim.Spec = tmpl.Spec.Spec
			made, err := b.CreateClaim(ctx, claim)
			framework.ExpectNoError(err)
			matches(fmt.Sprintf("with an unallocated claim whose requests[].adminAccess are %v (counted admin_access=false)", observe.RequestsAdminAccessFields(made.Spec.Devices)))
		}
		deletePod(ctx, fromSecond)
		deletePod(ctx, ordinaryPod)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		fromTemplate := startFromTemplate(ctx, b, tmpl, 1)[0]
		expectRunning(ctx, b, fromTemplate)
		matches("with a claim made from an admin-access template, allocated")
		if e.Rel.Metrics.SourceLabel {
			// matches compared the gauge with the claims as the suite
			// counts them; this claim must be counted under the template's
			// source, so that the comparison above checked that label.
			made := podClaim(ctx, b, fromTemplate)
			gomega.Expect(metrics.ExpectedClaimGauge([]metrics.Claim{gaugeClaim(made)}, true)).To(gomega.Equal(map[string]float64{"admin_access=true,allocated=true,source=" + metrics.SourceTemplate: 1}),
				"claim %s, made from template %s, as %s counts it (annotations %v)", made.Name, tmpl.Name, e.Rel.Metrics.ResourceClaims, made.Annotations)
		}
		deletePod(ctx, fromTemplate)
		framework.ExpectNoError(e.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
		deleteClaim(ctx, b, claim)
		matches("after the claim is deleted")
	})

	it("counts a claim creation kube-apiserver refused as a failure with admin_access=true", kep("resourceclaim_controller_creates_total shows failed creations of admin-access claims"), func(ctx context.Context) {
		e := envOf(ctx)
		s := newScraper(ctx, f, metrics.ControllerManager)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		setNamespaceLabel(ctx, f.Namespace.Name, e.Rel.AdminLabel, nil)
		before, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)
		pod := startFromTemplate(ctx, b, tmpl, 1)[0]

		expectPodEvent(ctx, pod, allocateTimeout, claimCreationDenied(e.Rel, tmpl),
			"kube-controller-manager reports kube-apiserver's denial on the pod")
		// The controller retries with backoff, and each refused attempt counts.
		eventuallyScraped(ctx, s.createsSince(before)).WithTimeout(allocateTimeout).Should(gomega.HaveField("Failure", gomega.BeNumerically(">=", 1)))
		// 1.33 counts an attempt before its create call and the failure
		// after it returns, so a retry in flight reads as a success until
		// its failure is counted (seen once: a success of 1). A creation
		// that did succeed never reads as none again: both counters only
		// grow.
		var got creates
		eventuallyScraped(ctx, func(ctx context.Context) (float64, error) {
			var err error
			got, err = s.createsSince(before)(ctx)
			return got.AdminSuccess + got.OrdinarySuccess, err
		}).WithTimeout(stableFor).Should(gomega.BeZero(), "no creation succeeded")
		// And none does while the controller keeps retrying.
		consistentlyScraped(ctx, func(ctx context.Context) (float64, error) {
			var err error
			got, err = s.createsSince(before)(ctx)
			return got.AdminSuccess + got.OrdinarySuccess, err
		}).WithTimeout(stableFor).Should(gomega.BeZero(), "no creation succeeds while kube-apiserver denies the claim")
		after, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)
		if e.Rel.Metrics.Labelled {
			expectFamily(after, e.Rel.Metrics.CreatesTotal)
			gomega.Expect(got.AdminFailure).To(gomega.Equal(got.Failure), "every failure is labelled admin_access=\"true\"")
		} else {
			expectFamily(after, e.Rel.Metrics.CreateFailures)
		}
		gomega.Expect(claimsIn(ctx, b)).To(gomega.BeEmpty(), "no claim exists")
		gomega.Expect(snapshot(ctx, pod).Phase).To(gomega.Equal(corev1.PodPending))
		// The controller retries this pod until it is gone, and every retry
		// counts: the next metric spec must not see them.
		deletePod(ctx, pod)
	})

	it("counts a pod in scheduler_unschedulable_pods for DynamicResources when admin access may not take the device its own claim takes", kep("kube-scheduler cannot allocate a claim with admin access: unschedulable_pods counts it under DynamicResources"), func(ctx context.Context) {
		e := envOf(ctx)
		// With the gate on, the allocator has one reason of admin access's
		// own to pass a device over: admin access may take a device other
		// claims hold, not one another request of its own claim takes
		// (allocatingDeviceForClaim, "Device in use in same claim", from
		// 1.34 in every implementation; an ordinary request is refused such
		// a device as any device in use). Every other refusal (no device
		// matches, a taint) is an ordinary request's too, and admin access's
		// other refusals are errors, which the DynamicResources plugin does
		// not report as unschedulable: the scheduler's gate off (the
		// scheduler-off spec checks that they are not counted) and
		// kube-apiserver's denial of the allocation in a namespace without
		// the label (PreBind, the authz group).
		s := newScraper(ctx, f, metrics.Scheduler)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		name := e.Rel.Metrics.SchedulerUnschedulable
		dra := map[string]string{"plugin": "DynamicResources", "profile": corev1.DefaultSchedulerName}
		unschedulable := func(ctx context.Context) (float64, error) {
			fams, err := s.Scrape(ctx, metrics.Scheduler, s.node)
			if err != nil {
				return 0, err
			}
			return fams.Sum(name, dra), nil
		}
		baseline, err := unschedulable(ctx)
		framework.ExpectNoError(err)

		// Both requests ask for admin access to device 0, of which each
		// node has one: the second may not have the one the first takes.
		device0 := builder.Request(builder.AdminAccess(), builder.DeviceIndex(0))
		claim, err := b.CreateClaim(ctx, b.ClaimOf(device0, device0))
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccessFields(claim.Spec.Devices)).To(gomega.Equal([]string{"true", "true"}), "claim %s's requests[].adminAccess as stored", claim.Name)
		pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		allocator := e.Allocator()
		defect, declared := e.Rel.KnownDefect(release.DefectDeviceTwiceInClaim, allocator)
		var defectSeen string // where declared and seen: the verdict the spec ends with
		got, refused := allocatedOrRefused(ctx, b, pod, claim.Name)
		switch {
		case declared && got != nil:
			// 1.33 has no such reason: its allocator gives the device twice.
			given := resultsGiven(got)
			gomega.Expect(got.Status.Allocation.Devices.Results).To(gomega.HaveLen(2), "claim %s's results", claim.Name)
			gomega.Expect(devicesTwice(got)).To(gomega.HaveLen(1), "%s is declared for Kubernetes %s: claim %s's two admin-access requests should share device 0, got %v", defect.Issue, e.Rel.Minor, claim.Name, given)
			deletePod(ctx, pod)
			defectSeen = defect.Verdict(fmt.Sprintf(
				"kube-scheduler's %s allocator gave claim %s %s (%s), so no claim waits for admin access's own reason on this release; the gauge was checked with an admin-access claim no device matches",
				allocator, claim.Name, release.CauseDeviceTwice, strings.Join(given, ", ")))
			// The gauge is still the release's to keep: an admin-access
			// pod that cannot be scheduled, for the reason 1.33 has, a
			// device no node publishes, must be counted as before.
			unmatched, err := b.CreateClaim(ctx, b.ClaimOf(builder.Request(builder.AdminAccess(), builder.DeviceIndex(99))))
			framework.ExpectNoError(err)
			pod, err = b.CreatePod(ctx, b.Pod(builder.UsingClaim(unmatched)))
			framework.ExpectNoError(err)
			expectCannotAllocate(ctx, pod)
		case declared:
			framework.Failf("%s; kube-scheduler refused pod %s: %s", defect.NotReproduced(e.Rel.Minor, allocator), pod.Name, refused)
		case got != nil:
			framework.Failf("claim %s's two admin-access requests for device 0 were allocated (%s allocator): %v; admin access may not take a device its own claim takes",
				claim.Name, allocator, got.Status.Allocation.Devices.Results)
		}
		if nodesReachable(e) && defectSeen == "" {
			expectAllocatorLogged(ctx, pod, contract.DeviceName(0), release.CauseInUseInClaim, "the second admin-access request is refused device 0, which the first takes")
		}
		gomega.Expect(snapshot(ctx, pod).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", pod.Name)
		eventuallyScraped(ctx, unschedulable).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline+1),
			"%s{plugin=\"DynamicResources\"} counts the pod", name)
		fams, err := s.Scrape(ctx, metrics.Scheduler, s.node)
		framework.ExpectNoError(err)
		expectFamily(fams, name)

		deletePod(ctx, pod)
		if e.Rel.Metrics.UnschedulableForgetsDeleted {
			eventuallyScraped(ctx, unschedulable).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline), "and stops counting it once it is gone")
		} else {
			// Before 1.36 only a new scheduling attempt took a pod out of the
			// gauge, and a deleted pod gets none: the release keeps counting it.
			consistentlyScraped(ctx, unschedulable).WithTimeout(stableFor).Should(gomega.Equal(baseline+1),
				"Kubernetes %s keeps counting a deleted pod (the decrement on deletion came in 1.36)", e.Rel.Minor)
		}
		if defectSeen != "" {
			stopWithVerdict(report.KnownDefectEntry, defect.Issue, defectSeen)
		}
	})
})
