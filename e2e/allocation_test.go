package e2e

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
)

// allocatedClaim waits until the claim is allocated and returns it.
func allocatedClaim(ctx context.Context, b *builder.Builder, name string) *resourceapi.ResourceClaim {
	ginkgo.GinkgoHelper()
	var claim *resourceapi.ResourceClaim
	gomega.Eventually(ctx, func(ctx context.Context) error {
		c, err := b.GetClaim(ctx, name)
		if err != nil {
			return err
		}
		if c.Status.Allocation == nil {
			return fmt.Errorf("claim %s is not allocated", name)
		}
		claim = c
		return nil
	}).WithTimeout(allocateTimeout).Should(gomega.Succeed())
	return claim
}

// runOn starts a pod on that node with a claim shaped by opts, and returns the
// pod, its allocated claim and its environment.
func runOn(ctx context.Context, b *builder.Builder, node string, opts ...builder.RequestOption) (*corev1.Pod, *resourceapi.ResourceClaim, map[string]string) {
	ginkgo.GinkgoHelper()
	claim, err := b.CreateClaim(ctx, b.Claim(opts...))
	framework.ExpectNoError(err)
	pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(claim)), node))
	framework.ExpectNoError(err)
	vars := expectRunning(ctx, b, pod)
	return pod, allocatedClaim(ctx, b, claim.Name), vars
}

func anyWorker(ctx context.Context) string {
	ginkgo.GinkgoHelper()
	nodes, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	for _, n := range nodes.Items {
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; !cp {
			return n.Name
		}
	}
	return nodes.Items[0].Name
}

