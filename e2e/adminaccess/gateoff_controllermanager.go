// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The specs of kube-controller-manager without DRAAdminAccess (the move helpers
// are in gatemoves.go).

var _ = framework.Describe("With DRAAdminAccess off in kube-controller-manager", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("cm-off")
	inProfile(f, "controller-manager-off")
	monitor := &gateOffDaemonSet{}
	// After inProfile's BeforeAll: the DaemonSet is made with the gate off.
	ginkgo.BeforeAll(inEnv(func(ctx context.Context) { monitor.start(ctx, f.BaseName) }))
	ginkgo.AfterAll(inEnv(func(ctx context.Context) { monitor.remove(ctx) }))

	it("counts no claim creation in resourceclaim_controller_creates_total for an admin-access template", ginkgo.Label("metrics"), kep("metrics stay truthful while the controller cannot serve admin access"), func(ctx context.Context) {
		e := envOf(ctx)
		requireGateSwitching(ctx)
		s := newScraper(ctx, f, metrics.ControllerManager)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)

		ginkgo.By("an ordinary template's claim is counted, so the family exists and is read")
		// kube-controller-manager restarted for this profile: its counters
		// start empty, and a family with no series is not exposed at all.
		start, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)
		ordinaryTmpl, err := b.CreateTemplate(ctx, b.Template())
		framework.ExpectNoError(err)
		podsWithClaims(ctx, startFromTemplate(ctx, b, ordinaryTmpl, 1))
		eventuallyScraped(ctx, s.createsSince(start)).WithTimeout(allocateTimeout).Should(gomega.Equal(expectedCreates(e.Rel.Metrics, 0, 1)))
		before, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)
		expectFamily(before, e.Rel.Metrics.CreatesTotal)

		ginkgo.By("a pod from an admin-access template: no claim, and no count of any kind")
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		pod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		// The controller has handled the pod once it reports why it made no claim.
		expectPodEvent(ctx, pod, allocateTimeout, controllerGateOffEvent(e.Rel, tmpl))

		// needsAdminAccess in controller.go looks at every request.
		ginkgo.By("a pod from a template whose second request asks for admin access: refused the same way")
		second, err := b.CreateTemplate(ctx, b.TemplateOf(builder.Request(), builder.Request(builder.AdminAccess())))
		framework.ExpectNoError(err)
		secondPod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(second)))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, secondPod, allocateTimeout, controllerGateOffEvent(e.Rel, second))
		gomega.Expect(claimsIn(ctx, b)).To(gomega.HaveLen(1), "only the ordinary template's claim exists in %s", f.Namespace.Name)
		// Read in controller.go of 1.33-1.35: the gate check returns before
		// either counter, so the release counts neither success nor failure.
		consistentlyScraped(ctx, s.createsSince(before)).WithTimeout(stableFor).Should(gomega.Equal(creates{}))
	})

	// needsAdminAccess in controller.go refuses a template only for a
	// request that says true (ptr.Deref(AdminAccess, false), 1.33-1.35; the
	// group runs only where the gate can be switched off): false asks for no
	// admin access, so the controller without the gate makes the claim as
	// for an unset field. The namespace has no label, which false needs
	// none of, so only a gate check that read false as asking could refuse.
	it("makes the claim of a template whose request says adminAccess: false, keeps the false, and runs its pod without admin access", ginkgo.Label("skew"), kep("adminAccess unset or false asks for no admin access and needs no label"), func(ctx context.Context) {
		e := envOf(ctx)
		requireGateSwitching(ctx)
		b := newBuilder(ctx, f)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.NoAdminAccess()))
		framework.ExpectNoError(err)
		// kube-apiserver has the gate: it keeps the field as sent.
		gomega.Expect(observe.RequestsAdminAccessFields(tmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"false"}), "template %s's requests[].adminAccess as stored", tmpl.Name)
		pod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		// Where the controller refused, the pod stays Pending and its last
		// events, which expectRunning prints, carry the refusal.
		expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, expectRunning(ctx, b, pod), false, "the pod of a template that says adminAccess: false")
		claim := podClaim(ctx, b, pod)
		gomega.Expect(observe.RequestsAdminAccessFields(claim.Spec.Devices)).To(gomega.Equal([]string{"false"}),
			"claim %s, made by kube-controller-manager without the gate from template %s: requests[].adminAccess as stored", claim.Name, tmpl.Name)
		gomega.Expect(observe.AdminAccessResults(claim)).To(gomega.Equal([]bool{false}), "status.allocation.devices.results[].adminAccess of claim %s", claim.Name)
		gomega.Expect(podEvents(ctx, pod)).NotTo(gomega.ContainElement(controllerGateOffEvent(e.Rel, tmpl)), "pod %s's events: the controller never refused its template", pod.Name)
	})

	// needsAdminAccess (controller.go, 1.33-1.35) looks at each request's
	// exact admin access only: a prioritized list's subrequests have no
	// such field, so the controller without the gate makes the claim of a
	// list, and refuses a template only for an exact request beside it
	// that asks. A check that took a list for asking, or skipped the
	// requests after one, would fail one of the two.
	it("makes the claim of a template whose request is a prioritized list, and refuses one with an admin-access request beside the list", ginkgo.Label("skew"), kep("a controller-manager without the gate refuses a template whose exact request asks for admin access, and makes the claims of prioritized lists"), func(ctx context.Context) {
		e := envOf(ctx)
		requireGateSwitching(ctx)
		require(ctx, release.NeedPrioritizedList, nil)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		list := [][]builder.RequestOption{{builder.DeviceIndex(e.Driver.Devices + 7)}, {}}

		ginkgo.By("a template of a prioritized list alone: its pod gets its claim and runs")
		listTmpl, err := b.CreateTemplate(ctx, b.TemplateFirstAvailable(list))
		framework.ExpectNoError(err)
		pod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(listTmpl)))
		framework.ExpectNoError(err)
		expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, expectRunning(ctx, b, pod), false, "the pod of a prioritized list's template")
		claim := podClaim(ctx, b, pod)
		gomega.Expect(resultsByRequest(claim)).To(gomega.Equal(map[string]bool{builder.RequestName + "/" + builder.SubRequestNameAt(1): false}),
			"status.allocation.devices.results[].request and adminAccess of claim %s, made from template %s", claim.Name, listTmpl.Name)
		gomega.Expect(podEvents(ctx, pod)).NotTo(gomega.ContainElement(controllerGateOffEvent(e.Rel, listTmpl)), "pod %s's events: the controller never refused its template", pod.Name)

		ginkgo.By("a template of a prioritized list and an admin-access request: no claim, and the pod is told why")
		mixed, err := b.CreateTemplate(ctx, b.TemplateFirstAvailable(list, builder.Request(builder.AdminAccess())))
		framework.ExpectNoError(err)
		refused, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(mixed)))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, refused, allocateTimeout, controllerGateOffEvent(e.Rel, mixed))
		gomega.Expect(claimsIn(ctx, b)).To(gomega.HaveLen(1), "only the list's claim exists in %s", f.Namespace.Name)
		deletePod(ctx, pod)
	})

	it(daemonSetPendingSpec, ginkgo.Label("daemonset"), kep("the DaemonSet controller tolerates pods that must stay Pending"), func(ctx context.Context) {
		e := envOf(ctx)
		requireGateSwitching(ctx)
		gomega.Expect(monitor.ns).NotTo(gomega.BeNil(), "the group's BeforeAll made the DaemonSet's namespace")
		// The framework keeps its events and pods on failure, and deletes it
		// after the spec (so remove need not).
		f.AddNamespacesToDelete(monitor.ns)
		monitor.handedOver = true
		b, tmpl, want := monitor.b, monitor.tmpl, monitor.want

		ginkgo.By("one Pending pod per node, each told why no claim was made")
		var pods []corev1.Pod
		gomega.Eventually(ctx, func(ctx context.Context) error {
			list, err := e.Client.CoreV1().Pods(b.Namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(list.Items) != want {
				return fmt.Errorf("%d pods, want one per node (%d)", len(list.Items), want)
			}
			for _, p := range list.Items {
				if p.Status.Phase != corev1.PodPending {
					return fmt.Errorf("pod %s is %s", p.Name, p.Status.Phase)
				}
				reason := controllerGateOffEvent(e.Rel, tmpl)
				if events := podEvents(ctx, &p); !slices.Contains(events, reason) {
					return fmt.Errorf("pod %s has not got %q yet (events: %v)", p.Name, reason, events)
				}
			}
			pods = list.Items
			return nil
		}).WithTimeout(allocateTimeout).Should(gomega.Succeed())
		gomega.Expect(claimsIn(ctx, b)).To(gomega.BeEmpty(), "no claim is created")

		// The window began when the pods were first all there (before the
		// group's first spec): a pod replaced since has another UID, which
		// the old one never gets back, so the first look and every look
		// after it, until stableFor has passed, must see the same pods.
		ginkgo.By("no churn: the same pods stay, and the DaemonSet reports them unavailable")
		gomega.Consistently(ctx, func(ctx context.Context) []string { return podUIDs(ctx, b.Namespace) }).
			WithTimeout(max(stableFor-time.Since(monitor.since), poll)).Should(gomega.Equal(monitor.first),
			"the DaemonSet's pods, as uid/phase, since they were first all there %s ago", time.Since(monitor.since).Round(time.Second))
		gomega.Eventually(ctx, func(ctx context.Context) (appsv1.DaemonSetStatus, error) {
			d, err := e.Client.AppsV1().DaemonSets(b.Namespace).Get(ctx, monitor.name, metav1.GetOptions{})
			if err != nil {
				return appsv1.DaemonSetStatus{}, err
			}
			return d.Status, nil
		}).WithTimeout(allocateTimeout).Should(gomega.And(
			gomega.HaveField("DesiredNumberScheduled", int32(want)),
			gomega.HaveField("NumberUnavailable", int32(want)),
			gomega.HaveField("NumberReady", int32(0))))

		ginkgo.By("turning the gate on in kube-controller-manager")
		switchGate(ctx, profile.ControllerManager, true)
		for i := range pods {
			vars := expectRunning(ctx, b, &pods[i])
			gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		}
		gomega.Expect(claimsIn(ctx, b)).To(gomega.HaveLen(want), "one claim per pod")
	})
})

