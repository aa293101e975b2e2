// SPDX-License-Identifier: Apache-2.0

package adminaccess

// What specs do with pods, whichever group made them: start one on a node
// with a claim, from a template or as a DaemonSet's, expect it running,
// undisturbed or refused by kube-scheduler, wait for the claims
// kube-controller-manager makes for it, read its claims, conditions and
// events, delete it.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	gtypes "github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
)

// expectRunning waits until the pod runs and its workload printed its
// environment, and returns that environment.
func expectRunning(ctx context.Context, b *builder.Builder, pod *corev1.Pod) map[string]string {
	ginkgo.GinkgoHelper()
	return expectContainersRunning(ctx, b, pod)[builder.WorkloadContainer]
}

// expectContainersRunning waits until the pod runs and every container's
// workload printed its environment, and returns each container's.
func expectContainersRunning(ctx context.Context, b *builder.Builder, pod *corev1.Pod) map[string]map[string]string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	var envs map[string]map[string]string
	// Ended by a break (clusterbreaks.go); the message reads ctx, not ended.
	wait, done := untilBroken(ctx)
	defer done()
	gomega.Eventually(wait, func(ctx context.Context) error {
		p, err := b.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s (node %q) is %s: %s", pod.Name, p.Spec.NodeName, p.Status.Phase, podConditions(p))
		}
		got := map[string]map[string]string{}
		for _, c := range p.Spec.Containers {
			if e.Vendor != nil {
				// The user's driver promises no variables to read.
				got[c.Name] = map[string]string{}
				continue
			}
			vars, ready, err := observe.ContainerEnv(ctx, b.Client, b.Namespace, pod.Name, c.Name)
			if err != nil {
				return err
			}
			if !ready {
				return fmt.Errorf("pod %s runs but the workload of container %s has not printed its environment yet", pod.Name, c.Name)
			}
			got[c.Name] = vars
		}
		envs = got
		return nil
	}).WithTimeout(podStartTimeout).Should(gomega.Succeed(), func() string {
		// Read once, on failure: what the cluster said of the pod names the
		// component that did not act.
		return fmt.Sprintf("pod %s should run; its last events: %v", pod.Name, lastOf(podEvents(ctx, pod), 5))
	})
	return envs
}

// podClaimName is the claim behind a pod's single resourceClaims entry: the
// one it names, or the one the controller made from its template.
func podClaimName(ctx context.Context, pod *corev1.Pod) string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	p, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	gomega.Expect(p.Spec.ResourceClaims).To(gomega.HaveLen(1), "pod %s", pod.Name)
	name := p.Spec.ResourceClaims[0].ResourceClaimName
	for _, st := range p.Status.ResourceClaimStatuses {
		if st.Name == p.Spec.ResourceClaims[0].Name && st.ResourceClaimName != nil {
			name = st.ResourceClaimName
		}
	}
	gomega.Expect(name).NotTo(gomega.BeNil(), "pod %s has no claim yet", pod.Name)
	return *name
}

// podClaim is that claim once it is allocated.
func podClaim(ctx context.Context, b *builder.Builder, pod *corev1.Pod) *resourceapi.ResourceClaim {
	ginkgo.GinkgoHelper()
	return allocatedClaim(ctx, b, podClaimName(ctx, pod))
}

func podConditions(p *corev1.Pod) string {
	var parts []string
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil {
			parts = append(parts, fmt.Sprintf("container %s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// podSnapshot is what "undisturbed" compares: the same pod, running, never restarted.
type podSnapshot struct {
	UID      types.UID
	Phase    corev1.PodPhase
	Restarts int32
}

func snapshot(ctx context.Context, pod *corev1.Pod) podSnapshot {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	p, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	s := podSnapshot{UID: p.UID, Phase: p.Status.Phase}
	for _, cs := range p.Status.ContainerStatuses {
		s.Restarts += cs.RestartCount
	}
	return s
}

// expectUndisturbed checks over a watched interval that the pod stays the
// same running pod with no restarts.
func expectUndisturbed(ctx context.Context, pod *corev1.Pod, before podSnapshot) {
	ginkgo.GinkgoHelper()
	expectAllUndisturbed(ctx, []*corev1.Pod{pod}, []podSnapshot{before})
}

// expectAllUndisturbed watches several pods over one interval.
func expectAllUndisturbed(ctx context.Context, pods []*corev1.Pod, before []podSnapshot) {
	ginkgo.GinkgoHelper()
	gomega.Consistently(ctx, func(ctx context.Context) []podSnapshot {
		now := make([]podSnapshot, len(pods))
		for i, p := range pods {
			now[i] = snapshot(ctx, p)
		}
		return now
	}).WithTimeout(undisturbedFor).Should(gomega.Equal(before), "every pod should stay running, same UID, no restarts")
}

// podEvents lists "reason: message" of the events of one pod.
func podEvents(ctx context.Context, pod *corev1.Pod) []string {
	e := envOf(ctx)
	list, err := e.Client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod.Name})
	if err != nil {
		return []string{err.Error()}
	}
	// Oldest first, so that the last entries are the latest word.
	sort.SliceStable(list.Items, func(i, j int) bool { return eventTime(list.Items[i]).Before(eventTime(list.Items[j])) })
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Type+" "+e.Reason+": "+e.Message)
	}
	return out
}

