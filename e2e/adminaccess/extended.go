// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Extended resources backed by DRA (KEP-5004): a pod may ask for a device
// class's extended resource in its containers' resources instead of a claim,
// and kube-scheduler then makes and allocates a claim for it. A device that
// only admin-access claims have is free for such a pod too: the scheduler's
// count of a node's extended resources must skip admin-access results, as its
// allocator does.
//
// The devices are a second instance of the bundled driver (featureDriver,
// layout plain, a class of its own), so no other spec's claim takes them;
// the class's implicit extended resource is
// deviceclass.resource.kubernetes.io/<class>.
var _ = framework.Describe("Admin access beside extended resources", ginkgo.Label("extended"), ginkgo.Ordered, func() {
	f := newFramework("extended")
	d := newFeatureDriver(contract.LayoutPlain, release.NeedExtendedResources)
	itEach(f, d, extendedPromises, nil)
	itEach(f, d, extendedMetricPromises, nil)
})

// extendedPromises are the group's specs as bodies, so that the allocators
// group runs them again under each other implementation: kube-scheduler
// allocates the claim it makes for the extended resource with the same
// allocator as any other.
var extendedPromises = []featurePromise{
	{text: "gives a pod that asks for the class's extended resource every device of a node that admin-access claims have", kep: "devices under admin access stay available to pods asking for the class's extended resource", run: extendedBesideAdmin},
}

// extendedMetricPromises are registered by this group alone: what the
// components count does not depend on the allocator implementation, so
// the allocators group does not run them again.
var extendedMetricPromises = []featurePromise{
	{text: "counts the claim kube-scheduler makes for a pod's extended resource as ordinary, by source, while it exists", kep: "claims kube-scheduler makes for extended resources are counted ordinary, by source", run: extendedClaimCounted},
}

func extendedBesideAdmin(ctx context.Context, f *framework.Framework, ext *featureDriver, seen func(context.Context)) {
	e := envOf(ctx)
	b := ext.builder(ctx, f)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	adminPod, admin, _ := runOn(ctx, b, node, builder.AllDevices(), builder.AdminAccess())
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.And(gomega.HaveLen(ext.opts.Published()), gomega.HaveEach(true)))
	before := snapshot(ctx, adminPod)

	ginkgo.By("a pod asks for all of them as the class's extended resource")
	name := corev1.ResourceName(resourceapi.ResourceDeviceClassPrefix + ext.opts.DeviceClass)
	pod, vars := runAsking(ctx, b, node, name, ext.opts.Published())
	defect, declared := e.Rel.KnownDefect(release.DefectImplicitExtendedResourceIgnored, e.Allocator())
	if declared {
		name = implicitNameIgnored(ctx, ext.opts.DeviceClass, pod, vars, defect)
		ginkgo.By("a pod asks for all of them as the class's explicit extended resource " + string(name))
		pod, vars = runAsking(ctx, b, node, name, ext.opts.Published())
	}
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))

	running, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	gomega.Expect(running.Status.ExtendedResourceClaimStatus).NotTo(gomega.BeNil(), "status.extendedResourceClaimStatus of pod %s names the claim kube-scheduler made", pod.Name)
	claim, err := b.GetClaim(ctx, running.Status.ExtendedResourceClaimStatus.ResourceClaimName)
	framework.ExpectNoError(err)
	gomega.Expect(claim.Annotations).To(gomega.HaveKeyWithValue(resourceapi.ExtendedResourceClaimAnnotation, "true"))
	gomega.Expect(claim.Status.Allocation).NotTo(gomega.BeNil(), "claim %s is allocated", claim.Name)
	gomega.Expect(observe.AllocatedDevices(claim)).To(gomega.ConsistOf(observe.AllocatedDevices(admin)), "the same devices as the admin-access claim")
	gomega.Expect(observe.AdminAccessResults(claim)).To(gomega.HaveEach(false))
	for _, d := range claim.Status.Allocation.Devices.Results {
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.DeviceEnv(d.Device), string(claim.UID)), "the container sees device %s of claim %s", d.Device, claim.Name)
	}
	expectUndisturbed(ctx, adminPod, before)
	if seen != nil {
		seen(ctx)
	}
	if declared {
		stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
			"a pod asking for %s%s ran with %s and no device; asked through the class's explicit name %s, pod %s got every device admin-access claim %s has, without admin access",
			resourceapi.ResourceDeviceClassPrefix, ext.opts.DeviceClass, release.CauseNoExtendedClaim, name, pod.Name, admin.Name)))
	}
}

// runAsking runs a pod on node whose container asks for count of the
// extended resource name, and returns it and its environment.
func runAsking(ctx context.Context, b *builder.Builder, node string, name corev1.ResourceName, count int) (*corev1.Pod, map[string]string) {
	ginkgo.GinkgoHelper()
	n := resource.MustParse(strconv.Itoa(count))
	pod := builder.OnNode(b.Pod(), node)
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{name: n}
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{name: n}
	pod, err := b.CreatePod(ctx, pod)
	framework.ExpectNoError(err)
	return pod, expectRunning(ctx, b, pod)
}

