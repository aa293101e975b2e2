package adminaccess

import (
	"context"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
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
	count := resource.MustParse(strconv.Itoa(ext.opts.Published()))
	pod := builder.OnNode(b.Pod(), node)
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{name: count}
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{name: count}
	pod, err := b.CreatePod(ctx, pod)
	framework.ExpectNoError(err)
	vars := expectRunning(ctx, b, pod)
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
}
