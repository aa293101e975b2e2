// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// cdiFiles lists the driver's CDI spec files on a node.
func cdiFiles(e *testenv.Env, nodeName string) ([]string, error) {
	nodes, err := e.Cluster.Nodes()
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.String() != nodeName {
			continue
		}
		// No folder is no CDI file; any other failure is an error, never an
		// empty list (which would pass a check that a file is gone).
		var out, stderr bytes.Buffer
		if err := n.Command("sh", "-c", "[ -d /var/run/cdi ] || exit 0; ls -1 /var/run/cdi/").SetStdout(&out).SetStderr(&stderr).Run(); err != nil {
			return nil, fmt.Errorf("listing /var/run/cdi on %s: %v: %s", nodeName, err, stderr.String())
		}
		var files []string
		for _, f := range strings.Fields(out.String()) {
			if strings.HasPrefix(f, e.Driver.DriverName) {
				files = append(files, f)
			}
		}
		return files, nil
	}
	return nil, fmt.Errorf("node %s not found", nodeName)
}

// runOrdinaryPod starts a pod with an ordinary claim and returns them and the pod's node.
func runOrdinaryPod(ctx context.Context, b *builder.Builder) (*resourceapi.ResourceClaim, *corev1.Pod, string) {
	ginkgo.GinkgoHelper()
	claim, err := b.CreateClaim(ctx, b.Claim())
	framework.ExpectNoError(err)
	pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
	framework.ExpectNoError(err)
	expectRunning(ctx, b, pod)
	return claim, pod, podNode(ctx, pod)
}

func podNode(ctx context.Context, pod *corev1.Pod) string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	p, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	return p.Spec.NodeName
}

var _ = framework.Describe("The bundled test driver", ginkgo.Label("driver"), func() {
	f := newFramework("driver")

	it("publishes its devices on every node", kep("drivers publish devices in ResourceSlices (KEP-4381)"), func(ctx context.Context) {
		e := envOf(ctx)
		framework.ExpectNoError(deploy.WaitPublished(ctx, e.Client, e.Dynamic, e.Driver, e.ResourceAPI, time.Minute))
	})

	it("gives a pod with an ordinary claim its device variables and DRA_ADMIN_ACCESS=false", kep("ordinary claims get exclusive devices, adminAccess false"), func(ctx context.Context) {
		b := newBuilder(ctx, f)
		claim, err := b.CreateClaim(ctx, b.Claim())
		framework.ExpectNoError(err)
		pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		vars := expectRunning(ctx, b, pod)
		claim, err = b.GetClaim(ctx, claim.Name)
		framework.ExpectNoError(err)
		gomega.Expect(observe.AdminAccessResults(claim)).To(gomega.Equal([]bool{false}))
		device := strings.Split(observe.AllocatedDevices(claim)[0], "/")[1]
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.DeviceEnv(device), string(claim.UID)))
	})

	it("unprepares claims and removes their CDI files when the pods go", kep("drivers prepare and unprepare allocated claims"), func(ctx context.Context) {
		e := envOf(ctx)
		requireNodeAccess(ctx)
		b := newBuilder(ctx, f)
		claim, pod, node := runOrdinaryPod(ctx, b)
		want := fmt.Sprintf("%s-%s.json", e.Driver.DriverName, claim.UID)
		files, err := cdiFiles(e, node)
		framework.ExpectNoError(err)
		gomega.Expect(files).To(gomega.ContainElement(want), "CDI spec of the prepared claim")
		framework.ExpectNoError(b.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
		gomega.Eventually(ctx, func() ([]string, error) { return cdiFiles(e, node) }).WithTimeout(podStartTimeout).ShouldNot(gomega.ContainElement(want))
	})

	it("loses nothing when its pod restarts while a claim is prepared", kep("driver restarts do not lose prepared claims"), func(ctx context.Context) {
		e := envOf(ctx)
		requireNodeAccess(ctx)
		b := newBuilder(ctx, f)
		claim, pod, node := runOrdinaryPod(ctx, b)
		before := snapshot(ctx, pod)

		ginkgo.By("deleting the driver pod on " + node + " and letting the DaemonSet replace it")
		drivers, err := e.Client.CoreV1().Pods(e.Driver.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		framework.ExpectNoError(err)
		gomega.Expect(drivers.Items).To(gomega.HaveLen(1))
		old := drivers.Items[0]
		// The suite's own doing, so the cluster watch takes the missing
		// driver pod for no break, however long the DaemonSet takes. Ended
		// however the spec ends: a window left open would excuse every
		// break after it (until the watcher's MoveTimeout).
		moved := sync.OnceFunc(announceMove("the driver's pod on " + node + " deleted by a spec"))
		defer moved()
		framework.ExpectNoError(e.Client.CoreV1().Pods(old.Namespace).Delete(ctx, old.Name, metav1.DeleteOptions{}))
		gomega.Eventually(ctx, func(ctx context.Context) error {
			list, err := e.Client.CoreV1().Pods(e.Driver.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
			if err != nil {
				return err
			}
			for _, p := range list.Items {
				if p.UID != old.UID && p.Status.Phase == corev1.PodRunning {
					return nil
				}
			}
			return fmt.Errorf("no new running driver pod on %s yet", node)
		}).WithTimeout(podStartTimeout).Should(gomega.Succeed())
		moved()
		expectUndisturbed(ctx, pod, before)

		ginkgo.By("deleting the workload: the new driver process unprepares what the old one prepared")
		want := fmt.Sprintf("%s-%s.json", e.Driver.DriverName, claim.UID)
		files, err := cdiFiles(e, node)
		framework.ExpectNoError(err)
		gomega.Expect(files).To(gomega.ContainElement(want))
		framework.ExpectNoError(b.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
		gomega.Eventually(ctx, func() ([]string, error) { return cdiFiles(e, node) }).WithTimeout(podStartTimeout).ShouldNot(gomega.ContainElement(want))
	})

	it("fails only the claim whose opaque configuration is malformed, and says why in the pod's events", kep("driver configuration errors are reported per claim"), func(ctx context.Context) {
		b := newBuilder(ctx, f)
		bad, err := b.CreateClaim(ctx, b.ClaimWithConfig(`{"apiVersion":"testdriver.e2e/v1","kind":"DeviceConfig","colour":"red"}`))
		framework.ExpectNoError(err)
		good, err := b.CreateClaim(ctx, b.ClaimWithConfig(fmt.Sprintf(`{"apiVersion":"testdriver.e2e/v1","kind":"DeviceConfig","env":{"%sMODE":"fast"}}`, contract.EnvPrefix)))
		framework.ExpectNoError(err)
		badPod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(bad)))
		framework.ExpectNoError(err)
		goodPod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(good)))
		framework.ExpectNoError(err)
		vars := expectRunning(ctx, b, goodPod)
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.EnvPrefix+"MODE", "fast"), "the good claim's configuration reached its container")
		expectPodEvent(ctx, badPod, podStartTimeout, gomega.And(
			gomega.HavePrefix("Warning FailedPrepareDynamicResources: "),
			gomega.ContainSubstring(`invalid opaque device configuration: json: unknown field "colour"`)))
		p, err := b.Client.CoreV1().Pods(badPod.Namespace).Get(ctx, badPod.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodPending), "the pod of the bad claim must not start")
	})
})