// daemonSetPendingSpec is the DaemonSet spec's sentence: the group's
// BeforeAll makes its DaemonSet only where it will run.
const daemonSetPendingSpec = "keeps one Pending pod per node for an admin-access DaemonSet, without churn, until the gate is back on"

// gateOffDaemonSet is the DaemonSet spec's admin-access DaemonSet, made
// with kube-controller-manager's gate off before the group's first spec
// runs, so that its window of no churn passes while the first spec watches
// its own window (the two windows at once: 15 s less), in a namespace of
// its own, since the framework makes a spec's only when the spec starts.
// What the first spec asserts holds with these pods there too: they get
// no claim, so no count.
type gateOffDaemonSet struct {
	ns    *corev1.Namespace
	b     *builder.Builder
	tmpl  *resourceapi.ResourceClaimTemplate
	name  string
	want  int
	first []string
	// since is when the pods were first all there, as first.
	since time.Time
	// handedOver: the spec gave the namespace to its framework.
	handedOver bool
}

// start makes the namespace (admin-labelled), the template and the
// DaemonSet, and waits until it has a pod on every node.
func (m *gateOffDaemonSet) start(ctx context.Context, basename string) {
	e := envOf(ctx)
	// Where the spec will skip (gates locked, a driver of the user's own,
	// which the group does not run with) or not run, nothing is made.
	if !gatesSwitchable(e) || e.Vendor != nil || !willRunSpec(suitePreview, daemonSetPendingSpec) {
		return
	}
	// basename's prefix: inProfile's AfterAll deletes its pods before the
	// gate comes back on, as it does for the specs' own.
	ns, err := privilegedNamespace(ctx, basename+"-", map[string]string{e.Rel.AdminLabel: "true"})
	framework.ExpectNoError(err, "creating the DaemonSet's namespace")
	m.ns = ns
	m.b = builderIn(ctx, ns.Name, e.Client)
	m.tmpl, err = m.b.CreateTemplate(ctx, m.b.Template(builder.AdminAccess()))
	framework.ExpectNoError(err)
	nodes, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	m.want, m.name = len(nodes.Items), "admin-monitor"
	createDaemonSet(ctx, m.b, m.name, m.tmpl)
	gomega.Eventually(ctx, func(ctx context.Context) []string {
		m.first = podUIDs(ctx, ns.Name)
		return m.first
	}).WithTimeout(allocateTimeout).Should(gomega.HaveLen(m.want), "the DaemonSet %s has a pod on each of the %d nodes", m.name, m.want)
	m.since = time.Now()
}

// remove deletes the namespace where the spec did not hand it to its
// framework (it failed or skipped before).
func (m *gateOffDaemonSet) remove(ctx context.Context) {
	e := envOf(ctx)
	if m.ns == nil || m.handedOver {
		return
	}
	if err := e.Client.CoreV1().Namespaces().Delete(ctx, m.ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		framework.Logf("deleting namespace %s: %v", m.ns.Name, err)
	}
}
