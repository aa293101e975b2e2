// SPDX-License-Identifier: Apache-2.0

package adminaccess

// What specs do with claims, whichever group made them: wait until one is
// allocated, watch claims stay unallocated, see one released and deleted,
// list a namespace's, read one's results by request; and the served version
// of resource.k8s.io for what the typed clients cannot write; write an
// allocation as a scheduler would; run a pod of a granted admin-access claim.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
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

// expectStaysUnallocated watches claims stay without allocation, all in one
// window (a claim allocated meanwhile fails the spec with why and its name).
// The window opens with an event that makes kube-scheduler try again every
// pod its DynamicResources plugin turned away (retryScheduling), so that
// the claims stay unallocated through a new attempt, not only because
// nothing asked again.
func expectStaysUnallocated(ctx context.Context, b *builder.Builder, why string, claimNames ...string) {
	ginkgo.GinkgoHelper()
	// A window over no claim would pass whatever the cluster does.
	gomega.Expect(claimNames).NotTo(gomega.BeEmpty(), "claims to watch: %s", why)
	retryScheduling(ctx)
	gomega.Consistently(ctx, func(ctx context.Context) (map[string]*resourceapi.AllocationResult, error) {
		allocated := map[string]*resourceapi.AllocationResult{}
		for _, name := range claimNames {
			c, err := b.GetClaim(ctx, name)
			if err != nil {
				return nil, err
			}
			if c.Status.Allocation != nil {
				allocated[name] = c.Status.Allocation
			}
		}
		return allocated, nil
	}).WithTimeout(stableFor).Should(gomega.BeEmpty(), why)
}

// retryScheduling adds a DeviceClass that no claim uses, and removes it.
// kube-scheduler's DynamicResources plugin registers a DeviceClass added or
// updated without a queueing hint (EventsToRegister, 1.33-1.38), so every
// pod the plugin turned away is tried again: after its backoff (at most
// 10 s by default), within a window of stableFor.
func retryScheduling(ctx context.Context) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "adminaccess-retry-",
		Labels: map[string]string{"app.kubernetes.io/managed-by": deploy.ManagedBy}}}
	made, err := e.DRA.DeviceClasses().Create(ctx, class, metav1.CreateOptions{})
	framework.ExpectNoError(err, "adding a DeviceClass so that kube-scheduler tries the waiting pods again")
	framework.ExpectNoError(e.DRA.DeviceClasses().Delete(ctx, made.Name, metav1.DeleteOptions{}), "removing DeviceClass %s", made.Name)
}

// expectDeallocated waits until kube-controller-manager has released a claim
// nobody uses: reservedFor empty, no allocation, no protecting finalizer.
func expectDeallocated(ctx context.Context, b *builder.Builder, claimName string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, func(ctx context.Context) (*resourceapi.ResourceClaim, error) {
		return b.GetClaim(ctx, claimName)
	}).WithTimeout(allocateTimeout).Should(gomega.And(
		gomega.HaveField("Status.ReservedFor", gomega.BeEmpty()),
		gomega.HaveField("Status.Allocation", gomega.BeNil()),
		gomega.HaveField("Finalizers", gomega.Not(gomega.ContainElement(resourceapi.Finalizer)))),
		"claim %s is deallocated once unused", claimName)
}

// deleteClaim deletes a claim with b's client and waits until it is gone
// (its finalizer lifted by kube-controller-manager).
func deleteClaim(ctx context.Context, b *builder.Builder, claim *resourceapi.ResourceClaim) {
	ginkgo.GinkgoHelper()
	framework.ExpectNoError(b.DRA.ResourceClaims(claim.Namespace).Delete(ctx, claim.Name, metav1.DeleteOptions{}))
	gomega.Eventually(ctx, func(ctx context.Context) error {
		_, err := b.DRA.ResourceClaims(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
		return err
	}).WithTimeout(allocateTimeout).Should(gomega.Satisfy(apierrors.IsNotFound), "claim %s is gone", claim.Name)
}

// resultsByRequest is, per request of an allocated claim, whether its result grants admin access.
func resultsByRequest(c *resourceapi.ResourceClaim) map[string]bool {
	out := map[string]bool{}
	if c.Status.Allocation != nil {
		for _, r := range c.Status.Allocation.Devices.Results {
			out[r.Request] = out[r.Request] || (r.AdminAccess != nil && *r.AdminAccess)
		}
	}
	return out
}

// resourceGVR is a resource.k8s.io resource at the version the cluster serves.
func resourceGVR(version string, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "resource.k8s.io", Version: version, Resource: resource}
}

// claimsIn lists the claims of b's namespace, with b's client.
func claimsIn(ctx context.Context, b *builder.Builder) []resourceapi.ResourceClaim {
	ginkgo.GinkgoHelper()
	list, err := b.DRA.ResourceClaims(b.Namespace).List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	return list.Items
}

// patchAllocation writes status.allocation.devices.results of a claim, as a
// scheduler would. A merge patch of the status subresource reads the same in
// every served version, so it needs no conversion (the converting client's
// UpdateStatus cannot write v1beta2 in k8s.io/dynamic-resource-allocation v0.35).
func patchAllocation(ctx context.Context, claim *resourceapi.ResourceClaim, results ...map[string]any) error {
	e := envOf(ctx)
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"allocation": map[string]any{
		"devices": map[string]any{"results": results}}}})
	_, err := e.Dynamic.Resource(resourceGVR(e.ResourceAPI, "resourceclaims")).Namespace(claim.Namespace).
		Patch(ctx, claim.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// runGrantedAdminPod labels the builder's namespace for admin access and
// runs a pod of a new admin-access claim, seen with admin access; it
// returns the claim, the pod and the pod as it then was.
func runGrantedAdminPod(ctx context.Context, b *builder.Builder) (*resourceapi.ResourceClaim, *corev1.Pod, podSnapshot) {
	ginkgo.GinkgoHelper()
	labelForAdmin(ctx, b.Namespace)
	claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
	framework.ExpectNoError(err)
	pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
	framework.ExpectNoError(err)
	expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, expectRunning(ctx, b, pod), true, "the pod of an admin-access claim in a labelled namespace")
	return claim, pod, snapshot(ctx, pod)
}

// resultsGiven is each result of a claim's allocation as request=pool/device.
func resultsGiven(c *resourceapi.ResourceClaim) []string {
	var out []string
	for _, r := range c.Status.Allocation.Devices.Results {
		out = append(out, r.Request+"="+r.Pool+"/"+r.Device)
	}
	return out
}

// devicesTwice is the devices (pool/device) that more than one result of
// a claim's allocation names: what no allocation may hold.
func devicesTwice(c *resourceapi.ResourceClaim) []string {
	seen, out := map[string]int{}, []string{}
	for _, r := range c.Status.Allocation.Devices.Results {
		d := r.Pool + "/" + r.Device
		if seen[d]++; seen[d] == 2 {
			out = append(out, d)
		}
	}
	return out
}
