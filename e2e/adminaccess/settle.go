// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// A restart of kube-apiserver (a gate move, a release switch) or of a kubelet
// ends when that component serves, but the cluster's long-running clients
// have not caught up yet: each lost its watches, and client-go's reflector
// retries them with a back-off that doubles up to 30 s (with jitter, 60 s)
// and is forgotten only after two minutes without a failure. A restarted
// kubelet also deletes its node's ResourceSlices, which the driver publishes
// again only once its own watch sees that. Seen on 1.33: kube-scheduler
// deaf to a new pod for over a minute, a worker's devices missing for two.
// That is client-go's behaviour, not admin access's, and a spec that starts
// on such a cluster fails on its own bounded wait for the wrong reason. So
// before the specs go on, settle proves every link they use works again,
// with what an ordinary DRA pod needs: the driver's devices published on
// every node, then on every node a pod whose claim kube-controller-manager
// makes from a template, kube-scheduler allocates, the kubelet and the
// driver prepare and the pod runs; then the pods and claims are gone again
// (kube-controller-manager deletes the claims), so no spec sees them.

// settleTimeout bounds the wait: past the longest client back-off (60 s)
// plus a pod's start.
const settleTimeout = 3 * time.Minute

// leavesClientsBehind says whether a restart of c needs settle after it:
// kube-apiserver's ends every client's watches, a kubelet's deletes its
// node's slices.
func leavesClientsBehind(c profile.Component) bool {
	return c == profile.APIServer || c == profile.Kubelet
}

// settle waits until the cluster's clients have caught up after a restart,
// and puts the wait on the report's timeline.
func settle(ctx context.Context, after string) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	start := time.Now()
	framework.ExpectNoError(deploy.WaitPublished(ctx, e.Client, e.Dynamic, e.Driver, e.ResourceAPI, settleTimeout),
		"the driver's devices are published on every node again after %s", after)
	// Each part's end goes into the closing line: a slow settle says
	// which link was late.
	published := time.Since(start)

	ns, err := privilegedNamespace(ctx, "settle-", nil)
	framework.ExpectNoError(err, "creating the namespace of the settle pods")
	// Gone in any case, also when a wait below fails: its pods would hold
	// devices the next specs count on.
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := e.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			framework.Logf("deleting namespace %s: %v", ns.Name, err)
		}
	}()
	// Made here, not waited for: kube-controller-manager's service-account
	// controller may not have its lease yet, and the pods need no token.
	_, err = e.Client.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		framework.ExpectNoError(err, "creating the settle namespace's service account")
	}
	b := &builder.Builder{Namespace: ns.Name, Class: e.Driver.DeviceClass, DriverName: e.Driver.DriverName,
		Image: e.Driver.Image, Client: e.Client, DRA: e.DRA}
	tmpl, err := b.CreateTemplate(ctx, b.Template())
	framework.ExpectNoError(err)
	// Every node, the control plane too: the DaemonSet specs run pods there,
	// and its kubelet reaches kube-apiserver on its own address, which the
	// hold lets through, so it is the likeliest to be left in back-off.
	nodes, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	for _, node := range nodes.Items {
		pod := builder.OnNode(b.Pod(builder.FromTemplate(tmpl)), node.Name)
		pod.Spec.AutomountServiceAccountToken = ptr.To(false) // no wait for kube-root-ca.crt
		builder.ToleratingAllTaints(&pod.Spec)
		_, err := b.CreatePod(ctx, pod)
		framework.ExpectNoError(err)
	}
	// The last look, the one that saw every pod run, is what settleLinks
	// reports on.
	var pods *corev1.PodList
	gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
		var err error
		if pods, err = e.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{}); err != nil {
			return nil, err
		}
		var waiting []string
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				waiting = append(waiting, fmt.Sprintf("%s on %s is %s: %s", p.Name, p.Spec.NodeSelector["kubernetes.io/hostname"], p.Status.Phase, podConditions(&p)))
			}
		}
		sort.Strings(waiting)
		return waiting, nil
	}).WithTimeout(settleTimeout).Should(gomega.BeEmpty(),
		"after %s, a pod with an ordinary claim runs on every node (kube-controller-manager, kube-scheduler, the kubelets and the driver have caught up)", after)
	running := time.Since(start)
	links := settleLinks(ctx, pods)

	framework.ExpectNoError(e.Client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
	gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
		var left []string
		pods, err := e.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			left = append(left, "pod "+p.Name)
		}
		claims, err := e.DRA.ResourceClaims(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, c := range claims.Items {
			left = append(left, "claim "+c.Name)
		}
		return left, nil
	}).WithTimeout(settleTimeout).Should(gomega.BeEmpty(), "the settle pods and their claims are gone again after %s", after)
	recordStep(timeline.Since(timeline.KindSettle, "clients caught up after "+after, start))
	framework.Logf("clients caught up after %s in %s (devices published at +%s, a pod running on every node at +%s; %s)", after,
		time.Since(start).Round(100*time.Millisecond), published.Round(100*time.Millisecond), running.Round(100*time.Millisecond), links)
}

// settleLinks says, for each settle pod, when after its creation its claim
// was made (kube-controller-manager), it was scheduled (kube-scheduler) and
// its container started (the kubelet and the driver), to the second the API
// keeps: a slow settle then names the client that was late. A part it
// cannot read is left out; this is a report, not a check.
func settleLinks(ctx context.Context, pods *corev1.PodList) string {
	e := envOf(ctx)
	if len(pods.Items) == 0 {
		return "no pods"
	}
	claims, err := e.DRA.ResourceClaims(pods.Items[0].Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "links not read: " + err.Error()
	}
	made := map[string]time.Time{}
	for _, c := range claims.Items {
		made[c.Name] = c.CreationTimestamp.Time
	}
	var out []string
	for _, p := range pods.Items {
		created := p.CreationTimestamp.Time
		var parts []string
		at := func(what string, t time.Time) {
			if !t.IsZero() {
				parts = append(parts, fmt.Sprintf("%s +%s", what, t.Sub(created).Round(time.Second)))
			}
		}
		for _, st := range p.Status.ResourceClaimStatuses {
			if st.ResourceClaimName != nil {
				at("claim", made[*st.ResourceClaimName])
			}
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				at("scheduled", c.LastTransitionTime.Time)
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil {
				at("started", cs.State.Running.StartedAt.Time)
			}
		}
		out = append(out, p.Spec.NodeSelector["kubernetes.io/hostname"]+": "+strings.Join(parts, ", "))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