// eventTime is when an event was last seen, whichever API recorded it.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// lastOf is the last n entries of list.
func lastOf(list []string, n int) []string {
	if len(list) > n {
		return list[len(list)-n:]
	}
	return list
}

// expectPodEvent waits until the pod has an event matching event ("Type
// Reason: message", or a matcher of that string).
func expectPodEvent(ctx context.Context, pod *corev1.Pod, timeout time.Duration, event any, description ...any) {
	ginkgo.GinkgoHelper()
	ctx, done := untilBroken(ctx)
	defer done()
	gomega.Eventually(ctx, func(ctx context.Context) []string { return podEvents(ctx, pod) }).WithTimeout(timeout).
		Should(gomega.ContainElement(event), description...)
}

// controllerGateOffEvent is the event kube-controller-manager without the gate
// puts on a pod whose claim would come from tmpl.
func controllerGateOffEvent(rel release.Release, tmpl *resourceapi.ResourceClaimTemplate) string {
	return "Warning " + release.ControllerGateOffReason + ": " + rel.ControllerGateOffMessage("c-"+tmpl.Name)
}

// claimCreationDenied matches kube-controller-manager's event on a pod whose
// claim from tmpl kube-apiserver denied admin access.
func claimCreationDenied(rel release.Release, tmpl *resourceapi.ResourceClaimTemplate) gtypes.GomegaMatcher {
	return gomega.And(gomega.HavePrefix(fmt.Sprintf("Warning FailedResourceClaimCreation: PodResourceClaim c-%s: ", tmpl.Name)),
		gomega.ContainSubstring(rel.AdminAccessFieldPath(0)+": Forbidden: "+rel.AdminAccessDenial()))
}