// Serial: these specs aim at particular devices, or at every device of a node;
// ordinary claims of specs running alongside would take those devices.
var _ = ginkgo.Describe("Admin access allocation", ginkgo.Label("allocation"), ginkgo.Serial, func() {
	f := newFramework("allocation")

	ginkgo.It("allocates to an admin-access claim a device that another pod's ordinary claim holds, leaving that pod undisturbed", ginkgo.Label("driver"), func(ctx context.Context) {
		kep("admin access reaches devices already in use without taking them")
		b := newBuilder(f)
		node := anyWorker(ctx)
		ordinaryPod, ordinary, ordinaryVars := runOn(ctx, b, node, builder.DeviceIndex(0))
		gomega.Expect(ordinaryVars).To(gomega.HaveKeyWithValue("DRA_ADMIN_ACCESS", "false"))
		before := snapshot(ctx, ordinaryPod)

		labelForAdmin(ctx, f.Namespace.Name)
		_, admin, adminVars := runOn(ctx, b, node, builder.DeviceIndex(0), builder.AdminAccess())
		gomega.Expect(builder.AllocatedDevices(admin)).To(gomega.Equal(builder.AllocatedDevices(ordinary)), "the same device")
		gomega.Expect(builder.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
		gomega.Expect(adminVars).To(gomega.HaveKeyWithValue("DRA_ADMIN_ACCESS", "true"))
		gomega.Expect(adminVars).To(gomega.HaveKeyWithValue("DRA_DEVICE_DEV_0", string(admin.UID)))
		expectUndisturbed(ctx, ordinaryPod, before)
	})

	ginkgo.It("still allocates to an ordinary claim a device that an admin-access claim holds", func(ctx context.Context) {
		kep("devices under admin access stay available to ordinary claims")
		b := newBuilder(f)
		node := anyWorker(ctx)
		labelForAdmin(ctx, f.Namespace.Name)
		adminPod, admin, _ := runOn(ctx, b, node, builder.DeviceIndex(1), builder.AdminAccess())
		before := snapshot(ctx, adminPod)
		_, ordinary, vars := runOn(ctx, b, node, builder.DeviceIndex(1))
		gomega.Expect(builder.AllocatedDevices(ordinary)).To(gomega.Equal(builder.AllocatedDevices(admin)))
		gomega.Expect(builder.AdminAccessResults(ordinary)).To(gomega.Equal([]bool{false}))
		gomega.Expect(vars).To(gomega.HaveKeyWithValue("DRA_ADMIN_ACCESS", "false"))
		expectUndisturbed(ctx, adminPod, before)
	})

	ginkgo.It("satisfies allocationMode All with admin access while every device of the node is in use", func(ctx context.Context) {
		kep("allocationMode All with admin access while every device is in use")
		b := newBuilder(f)
		node := anyWorker(ctx)
		holder, held, _ := runOn(ctx, b, node, builder.AllDevices())
		gomega.Expect(held.Status.Allocation.Devices.Results).To(gomega.HaveLen(env.Driver.Devices), "the ordinary claim holds every device of %s", node)
		before := snapshot(ctx, holder)

		labelForAdmin(ctx, f.Namespace.Name)
		_, admin, vars := runOn(ctx, b, node, builder.AllDevices(), builder.AdminAccess())
		gomega.Expect(builder.AllocatedDevices(admin)).To(gomega.ConsistOf(builder.AllocatedDevices(held)))
		gomega.Expect(builder.AdminAccessResults(admin)).To(gomega.HaveEach(true))
		for i := 0; i < env.Driver.Devices; i++ {
			gomega.Expect(vars).To(gomega.HaveKeyWithValue(fmt.Sprintf("DRA_DEVICE_DEV_%d", i), string(admin.UID)))
		}
		gomega.Expect(vars).To(gomega.HaveKeyWithValue("DRA_ADMIN_ACCESS", "true"))
		expectUndisturbed(ctx, holder, before)

		ginkgo.By("an ordinary claim for any device of the node stays unallocated meanwhile")
		claim, err := b.CreateClaim(ctx, b.Claim())
		framework.ExpectNoError(err)
		pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(claim)), node))
		framework.ExpectNoError(err)
		expectStaysUnallocated(ctx, b, claim.Name, fmt.Sprintf("pod %s must wait: the admin claim took no device, the ordinary one took them all", pod.Name))
	})

	ginkgo.It("counts admin-access claims toward the namespace's ResourceQuota for claims", func(ctx context.Context) {
		kep("admin-access claims count toward ResourceQuota")
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		const quotaName = "one-claim"
		key := corev1.ResourceName("count/resourceclaims.resource.k8s.io")
		_, err := env.Client.CoreV1().ResourceQuotas(f.Namespace.Name).Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: quotaName},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{key: resource.MustParse("1")}},
		}, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		gomega.Eventually(ctx, func(ctx context.Context) (corev1.ResourceList, error) {
			q, err := env.Client.CoreV1().ResourceQuotas(f.Namespace.Name).Get(ctx, quotaName, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return q.Status.Hard, nil
		}).WithTimeout(allocateTimeout).Should(gomega.HaveKey(key), "the quota controller computes the quota")

		first, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		// An apiserver with the gate off would drop the field and count an
		// ordinary claim: the stored claim must still ask for admin access.
		gomega.Expect(builder.RequestsAdminAccess(first)).To(gomega.BeTrue())
		_, err = b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "the second claim must exceed the quota, got %v", err)
		gomega.Expect(err.Error()).To(gomega.ContainSubstring(fmt.Sprintf("exceeded quota: %s, requested: %s=1, used: %s=1, limited: %s=1", quotaName, key, key, key)))
		gomega.Expect(strings.Count(err.Error(), "exceeded quota")).To(gomega.Equal(1))
	})
})

// expectStaysUnallocated watches a claim stay without allocation.
func expectStaysUnallocated(ctx context.Context, b *builder.Builder, claimName, why string) {
	ginkgo.GinkgoHelper()
	gomega.Consistently(ctx, func(ctx context.Context) (*resourceapi.AllocationResult, error) {
		c, err := b.GetClaim(ctx, claimName)
		if err != nil {
			return nil, err
		}
		return c.Status.Allocation, nil
	}).WithTimeout(stableFor).Should(gomega.BeNil(), why)
}