// implicitNameIgnored is kubernetes/kubernetes#133363's defect where the
// release table declares it (1.34): the pod that asked for the class's
// implicit extended resource runs with no claim, so with no device, since
// 1.34 takes deviceclass.resource.kubernetes.io/<class> for a native
// resource. A claim (status.extendedResourceClaimStatus) means the row is
// stale, and fails the spec. The pod goes, and the class gets an explicit
// extendedResourceName, which 1.34 does take, for the promise to be checked
// through; that name is returned.
func implicitNameIgnored(ctx context.Context, class string, pod *corev1.Pod, vars map[string]string, defect release.Defect) corev1.ResourceName {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	running, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	if s := running.Status.ExtendedResourceClaimStatus; s != nil {
		framework.Failf("%s; pod %s got claim %s for %s%s", defect.NotReproduced(e.Rel.Minor, e.Allocator()), pod.Name, s.ResourceClaimName, resourceapi.ResourceDeviceClassPrefix, class)
	}
	gomega.Expect(vars).NotTo(gomega.HaveKey(contract.AdminAccessEnv), "pod %s has no claim, so no device of the driver's", pod.Name)
	framework.Logf("%s: pod %s asked for %s%s and runs with %s", defect.Issue, pod.Name, resourceapi.ResourceDeviceClassPrefix, class, release.CauseNoExtendedClaim)
	deletePod(ctx, pod)
	return explicitExtendedName(ctx, class)
}

// explicitExtendedName gives the class an explicit extendedResourceName
// and returns it.
func explicitExtendedName(ctx context.Context, class string) corev1.ResourceName {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	// Named after the class, which is a driver's name: unique among the
	// run's classes, and within the 63 characters of a name's part.
	explicit := "e2e.kep5018.io/" + class
	framework.ExpectNoError(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := e.DRA.DeviceClasses().Get(ctx, class, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c.Spec.ExtendedResourceName = &explicit
		_, err = e.DRA.DeviceClasses().Update(ctx, c, metav1.UpdateOptions{})
		return err
	}), "giving class %s the explicit extended resource name %s", class, explicit)
	return corev1.ResourceName(explicit)
}

// extendedClaimCounted: the claim kube-scheduler makes for a pod's extended
// resource is an ordinary claim (its requests name no adminAccess), even
// where every device it gets is one admin-access claims have, and the
// metrics say so while it exists. kube-controller-manager's gauge counts
// every claim in its cache by allocated, admin_access (any exact request
// with adminAccess true) and, from 1.35, source: "extended_resource" for a
// claim with the annotation resource.kubernetes.io/extended-resource-claim
// "true", before the template's (customCollector.CollectWithStability in
// pkg/controller/resourceclaim/controller.go: :1053 at v1.35.4, :1773 at
// v1.36.3, :1924 at v1.37.2). kube-scheduler counts each claim it creates
// for extended resources, from 1.35 (release.Metrics.SchedulerCreates).
//
// The specs beside this one make claims too, so the gauge is read only
// where these claims are (source="extended_resource"), and compared with
// what the claims that exist say; 1.34's gauge has no source label, and is
// compared whole. kube-scheduler's counter is its process's own, and only
// this group makes extended-resource claims through it.
func extendedClaimCounted(ctx context.Context, f *framework.Framework, ext *featureDriver, _ func(context.Context)) {
	e := envOf(ctx)
	b := ext.builder(ctx, f)
	m := e.Rel.Metrics
	s := newScraper(ctx, f, metrics.ControllerManager, metrics.Scheduler)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	// The devices the claim gets are all under admin access: a count that
	// took admin access from a device's other claims, not from the claim's
	// own requests, would show.
	_, admin, _ := runOn(ctx, b, node, builder.AllDevices(), builder.AdminAccess())
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.And(gomega.HaveLen(ext.opts.Published()), gomega.HaveEach(true)))

	var schedBefore metrics.Families
	if m.SchedulerCreates != "" {
		var err error
		schedBefore, err = s.scheduler(ctx)
		framework.ExpectNoError(err)
	}
	name := corev1.ResourceName(resourceapi.ResourceDeviceClassPrefix + ext.opts.DeviceClass)
	if _, declared := e.Rel.KnownDefect(release.DefectImplicitExtendedResourceIgnored, e.Allocator()); declared {
		// The group's other spec shows the defect; this one needs the claim.
		name = explicitExtendedName(ctx, ext.opts.DeviceClass)
	}
	ginkgo.By("a pod asks for all of them as the extended resource " + string(name))
	pod, _ := runAsking(ctx, b, node, name, ext.opts.Published())
	running, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	gomega.Expect(running.Status.ExtendedResourceClaimStatus).NotTo(gomega.BeNil(), "status.extendedResourceClaimStatus of pod %s names the claim kube-scheduler made", pod.Name)
	claim, err := b.GetClaim(ctx, running.Status.ExtendedResourceClaimStatus.ResourceClaimName)
	framework.ExpectNoError(err)
	mine := gaugeClaim(claim)
	gomega.Expect(mine).To(gomega.Equal(metrics.Claim{Allocated: true, ExtendedResource: true}),
		"claim %s as the gauge reads it: allocated, requests %v, annotations %v", claim.Name, observe.RequestsAdminAccessFields(claim.Spec.Devices), claim.Annotations)
	series := metrics.Key(map[string]string{"admin_access": "false", "allocated": "true"})
	if m.SourceLabel {
		series = metrics.Key(map[string]string{"admin_access": "false", "allocated": "true", "source": mine.Source()})
	}

	ginkgo.By("kube-controller-manager counts it " + series + " while it exists")
	// expectExtendedGauge compares the gauge with the claims as the suite
	// counts them; this claim is counted under series there, so the
	// comparison checks that series.
	gomega.Expect(metrics.ExpectedClaimGauge([]metrics.Claim{mine}, m.SourceLabel)).To(gomega.Equal(map[string]float64{series: 1}), "claim %s as %s counts it", claim.Name, m.ResourceClaims)
	expectExtendedGauge(ctx, s, "with claim "+claim.Name+" allocated")

	if m.SchedulerCreates != "" {
		ginkgo.By("kube-scheduler counts the one claim it made in " + m.SchedulerCreates)
		expectSchedulerCreatedOne(ctx, s, schedBefore)
	} else {
		framework.Logf("kube-scheduler of Kubernetes %s counts no claim it makes for extended resources", e.Rel.Minor)
	}

	ginkgo.By("the pod goes, its claim with it, and the gauge stops counting the claim")
	deletePod(ctx, pod)
	gomega.Eventually(ctx, func(ctx context.Context) error {
		_, err := b.GetClaim(ctx, claim.Name)
		return err
	}).WithTimeout(podStartTimeout).Should(gomega.Satisfy(apierrors.IsNotFound), "claim %s goes with pod %s", claim.Name, pod.Name)
	expectExtendedGauge(ctx, s, "after claim "+claim.Name+" is gone")
}