// failedScheduling matches kube-scheduler's event for a pod it could not
// place, whose message says what.
func failedScheduling(says string) gtypes.GomegaMatcher {
	return gomega.And(gomega.HavePrefix("Warning FailedScheduling: "), gomega.ContainSubstring(says))
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

// deletePod deletes a pod and waits until it is gone, so its claims are no
// longer reserved for it.
func deletePod(ctx context.Context, pod *corev1.Pod) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	framework.ExpectNoError(e.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
	gomega.Eventually(ctx, func(ctx context.Context) error {
		_, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return err
	}).WithTimeout(podStartTimeout).Should(gomega.Satisfy(apierrors.IsNotFound), "pod %s is gone", pod.Name)
}

// waitingPod is a pending pod and the claim it waits for.
type waitingPod struct {
	pod   *corev1.Pod
	claim string
}

// expectUnschedulable first waits for kube-scheduler's verdict on each pod
// (its DynamicResources plugin could not allocate the claim on any node) and
// only then watches the claims stay unallocated: a claim the scheduler has
// not looked at yet would stay unallocated for any reason. The claims are
// watched together, so that several cost one window.
func expectUnschedulable(ctx context.Context, b *builder.Builder, why string, waiting ...waitingPod) {
	ginkgo.GinkgoHelper()
	var claims []string
	var pods []*corev1.Pod
	for _, w := range waiting {
		expectCannotAllocate(ctx, w.pod)
		claims, pods = append(claims, w.claim), append(pods, w.pod)
	}
	expectHeldThroughRetry(ctx, b, why, pods, claims...)
	for _, w := range waiting {
		gomega.Expect(snapshot(ctx, w.pod).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", w.pod.Name)
	}
}

// expectHeldThroughRetry is expectStaysUnallocated for claims whose pods
// kube-scheduler turned away: where its log is in reach, the window must
// also hold through another attempt for each pod, more of its "Starting
// allocation" lines after the window than before it (expectTriedAgain).
func expectHeldThroughRetry(ctx context.Context, b *builder.Builder, why string, pods []*corev1.Pod, claims ...string) {
	ginkgo.GinkgoHelper()
	if !nodesReachable(envOf(ctx)) {
		expectStaysUnallocated(ctx, b, why, claims...)
		return
	}
	before := map[string]int{}
	for _, p := range pods {
		before[p.Name] = allocationAttempts(ctx, b, p)
	}
	expectStaysUnallocated(ctx, b, why, claims...)
	for _, p := range pods {
		expectTriedAgain(ctx, b, p, before[p.Name])
	}
}

// allocationAttempts counts the allocations the kube-scheduler that b's
// pods name has begun for pod ("Starting allocation", one per node it
// filters, each attempt).
func allocationAttempts(ctx context.Context, b *builder.Builder, pod *corev1.Pod) int {
	ginkgo.GinkgoHelper()
	n := 0
	for _, l := range observe.AllocatorLinesFor(schedulerLogOf(ctx, schedulerPod(ctx, b.SchedulerName), pod.CreationTimestamp), pod.Namespace+"/"+pod.Name) {
		if l.Message == observe.StartingAllocation {
			n++
		}
	}
	return n
}

// expectTriedAgain waits, bounded, until kube-scheduler has begun more
// allocations for pod than before: the window that watched its claim stay
// unallocated held through a new attempt (retryScheduling).
func expectTriedAgain(ctx context.Context, b *builder.Builder, pod *corev1.Pod, before int) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, func(ctx context.Context) int { return allocationAttempts(ctx, b, pod) }).WithTimeout(logTimeout).
		Should(gomega.BeNumerically(">", before),
			"kube-scheduler's allocations begun for pod %s (\"Starting allocation\" lines): %d before the window, in which a DeviceClass was added to make it try again; the window must hold through an attempt", pod.Name, before)
}

// expectCannotAllocate waits for kube-scheduler's verdict on pod: its
// DynamicResources plugin could not allocate the pod's claims on any node.
func expectCannotAllocate(ctx context.Context, pod *corev1.Pod) {
	ginkgo.GinkgoHelper()
	expectPodEvent(ctx, pod, allocateTimeout, failedScheduling("cannot allocate all claims"),
		"kube-scheduler's verdict on pod %s", pod.Name)
}

func startFromTemplate(ctx context.Context, b *builder.Builder, tmpl *resourceapi.ResourceClaimTemplate, n int) []*corev1.Pod {
	ginkgo.GinkgoHelper()
	var pods []*corev1.Pod
	for i := 0; i < n; i++ {
		pod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		pods = append(pods, pod)
	}
	return pods
}

// createDaemonSet runs, on every node (control plane included), a pod whose
// claim the controller makes from tmpl. Its pods carry the label app=name.
func createDaemonSet(ctx context.Context, b *builder.Builder, name string, tmpl *resourceapi.ResourceClaimTemplate, onNodes ...string) *appsv1.DaemonSet {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	spec := b.PodSpec(builder.FromTemplate(tmpl))
	builder.ToleratingAllTaints(&spec)
	if len(onNodes) > 0 { // only where the class has devices
		builder.OnNodes(&spec, onNodes...)
	}
	labels := map[string]string{"app": name}
	ds, err := e.Client.AppsV1().DaemonSets(b.Namespace).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	return ds
}

// podsWithClaims waits until the controller created each pod's claim.
func podsWithClaims(ctx context.Context, pods []*corev1.Pod) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	for _, pod := range pods {
		gomega.Eventually(ctx, func(ctx context.Context) ([]corev1.PodResourceClaimStatus, error) {
			p, err := e.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return p.Status.ResourceClaimStatuses, nil
		}).WithTimeout(allocateTimeout).Should(gomega.ContainElement(gomega.HaveField("ResourceClaimName", gomega.Not(gomega.BeNil()))),
			"the controller creates the claim of pod %s", pod.Name)
	}
}
