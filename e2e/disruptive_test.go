package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The specs here switch DRAAdminAccess in components of the shared cluster.
// They are Serial (Ginkgo runs them last, alone) and each container moves the
// cluster to the profile it needs and back, restarting only the components
// whose gate differs.

// inProfile moves the cluster to profile name for the container's specs.
// Where gates cannot be switched, each spec skips itself with the reason, and
// does so after naming its KEP requirement (kep, then requireGateSwitching), so
// a skipped row in the report still says what it would have checked. A skip
// here would come too early for that, and one in BeforeAll would give the later
// specs only Ginkgo's generic text.
//
// The move back waits until the container's pods are gone: a component whose
// gate comes back acts at once on what is left, and a pod kept waiting for an
// admin-access claim while kube-controller-manager had the gate off would
// otherwise get its claim made (or refused by the namespace's deletion, later)
// and counted in the next metrics spec's window (seen: +5 failures). Ginkgo
// runs AfterAll before the framework deletes the last spec's namespace, so
// the pods are deleted here.
func inProfile(f *framework.Framework, name string) {
	ginkgo.BeforeAll(func(ctx context.Context) {
		if gatesSwitchable() {
			moveTo(ctx, name)
		}
	})
	ginkgo.AfterAll(func(ctx context.Context) {
		if gatesSwitchable() {
			deletePodsOf(ctx, f.BaseName)
			moveTo(ctx, env.Prof.Name)
		}
	}, ginkgo.NodeTimeout(restoreTimeout))
	ginkgo.BeforeEach(func() {
		ginkgo.AddReportEntry(report.ProfileEntry, name, ginkgo.ReportEntryVisibilityNever)
	})
}

// deletePodsOf deletes every pod in the namespaces made for basename's
// specs (basename-NNNN) and waits until they are gone. Each look deletes
// again (a pod the DaemonSet controller made anew meanwhile goes too), so it
// looks every second, not every poll.
func deletePodsOf(ctx context.Context, basename string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
		list, err := env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var left []string
		for _, ns := range list.Items {
			if !strings.HasPrefix(ns.Name, basename+"-") {
				continue
			}
			// Owners first, or the DaemonSet controller makes the pods anew.
			if err := env.Client.AppsV1().DaemonSets(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return nil, err
			}
			if err := env.Client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return nil, err
			}
			pods, err := env.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			for _, p := range pods.Items {
				left = append(left, ns.Name+"/"+p.Name)
			}
		}
		return left, nil
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(gomega.BeEmpty(), "the pods of the %s specs are gone before the cluster moves back", basename)
}

// gatesSwitchable is false where the release table declares that this run
// cannot switch gates (the specs then skip themselves, with that reason).
func gatesSwitchable() bool {
	_, declared := env.Rel.DeclaredSkip(release.NeedGateSwitching, env.Mode())
	return !declared
}

func moveTo(ctx context.Context, name string) {
	ginkgo.GinkgoHelper()
	p, err := profile.Get(name)
	framework.ExpectNoError(err)
	moveToProfile(ctx, p)
}

// moveToProfile moves the cluster and puts each component's restart on the
// report's timeline.
func moveToProfile(ctx context.Context, p profile.Profile) {
	ginkgo.GinkgoHelper()
	start := time.Now()
	took, err := env.Cluster.MoveTo(ctx, p)
	for _, c := range profile.AllComponents {
		if d, ok := took[c]; ok {
			recordStep(timeline.Step{Kind: timeline.KindMove, Name: fmt.Sprintf("%s %s=%t (to profile %s)", c, release.Gate, p.Effective(env.Rel, c), p.Name), Started: start, Seconds: d.Seconds()})
		}
	}
	framework.ExpectNoError(err, "moving the cluster to profile %s", p.Name)
	framework.Logf("cluster moved to profile %s in %s (%v)", p.Name, time.Since(start).Round(time.Second), took)
	for c := range took {
		if leavesClientsBehind(c) {
			settle(ctx, "the move to profile "+p.Name)
			break
		}
	}
}

// switchGate switches one component and records how long it took.
func switchGate(ctx context.Context, c profile.Component, enable bool) {
	ginkgo.GinkgoHelper()
	start := time.Now()
	took, err := env.Cluster.SetAdminAccess(ctx, c, enable)
	framework.ExpectNoError(err, "switching %s", c)
	recordStep(timeline.Step{Kind: timeline.KindMove, Name: fmt.Sprintf("%s %s=%t", c, release.Gate, enable), Started: start, Seconds: took.Seconds()})
	if leavesClientsBehind(c) {
		settle(ctx, fmt.Sprintf("switching %s", c))
	}
}

