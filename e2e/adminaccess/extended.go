package adminaccess

import (
	"context"
	"fmt"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
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
	itEach(f, newFeatureDriver(contract.LayoutPlain, release.NeedExtendedResources), extendedPromises, nil)
})

// extendedPromises are the group's specs as bodies, so that the allocators
// group runs them again under each other implementation: kube-scheduler
// allocates the claim it makes for the extended resource with the same
// allocator as any other.
var extendedPromises = []featurePromise{
	{text: "gives a pod that asks for the class's extended resource every device of a node that admin-access claims have", kep: "devices under admin access stay available to pods asking for the class's extended resource", run: extendedBesideAdmin},
}

func extendedBesideAdmin(ctx context.Context, f *framework.Framework, ext *featureDriver, seen func(context.Context)) {
	b := ext.builder(ctx, f)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	adminPod, admin, _ := runOn(ctx, b, node, builder.AllDevices(), builder.AdminAccess())
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.And(gomega.HaveLen(ext.opts.Published()), gomega.HaveEach(true)))
	before := snapshot(ctx, adminPod)

	ginkgo.By("a pod asks for all of them as the class's extended resource")
	name := corev1.ResourceName(resourceapi.ResourceDeviceClassPrefix + ext.opts.DeviceClass)
	pod, vars := runAsking(ctx, b, node, name, ext.opts.Published())
	defect, declared := env.Rel.KnownDefect(release.DefectImplicitExtendedResourceIgnored, env.Allocator())
	if declared {
		name = implicitNameIgnored(ctx, ext.opts.DeviceClass, pod, vars, defect)
		ginkgo.By("a pod asks for all of them as the class's explicit extended resource " + string(name))
		pod, vars = runAsking(ctx, b, node, name, ext.opts.Published())
	}
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))

	running, err := env.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
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
	running, err := env.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	if s := running.Status.ExtendedResourceClaimStatus; s != nil {
		framework.Failf("%s; pod %s got claim %s for %s%s", defect.NotReproduced(env.Rel.Minor, env.Allocator()), pod.Name, s.ResourceClaimName, resourceapi.ResourceDeviceClassPrefix, class)
	}
	gomega.Expect(vars).NotTo(gomega.HaveKey(contract.AdminAccessEnv), "pod %s has no claim, so no device of the driver's", pod.Name)
	framework.Logf("%s: pod %s asked for %s%s and runs with %s", defect.Issue, pod.Name, resourceapi.ResourceDeviceClassPrefix, class, release.CauseNoExtendedClaim)
	deletePod(ctx, pod)
	// Named after the class, which is a driver's name: unique among the
	// run's classes, and within the 63 characters of a name's part.
	explicit := "e2e.kep5018.io/" + class
	framework.ExpectNoError(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := env.DRA.DeviceClasses().Get(ctx, class, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c.Spec.ExtendedResourceName = &explicit
		_, err = env.DRA.DeviceClasses().Update(ctx, c, metav1.UpdateOptions{})
		return err
	}), "giving class %s the explicit extended resource name %s", class, explicit)
	return corev1.ResourceName(explicit)
}
