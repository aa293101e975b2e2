package adminaccess

import (
	"context"
	"sort"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
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
// the user's own, ADMIN_CHECK succeeds.
func expectAdminAccessSeen(ctx context.Context, pod *corev1.Pod, container string, vars map[string]string, admin bool, what string) {
	ginkgo.GinkgoHelper()
	if env.Vendor == nil {
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, strconv.FormatBool(admin)), what)
		return
	}
	if !admin || env.Vendor.AdminCheck == "" {
		return
	}
	out, err := observe.Exec(ctx, env.Config, env.Client, pod.Namespace, pod.Name, container, env.Vendor.AdminCheck)
	framework.ExpectNoError(err, "ADMIN_CHECK in a container given admin access (%s)", what)
	framework.Logf("ADMIN_CHECK in pod %s, container %s: %s", pod.Name, container, out)
}

// expectDevicesSeen checks that the bundled workload was given every device
// of the claim's allocation (its variable names the claim); a driver of the
// user's own promises no such variable.
func expectDevicesSeen(vars map[string]string, claim *resourceapi.ResourceClaim) {
	ginkgo.GinkgoHelper()
	if env.Vendor != nil {
		return
	}
	for _, r := range claim.Status.Allocation.Devices.Results {
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.DeviceEnv(r.Device), string(claim.UID)), "device %s of claim %s", r.Device, claim.Name)
	}
}

// devicesNode is the node a spec runs its pods on: a worker with the bundled
// driver; with the user's driver, the worker with most devices of the class
// (a control-plane node only where no worker has any).
func devicesNode(ctx context.Context) string {
	ginkgo.GinkgoHelper()
	if env.Vendor == nil {
		return anyWorker(ctx)
	}
	nodes, ws := env.Vendor.Nodes(), workers(ctx)
	for _, n := range nodes {
		if containsString(ws, n) {
			return n
		}
	}
	return nodes[0]
}

// devicesOn is how many devices of the class a node has.
func devicesOn(node string) int {
	if env.Vendor == nil {
		return env.Driver.Devices
	}
	return len(env.Vendor.Devices[node])
}

// deviceNodes are the nodes with devices of the class: every node with the
// bundled driver (it runs on each), the ones the user's driver publishes on.
func deviceNodes(ctx context.Context) []string {
	ginkgo.GinkgoHelper()
	if env.Vendor != nil {
		nodes := env.Vendor.Nodes()
		sort.Strings(nodes)
		return nodes
	}
	list, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	var out []string
	for _, n := range list.Items {
		out = append(out, n.Name)
	}
	return out
}