func controlPlaneOff() profile.Profile {
	return profile.Profile{Name: "control-plane-off", Description: "off in kube-apiserver, kube-controller-manager and kube-scheduler",
		AdminAccess: map[profile.Component]bool{profile.APIServer: false, profile.ControllerManager: false, profile.Scheduler: false}}
}

func claimsIn(ctx context.Context, ns string) []resourceapi.ResourceClaim {
	ginkgo.GinkgoHelper()
	list, err := env.DRA.ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	return list.Items
}

func podUIDs(ctx context.Context, ns string) []string {
	list, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, string(p.UID)+"/"+string(p.Status.Phase))
	}
	sort.Strings(out)
	return out
}

var _ = framework.Describe("With DRAAdminAccess off in kube-controller-manager", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("cm-off")
	inProfile(f, "controller-manager-off")

	ginkgo.It("counts no claim creation in resourceclaim_controller_creates_total for a pod whose template asks for admin access", ginkgo.Label("metrics"), func(ctx context.Context) {
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
		gomega.Expect(claimsIn(ctx, f.Namespace.Name)).To(gomega.HaveLen(1), "only the ordinary template's claim exists in %s", f.Namespace.Name)
		// Read in controller.go of 1.33-1.35: the gate check returns before
		// either counter, so the release counts neither success nor failure.
		consistentlyScraped(ctx, s.createsSince(before)).WithTimeout(stableFor).Should(gomega.Equal(creates{}))
	})

	ginkgo.It("keeps one Pending pod per node for a DaemonSet whose pods ask for admin access, without churn, and runs them all once the gate is back on", ginkgo.Label("daemonset"), func(ctx context.Context) {
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
				if events := podEvents(ctx, &p); !containsString(events, reason) {
					return fmt.Errorf("pod %s has not got %q yet (events: %v)", p.Name, reason, events)
				}
			}
			pods = list.Items
			return nil
		}).WithTimeout(allocateTimeout).Should(gomega.Succeed())
		gomega.Expect(claimsIn(ctx, f.Namespace.Name)).To(gomega.BeEmpty(), "no claim is created")

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
		gomega.Expect(claimsIn(ctx, f.Namespace.Name)).To(gomega.HaveLen(want), "one claim per pod")
	})
})