// expectExtendedGauge waits, bounded, until kube-controller-manager's
// resource_claims gauge counts the extended-resource claims as the claims
// that exist say (every claim where the release has no source label), and
// returns that part of the gauge.
func expectExtendedGauge(ctx context.Context, s *scraper, what string) map[string]float64 {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	m := e.Rel.Metrics
	var got map[string]float64
	eventuallyScraped(ctx, func(ctx context.Context) error {
		fams, err := s.controllerManager(ctx)
		if err != nil {
			return err
		}
		if !fams.Has(m.ResourceClaims) {
			return fmt.Errorf("the scrape has no family %s", m.ResourceClaims)
		}
		list, err := e.DRA.ResourceClaims("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var claims []metrics.Claim
		for i := range list.Items {
			if c := gaugeClaim(&list.Items[i]); c.ExtendedResource || !m.SourceLabel {
				claims = append(claims, c)
			}
		}
		want := metrics.ExpectedClaimGauge(claims, m.SourceLabel)
		got = fams.Series(m.ResourceClaims)
		if m.SourceLabel {
			got = fams.SeriesWith(m.ResourceClaims, map[string]string{"source": metrics.SourceExtendedResource})
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("%s counts %v, the claims that exist say %v", m.ResourceClaims, got, want)
		}
		return nil
	}).WithTimeout(allocateTimeout).Should(gomega.Succeed(), what)
	return got
}

// expectSchedulerCreatedOne waits, bounded, until kube-scheduler's
// counter of the claims it makes has moved by exactly one success since
// before: with admin_access="false" and the pod as owner where the
// release labels it so, and no failure.
func expectSchedulerCreatedOne(ctx context.Context, s *scraper, before metrics.Families) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	m := e.Rel.Metrics
	success := map[string]string{"status": "success"}
	want := map[string]float64{"success": 1, "failure": 0}
	if m.SchedulerCreatesLabelled {
		success = map[string]string{"status": "success", "admin_access": "false", "owner_api_group": "", "owner_api_kind": "Pod"}
		want["admin_access=true"] = 0
	}
	moved := func(ctx context.Context) (map[string]float64, error) {
		after, err := s.scheduler(ctx)
		if err != nil {
			return nil, err
		}
		since := func(labels map[string]string) float64 {
			return after.Sum(m.SchedulerCreates, labels) - before.Sum(m.SchedulerCreates, labels)
		}
		out := map[string]float64{"success": since(success), "failure": since(map[string]string{"status": "failure"})}
		if m.SchedulerCreatesLabelled {
			out["admin_access=true"] = since(map[string]string{"admin_access": "true"})
		}
		return out, nil
	}
	eventuallyScraped(ctx, moved).WithTimeout(allocateTimeout).Should(gomega.Equal(want),
		"%s moves by the one claim kube-scheduler made, counted %v", m.SchedulerCreates, success)
	after, err := s.scheduler(ctx)
	framework.ExpectNoError(err)
	expectFamily(after, m.SchedulerCreates)
}
