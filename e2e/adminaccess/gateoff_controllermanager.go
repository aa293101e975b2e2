package adminaccess

import (
	"context"
	"fmt"
	"slices"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The specs of kube-controller-manager without DRAAdminAccess (the move helpers
// are in gatemoves.go).

var _ = framework.Describe("With DRAAdminAccess off in kube-controller-manager", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("cm-off")
	inProfile(f, "controller-manager-off")

	ginkgo.It("counts no claim creation in resourceclaim_controller_creates_total for an admin-access template", ginkgo.Label("metrics"), func(ctx context.Context) {
		kep("metrics stay truthful while the controller cannot serve admin access")
		requireGateSwitching(ctx)
		s := newScraper(ctx, f, metrics.ControllerManager)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)

		ginkgo.By("an ordinary template's claim is counted, so the family exists and is read")
		// kube-controller-manager restarted for this profile: its counters
		// start empty, and a family with no series is not exposed at all.
		start, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)
		ordinaryTmpl, err := b.CreateTemplate(ctx, b.Template())
		framework.ExpectNoError(err)
		podsWithClaims(ctx, startFromTemplate(ctx, b, ordinaryTmpl, 1))
		eventuallyScraped(ctx, s.createsSince(start)).WithTimeout(allocateTimeout).Should(gomega.Equal(expectedCreates(0, 1)))
		before, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)
		expectFamily(before, env.Rel.Metrics.CreatesTotal)

		ginkgo.By("a pod from an admin-access template: no claim, and no count of any kind")
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		pod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		// The controller has handled the pod once it reports why it made no claim.
		expectPodEvent(ctx, pod, allocateTimeout, controllerGateOffEvent(tmpl))

		// needsAdminAccess in controller.go looks at every request.
		ginkgo.By("a pod from a template whose second request asks for admin access: refused the same way")
		second, err := b.CreateTemplate(ctx, b.TemplateOf(builder.Request(), builder.Request(builder.AdminAccess())))
		framework.ExpectNoError(err)
		secondPod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(second)))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, secondPod, allocateTimeout, controllerGateOffEvent(second))
		gomega.Expect(claimsIn(ctx, b)).To(gomega.HaveLen(1), "only the ordinary template's claim exists in %s", f.Namespace.Name)
		// Read in controller.go of 1.33-1.35: the gate check returns before
		// either counter, so the release counts neither success nor failure.
		consistentlyScraped(ctx, s.createsSince(before)).WithTimeout(stableFor).Should(gomega.Equal(creates{}))
	})

	ginkgo.It("keeps one Pending pod per node for an admin-access DaemonSet, without churn, until the gate is back on", ginkgo.Label("daemonset"), func(ctx context.Context) {
		kep("the DaemonSet controller tolerates pods that must stay Pending")
		requireGateSwitching(ctx)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		nodes, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err)
		want := len(nodes.Items)
		ds := createDaemonSet(ctx, b, "admin-monitor", tmpl)

		ginkgo.By("one Pending pod per node, each told why no claim was made")
		var pods []corev1.Pod
		gomega.Eventually(ctx, func(ctx context.Context) error {
			list, err := env.Client.CoreV1().Pods(f.Namespace.Name).List(ctx, metav1.ListOptions{})
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
				reason := controllerGateOffEvent(tmpl)
				if events := podEvents(ctx, &p); !slices.Contains(events, reason) {
					return fmt.Errorf("pod %s has not got %q yet (events: %v)", p.Name, reason, events)
				}
			}
			pods = list.Items
			return nil
		}).WithTimeout(allocateTimeout).Should(gomega.Succeed())
		gomega.Expect(claimsIn(ctx, b)).To(gomega.BeEmpty(), "no claim is created")

		ginkgo.By("no churn: the same pods stay, and the DaemonSet reports them unavailable")
		stable := podUIDs(ctx, f.Namespace.Name)
		gomega.Consistently(ctx, func(ctx context.Context) []string { return podUIDs(ctx, f.Namespace.Name) }).
			WithTimeout(stableFor).Should(gomega.Equal(stable))
		gomega.Eventually(ctx, func(ctx context.Context) (appsv1.DaemonSetStatus, error) {
			d, err := env.Client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
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