// createDaemonSet runs, on every node (control plane included), a pod whose
// claim the controller makes from tmpl. Its pods carry the label app=name.
func createDaemonSet(ctx context.Context, b *builder.Builder, name string, tmpl *resourceapi.ResourceClaimTemplate, onNodes ...string) *appsv1.DaemonSet {
	ginkgo.GinkgoHelper()
	spec := b.PodSpec(builder.FromTemplate(tmpl))
	builder.ToleratingAllTaints(&spec)
	if len(onNodes) > 0 { // only where the class has devices
		builder.OnNodes(&spec, onNodes...)
	}
	labels := map[string]string{"app": name}
	ds, err := env.Client.AppsV1().DaemonSets(b.Namespace).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	return ds
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var _ = framework.Describe("With DRAAdminAccess off in kube-scheduler", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("sched-off")
	inProfile(f, "scheduler-off")

	ginkgo.It("keeps the claim's adminAccess, fails its allocation with the scheduler's admin-access error and counts the pod as pending; with the gate back on the pod runs", ginkgo.Label("skew", "metrics"), func(ctx context.Context) {
		kep("a scheduler without the gate never allocates admin access; re-enabling schedules the waiting pods")
		requireGateSwitching(ctx)
		s := newScraper(ctx, f, metrics.Scheduler)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		pendingPods := func(ctx context.Context) (float64, error) {
			fams, err := s.Scrape(ctx, metrics.Scheduler, s.node)
			if err != nil {
				return 0, err
			}
			return fams.Sum(env.Rel.Metrics.SchedulerPending, nil), nil
		}
		// The gauge is cluster-wide: pods of earlier specs' namespaces that
		// are still being deleted count until they go, and would leave the
		// gauge below a baseline that included them. Start from a quiet
		// scheduler, so that every count below is this spec's alone.
		eventuallyScraped(ctx, pendingPods).WithTimeout(2*time.Minute).Should(gomega.BeZero(),
			"%s: no pod of an earlier spec is still waiting to be scheduled", env.Rel.Metrics.SchedulerPending)
		const baseline = 0.0
		// The reason these pods wait is admin access's own (the scheduler's
		// gate is off). The allocator refuses with an error, which the
		// DynamicResources plugin returns as an error status (statusError in
		// dynamicresources.go, 1.33-1.35), not as unschedulable: the pods are
		// in scheduler_pending_pods, and scheduler_unschedulable_pods does not
		// count them (seen on 1.35.4: the gauge stayed 0 with both pods waiting).
		dra := map[string]string{"plugin": "DynamicResources", "profile": corev1.DefaultSchedulerName}
		unschedulable := func(ctx context.Context) (float64, error) {
			fams, err := s.Scrape(ctx, metrics.Scheduler, s.node)
			if err != nil {
				return 0, err
			}
			return fams.Sum(env.Rel.Metrics.SchedulerUnschedulable, dra), nil
		}
		unschedulableBefore, err := unschedulable(ctx)
		framework.ExpectNoError(err)

		const waiting = 2
		var pods []*corev1.Pod
		var claims []*resourceapi.ResourceClaim
		for i := 0; i < waiting; i++ {
			claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
			framework.ExpectNoError(err)
			gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeTrue(), "the apiserver (gate on) keeps the field")
			pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
			framework.ExpectNoError(err)
			pods, claims = append(pods, pod), append(claims, claim)
		}
		want := env.Rel.SchedulerGateOffMessage(f.Namespace.Name, claims[0].Name, builder.RequestName)
		expectPodEvent(ctx, pods[0], allocateTimeout, failedScheduling(want))
		eventuallyScraped(ctx, pendingPods).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline+waiting),
			"%s counts the pods that cannot be scheduled", env.Rel.Metrics.SchedulerPending)
		consistentlyScraped(ctx, unschedulable).WithTimeout(stableFor).Should(gomega.Equal(unschedulableBefore),
			"%s{plugin=\"DynamicResources\"} does not count pods whose claim the allocator refused with an error (the scheduler's admin-access gate off): Kubernetes %s returns an error status for them, not unschedulable",
			env.Rel.Metrics.SchedulerUnschedulable, env.Rel.Minor)
		for i, c := range claims {
			stored, err := b.GetClaim(ctx, c.Name)
			framework.ExpectNoError(err)
			gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "claim %s must stay unallocated", c.Name)
			gomega.Expect(snapshot(ctx, pods[i]).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", pods[i].Name)
		}

		ginkgo.By("turning the gate on in kube-scheduler")
		switchGate(ctx, profile.Scheduler, true)
		for _, p := range pods {
			gomega.Expect(expectRunning(ctx, b, p)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		}
		eventuallyScraped(ctx, pendingPods).WithTimeout(allocateTimeout).Should(gomega.Equal(baseline), "and stops counting them")
	})
})

var _ = framework.Describe("With DRAAdminAccess on in kube-apiserver only", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("api-only")
	inProfile(f, "apiserver-only")

	ginkgo.It("stores admin-access claims and templates, while kube-controller-manager makes no claim from the template and kube-scheduler allocates no admin claim; ordinary pods still run", ginkgo.Label("skew"), func(ctx context.Context) {
		kep("every component checks the gate: an apiserver alone cannot grant admin access")
		requireGateSwitching(ctx)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeTrue(), "kube-apiserver (gate on) keeps the field")
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(tmpl.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess).To(gomega.HaveValue(gomega.BeTrue()))

		ginkgo.By("kube-controller-manager: the template's pod gets no claim, and is told why")
		fromTemplate, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, fromTemplate, allocateTimeout, controllerGateOffEvent(tmpl))

		ginkgo.By("kube-scheduler: the claim's pod is not scheduled, with the allocator's admin-access error")
		withClaim, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		want := env.Rel.SchedulerGateOffMessage(f.Namespace.Name, claim.Name, builder.RequestName)
		expectPodEvent(ctx, withClaim, allocateTimeout, failedScheduling(want))
		expectStaysUnallocated(ctx, b, "a scheduler without the gate never allocates admin access", claim.Name)
		gomega.Expect(claimsIn(ctx, f.Namespace.Name)).To(gomega.HaveLen(1), "only the claim made by hand exists")
		for _, p := range []*corev1.Pod{fromTemplate, withClaim} {
			gomega.Expect(snapshot(ctx, p).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", p.Name)
		}

		ginkgo.By("an ordinary claim is allocated and its pod runs")
		_, _, vars := runOn(ctx, b, anyWorker(ctx))
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))
	})
})

