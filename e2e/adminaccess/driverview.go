// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// What a spec can see of the driver whose devices it claims. With the
// bundled test driver, its contract: what the workload prints of each device
// it was given and of admin access, its device count per node. With a
// driver of the user's own (DRIVER, DEVICE_CLASS), only the API, the pods'
// phases, and ADMIN_CHECK in a container given admin access. The specs that
// hold for any driver (authorization, the core allocation promises, the
// quota) say what they check through these, and run in both modes.

// requireBundledDriver: the spec reads the bundled driver's contract.
func requireBundledDriver(ctx context.Context) {
	ginkgo.GinkgoHelper()
	require(ctx, release.NeedBundledDriver, nil)
}

// expectAdminAccessSeen checks that a container of a running pod sees its
// request's admin access as the allocation says: the bundled workload
// printed DRA_ADMIN_ACCESS; in a container given admin access by a driver of
// the user's own, ADMIN_CHECK succeeds, told which devices it was given
// (observe.AdminCheckEnv).
func expectAdminAccessSeen(ctx context.Context, pod *corev1.Pod, container string, vars map[string]string, admin bool, what string) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	if e.Vendor == nil {
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, strconv.FormatBool(admin)), what)
		return
	}
	if !admin || e.Vendor.AdminCheck == "" {
		return
	}
	given := adminDevicesGiven(ctx, pod, container)
	gomega.Expect(given).NotTo(gomega.BeEmpty(), "devices given with admin access to container %s of pod %s (%s)", container, pod.Name, what)
	var names []string
	for _, d := range given {
		names = append(names, d.Pool+"/"+d.Name)
	}
	framework.Logf("ADMIN_CHECK in pod %s, container %s, given %s of driver %s (claim %s)", pod.Name, container, strings.Join(names, ", "), given[0].Driver, given[0].Claim)
	command := observe.WithEnv(observe.AdminCheckEnv(given), e.Vendor.AdminCheck)
	out, err := observe.Exec(ctx, e.Config, e.Client, pod.Namespace, pod.Name, container, command)
	framework.ExpectNoError(err, "ADMIN_CHECK in a container given admin access to %s (%s)", strings.Join(names, ", "), what)
	framework.Logf("ADMIN_CHECK in pod %s, container %s: %s", pod.Name, container, out)
}

// adminDevicesGiven are the devices the allocation gave one container of
// a pod with admin access, in the order of the claims' results: each claim
// the container uses (resources.claims, by the pod's name for it; a claim
// from a template by the name in the pod's status) and, where the
// container names a request, that request's results alone.
func adminDevicesGiven(ctx context.Context, pod *corev1.Pod, container string) []observe.GivenDevice {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	p, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	var uses []corev1.ResourceClaim
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == container {
			uses = c.Resources.Claims
		}
	}
	var out []observe.GivenDevice
	for _, use := range uses {
		name := podClaimByName(p, use.Name)
		gomega.Expect(name).NotTo(gomega.BeEmpty(), "pod %s: the claim of its entry %s", p.Name, use.Name)
		claim, err := e.DRA.ResourceClaims(p.Namespace).Get(ctx, name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(claim.Status.Allocation).NotTo(gomega.BeNil(), "claim %s of running pod %s is allocated", name, p.Name)
		for _, r := range claim.Status.Allocation.Devices.Results {
			base, _, _ := strings.Cut(r.Request, "/") // a subrequest's results go to its request's containers
			if r.AdminAccess == nil || !*r.AdminAccess || use.Request != "" && use.Request != base && use.Request != r.Request {
				continue
			}
			d, _ := e.Vendor.Device(r.Driver, r.Pool, r.Device)
			out = append(out, observe.GivenDevice{Driver: r.Driver, Pool: r.Pool, Name: r.Device, Claim: claim.Name, Request: r.Request, Attributes: d.Attributes})
		}
	}
	return out
}

// podClaimByName is the claim a pod's spec.resourceClaims entry names:
// the claim itself, or the one made from its template (pod status); ""
// while that is not made yet.
func podClaimByName(p *corev1.Pod, entry string) string {
	for _, rc := range p.Spec.ResourceClaims {
		if rc.Name == entry && rc.ResourceClaimName != nil {
			return *rc.ResourceClaimName
		}
	}
	for _, st := range p.Status.ResourceClaimStatuses {
		if st.Name == entry && st.ResourceClaimName != nil {
			return *st.ResourceClaimName
		}
	}
	return ""
}

// expectDevicesSeen checks that the bundled workload was given every device
// of the claim's allocation (its variable names the claim); a driver of the
// user's own promises no such variable.
func expectDevicesSeen(e *testenv.Env, vars map[string]string, claim *resourceapi.ResourceClaim) {
	ginkgo.GinkgoHelper()
	if e.Vendor != nil {
		return
	}
	for _, r := range claim.Status.Allocation.Devices.Results {
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.DeviceEnv(r.Device), string(claim.UID)), "device %s of claim %s", r.Device, claim.Name)
	}
}

// devicesNode is the node a spec runs its pods on: a worker with the bundled
// driver; with the user's driver, among the nodes whose class devices no
// one held when the run began (the specs hold them all), the worker with
// most devices of the class (a control-plane node only where no worker
// has any).
func devicesNode(ctx context.Context) string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	if e.Vendor == nil {
		return anyWorker(ctx)
	}
	nodes, ws := e.Vendor.FreeNodes(), workers(ctx)
	for _, n := range nodes {
		if slices.Contains(ws, n) {
			return n
		}
	}
	return nodes[0]
}

// devicesOn is how many devices of the class a node has.
func devicesOn(e *testenv.Env, node string) int {
	if e.Vendor == nil {
		return e.Driver.Devices
	}
	return len(e.Vendor.Devices[node])
}

// deviceNodes are the nodes with devices of the class: every node with the
// bundled driver (it runs on each), the ones the user's driver publishes on
// whose class devices no one held when the run began. The DaemonSet spec
// holds every device of each of them and keeps its DaemonSet to them (node
// affinity), so a node whose devices others hold is left out, not failed.
func deviceNodes(ctx context.Context) []string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	if e.Vendor != nil {
		nodes := e.Vendor.FreeNodes()
		sort.Strings(nodes)
		return nodes
	}
	return bundledDriverNodes(ctx)
}