var _ = framework.Describe("With DRAAdminAccess off in kube-apiserver only", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("api-off")

	ginkgo.It("drops adminAccess from new claims and templates, so what they ask for a device in use is not satisfied, while objects that had the field keep it", ginkgo.Label("skew"), func(ctx context.Context) {
		kep("an apiserver without the gate drops the field from new objects and keeps it on existing ones")
		ginkgo.AddReportEntry(report.ProfileEntry, "apiserver-off", ginkgo.ReportEntryVisibilityNever)
		requireGateSwitching(ctx)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		node := anyWorker(ctx)
		holder, _, _ := runOn(ctx, b, node, builder.DeviceIndex(3))
		existing, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err)
		existingTmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err)
		ginkgo.DeferCleanup(moveTo, env.Prof.Name, ginkgo.NodeTimeout(restoreTimeout))
		moveTo(ctx, "apiserver-off")

		ginkgo.By("a new admin-access claim loses the field without an error")
		fresh, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "the release drops the field silently")
		gomega.Expect(observe.RequestsAdminAccess(fresh)).To(gomega.BeFalse(), "stored without adminAccess")
		pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(fresh)), node))
		framework.ExpectNoError(err)
		waiting := []waitingPod{{pod, fresh.Name}}

		ginkgo.By("a new admin-access template loses the field the same way")
		freshTmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "the release drops the field silently")
		gomega.Expect(observe.RequestsAdminAccessFields(freshTmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"unset"}), "template %s's requests[].adminAccess as stored", freshTmpl.Name)

		ginkgo.By("the field goes before any label is looked at: in a namespace without the label both are stored, without it")
		bare, err := f.CreateNamespace(ctx, "api-off-unlabelled", nil)
		framework.ExpectNoError(err)
		ub := newBuilder(f)
		ub.Namespace = bare.Name
		unlabelledClaim, err := ub.CreateClaim(ctx, ub.Claim(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "an admin-access claim in namespace %s, which has no %s label, with kube-apiserver's gate off", bare.Name, env.Rel.AdminLabel)
		gomega.Expect(observe.RequestsAdminAccessFields(unlabelledClaim.Spec.Devices)).To(gomega.Equal([]string{"unset"}), "claim %s's requests[].adminAccess as stored", unlabelledClaim.Name)
		unlabelledTmpl, err := ub.CreateTemplate(ctx, ub.Template(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "an admin-access template in namespace %s, which has no %s label, with kube-apiserver's gate off", bare.Name, env.Rel.AdminLabel)
		gomega.Expect(observe.RequestsAdminAccessFields(unlabelledTmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"unset"}), "template %s's requests[].adminAccess as stored", unlabelledTmpl.Name)

		ginkgo.By("pods from either template get ordinary claims: the old template keeps the field, but the claim made from it is a new object")
		for _, tmpl := range []*resourceapi.ResourceClaimTemplate{freshTmpl, existingTmpl} {
			p, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.FromTemplate(tmpl)), node))
			framework.ExpectNoError(err)
			podsWithClaims(ctx, []*corev1.Pod{p})
			made := podClaimName(ctx, p)
			claim, err := b.GetClaim(ctx, made)
			framework.ExpectNoError(err)
			gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeFalse(), "claim %s made from template %s is stored without adminAccess", made, tmpl.Name)
			waiting = append(waiting, waitingPod{p, made})
		}

		ginkgo.By("none of these ordinary claims gets the device in use, and their pods wait")
		expectUnschedulable(ctx, b, fmt.Sprintf("as ordinary claims they cannot have the device %s holds", holder.Name), waiting...)

		ginkgo.By("the objects made before keep the field, also through an update")
		storedTmpl, err := b.DRA.ResourceClaimTemplates(existingTmpl.Namespace).Get(ctx, existingTmpl.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccessFields(storedTmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"true"}), "template %s, made with the gate on, as stored", storedTmpl.Name)
		stored, err := b.GetClaim(ctx, existing.Name)
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(stored)).To(gomega.BeTrue(), "claim %s, stored while the gate was on, must keep adminAccess", stored.Name)
		stored.Labels = map[string]string{"touched": "yes"}
		updated, err := env.DRA.ResourceClaims(stored.Namespace).Update(ctx, stored, metav1.UpdateOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(updated)).To(gomega.BeTrue(), "an existing value survives updates")
	})
})

var _ = framework.Describe("Turning DRAAdminAccess off and on again", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), ginkgo.Label("toggle"), func() {
	f := newFramework("toggle")

	ginkgo.It("keeps admin-access pods running across off and on in apiserver, controller-manager and scheduler, and schedules the pods kept Pending once it is back", func(ctx context.Context) {
		kep("disabling and re-enabling the feature never breaks running workloads (rollout and rollback)")
		requireGateSwitching(ctx)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		running, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		gomega.Expect(expectRunning(ctx, b, running)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		before := snapshot(ctx, running)

		ginkgo.DeferCleanup(moveTo, env.Prof.Name, ginkgo.NodeTimeout(restoreTimeout))
		moveToProfile(ctx, controlPlaneOff())
		expectUndisturbed(ctx, running, before)

		ginkgo.By("while off: new admin-access claims lose the field, and template pods wait")
		fresh, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(fresh)).To(gomega.BeFalse())
		// The template was stored while the gate was on and keeps its field.
		waiting, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, waiting, allocateTimeout, controllerGateOffEvent(tmpl))
		gomega.Expect(snapshot(ctx, waiting).Phase).To(gomega.Equal(corev1.PodPending))

		ginkgo.By("back on: the waiting pod gets its claim and runs; the first pod never noticed")
		moveTo(ctx, env.Prof.Name)
		gomega.Expect(expectRunning(ctx, b, waiting)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		expectUndisturbed(ctx, running, before)
	})
})

var _ = framework.Describe("A release where DRAAdminAccess is locked on", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), ginkgo.Label("upgrade"), func() {
	f := newFramework("locked")
	ginkgo.It("refuses to start kube-apiserver, kube-controller-manager and kube-scheduler with DRAAdminAccess=false, as GA intends, and the cluster is healthy once the flag is taken back", func(ctx context.Context) {
		kep("GA: the gate is locked on and cannot be disabled")
		require(ctx, release.NeedGateLock, nil)
		off := map[profile.Component]bool{}
		for _, c := range profile.ControlPlane {
			off[c] = false
		}
		ginkgo.DeferCleanup(func(ctx context.Context) {
			// Back to the locked value, which every component accepts.
			on := map[profile.Component]bool{}
			for c := range off {
				on[c] = true
			}
			_, err := env.Cluster.SetStaticPodGates(ctx, on)
			framework.ExpectNoError(err, "restoring the control plane with DRAAdminAccess=true")
		})
		framework.ExpectNoError(env.Cluster.WriteStaticPodGates(ctx, off), "restarting the control plane with DRAAdminAccess=false")
		for _, c := range profile.ControlPlane {
			// Each look is a command on the node (a docker exec, about 0.2 s).
			gomega.Eventually(ctx, func() string { return env.Cluster.ComponentLog(c) }).
				WithTimeout(2*time.Minute).WithPolling(time.Second).Should(gomega.ContainSubstring(env.Rel.LockedGateError()),
				"%s must refuse the flag and say why", c)
			framework.Logf("%s refused DRAAdminAccess=false as expected: %s", c, strings.TrimSpace(env.Cluster.ComponentLog(c)))
		}

		ginkgo.By("taking the flag back: every component runs again and admin access works end to end")
		start := time.Now()
		took, err := env.Cluster.SetStaticPodGates(ctx, map[profile.Component]bool{profile.APIServer: true, profile.ControllerManager: true, profile.Scheduler: true})
		for c, d := range took {
			recordStep(timeline.Step{Kind: timeline.KindMove, Name: fmt.Sprintf("%s back from a refused %s=false", c, release.Gate), Started: start, Seconds: d.Seconds()})
		}
		framework.ExpectNoError(err, "restoring the control plane")
		settle(ctx, "the control plane's restart with the flag taken back")
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(tmpl.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess).To(gomega.HaveValue(gomega.BeTrue()), "kube-apiserver keeps adminAccess")
		pod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		gomega.Expect(expectRunning(ctx, b, pod)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"),
			"kube-controller-manager made the claim and kube-scheduler allocated it with admin access")
	})
})
