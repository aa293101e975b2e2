package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	gtypes "github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
)

// Every wait in the suite is bounded by one of these.
const (
	podStartTimeout = 2 * time.Minute
	allocateTimeout = time.Minute
	// podDeleteTimeout bounds the wait for a group's pods and claims to be
	// gone (the kubelet unprepares, the controller deallocates).
	podDeleteTimeout = 2 * time.Minute
	// stableFor is how long "nothing more happens" is watched (no claim made,
	// no extra count, no churn): nothing cumulative records a late mistake,
	// so the window must outlast a controller's or scheduler's retry.
	stableFor = 15 * time.Second
	// restoreTimeout bounds a cleanup that puts the cluster back (a gate
	// move, a feature-set move, a release switch), also after an interrupt,
	// when Ginkgo would otherwise give it only its grace period.
	restoreTimeout = 4 * time.Minute
	// undisturbedFor is how long running pods are watched after a change.
	// Shorter: a pod's UID and restart count are cumulative, so a disruption
	// after the watch still fails the spec's next check of the same pods,
	// and a kubelet acts on its pods within seconds of a change.
	undisturbedFor = 5 * time.Second

	// poll is how often Eventually and Consistently look, in place of the
	// framework's 2 s: a wait ends on average half a poll after what it
	// waits for happened, and most of a run is waits, one after another
	// (1.35 with the upgrade: 10m30s-11m04s before, 9m42s-10m03s after).
	// Each look is one or two reads, which the client's 50 QPS carries easily.
	poll = 250 * time.Millisecond
)

// newFramework gives each spec its own namespace. Pods here need no special
// privileges, but the suite does not test Pod Security: privileged avoids
// mixing its verdicts into ours.
//
// It also registers the per-spec hooks. They must live in each container:
// the framework previews the specs at start-up (ginkgo.PreviewSpecs), after
// which Ginkgo no longer runs AfterEach or ReportAfterEach nodes registered
// at the top level of the suite. The framework's own namespace deletion is a
// DeferCleanup, so these run while the spec's namespace still exists.
func newFramework(name string) *framework.Framework {
	f := newAnyDriverFramework(name)
	// Every group but those that hold for any driver reads the bundled
	// driver's contract; with a driver of the user's own, each of its specs
	// is the declared skip of that need.
	ginkgo.BeforeEach(requireBundledDriver)
	return f
}

// newAnyDriverFramework is newFramework for a group whose specs hold for
// any driver (see driverview_test.go); a spec in it that reads the bundled
// driver's contract calls requireBundledDriver itself.
func newAnyDriverFramework(name string) *framework.Framework {
	f := framework.NewDefaultFramework(name)
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged
	// The framework calls this for each namespace it made, on failure and
	// before deleting them. (Its own dump, framework/debug, would bring
	// kubectl and the apiextensions server into the suite's build.)
	f.DumpAllNamespaceInfo = dumpNamespace
	ginkgo.AfterEach(func(ctx context.Context) {
		if r := ginkgo.CurrentSpecReport(); r.Failed() && env != nil {
			saveFailureArtifacts(ctx, r)
		}
		recordProgress()
	})
	return f
}

func newBuilder(f *framework.Framework) *builder.Builder {
	b := &builder.Builder{
		Namespace: f.Namespace.Name, Class: env.Driver.DeviceClass, DriverName: env.Driver.DriverName,
		Image: env.Driver.Image, Client: f.ClientSet, DRA: env.DRA,
	}
	if env.Vendor != nil {
		b.Command, b.AnyTaint = env.Vendor.WorkloadCommand, true
	}
	return b
}

// setNamespaceLabel sets (or with value nil, removes) one label of a namespace.
func setNamespaceLabel(ctx context.Context, ns, key string, value *string) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: value}}})
	_, err := env.Client.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{})
	framework.ExpectNoError(err, "labelling namespace %s", ns)
}

// labelForAdmin is what a cluster admin does to let a namespace use admin access.
func labelForAdmin(ctx context.Context, ns string) {
	v := "true"
	setNamespaceLabel(ctx, ns, env.Rel.AdminLabel, &v)
}

func str(s string) *string { return &s }

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
	var envs map[string]map[string]string
	gomega.Eventually(ctx, func(ctx context.Context) error {
		p, err := b.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s (node %q) is %s: %s", pod.Name, p.Spec.NodeName, p.Status.Phase, podConditions(p))
		}
		got := map[string]map[string]string{}
		for _, c := range p.Spec.Containers {
			if env.Vendor != nil {
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
	p, err := env.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
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
	p, err := env.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
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
	list, err := env.Client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
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

func failureMarker() string { return filepath.Join(cfg.Artifacts, ".failed") }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// failureDir is where a failed spec's artifacts go.
func failureDir(report ginkgo.SpecReport) string {
	dir := filepath.Join(cfg.Artifacts, "failures", unsafeName.ReplaceAllString(report.FullText(), "_"))
	if len(dir) > 200 {
		dir = dir[:200]
	}
	return dir
}

// dumpNamespace writes what a failed spec's namespace held: every pod's
// phase, conditions and container states, each container's log, and the
// namespace's events, into namespace-<name>.txt of the spec's failure folder.
func dumpNamespace(ctx context.Context, f *framework.Framework, ns string) {
	dir := failureDir(ginkgo.CurrentSpecReport())
	os.MkdirAll(dir, 0o755)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out strings.Builder
	pods, err := f.ClientSet.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&out, "listing pods: %v\n", err)
	} else {
		for _, p := range pods.Items {
			fmt.Fprintf(&out, "===== pod %s on %q: %s; %s\n", p.Name, p.Spec.NodeName, p.Status.Phase, podConditions(&p))
			for _, cs := range p.Status.ContainerStatuses {
				fmt.Fprintf(&out, "container %s: ready=%t restarts=%d state=%+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State)
			}
			for _, c := range p.Spec.Containers {
				raw, err := f.ClientSet.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
				fmt.Fprintf(&out, "----- log of %s (err: %v)\n%s\n", c.Name, err, raw)
			}
		}
	}
	out.WriteString("===== events\n")
	if list, err := f.ClientSet.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err != nil {
		fmt.Fprintf(&out, "listing events: %v\n", err)
	} else {
		for _, e := range list.Items {
			out.WriteString(eventLine(e) + "\n")
		}
	}
	os.WriteFile(filepath.Join(dir, "namespace-"+ns+".txt"), []byte(out.String()), 0o644)
}

// eventLine is one event as the failure artifacts write it.
func eventLine(e corev1.Event) string {
	return fmt.Sprintf("%s %s/%s/%s %s %s (x%d): %s", e.LastTimestamp.Format(time.RFC3339), e.Namespace, e.InvolvedObject.Kind,
		e.InvolvedObject.Name, e.Type, e.Reason, e.Count, e.Message)
}

// saveFailureArtifacts keeps, for a failed spec, the cluster's events of its
// time and the driver's logs, and marks the run failed so the cluster's logs
// are kept.
func saveFailureArtifacts(ctx context.Context, report ginkgo.SpecReport) {
	dir := failureDir(report)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(failureMarker(), []byte(report.FullText()+"\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var events []string
	if list, err := env.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range list.Items {
			if e.LastTimestamp.Time.After(report.StartTime.Add(-time.Minute)) || e.EventTime.Time.After(report.StartTime.Add(-time.Minute)) {
				events = append(events, eventLine(e))
			}
		}
	}
	sort.Strings(events)
	os.WriteFile(filepath.Join(dir, "events.txt"), []byte(strings.Join(events, "\n")+"\n"), 0o644)
	saveDriverLogs(ctx, filepath.Join(dir, "testdriver.log"))
}

// saveDriverLogs writes every driver pod's log into one file.
func saveDriverLogs(ctx context.Context, path string) {
	pods, err := env.Client.CoreV1().Pods(env.Driver.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	var out strings.Builder
	for _, p := range pods.Items {
		raw, err := env.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		fmt.Fprintf(&out, "===== %s on %s (err: %v)\n%s\n", p.Name, p.Spec.NodeName, err, raw)
	}
	os.WriteFile(path, []byte(out.String()), 0o644)
}

// expectPodEvent waits until the pod has an event matching event ("Type
// Reason: message", or a matcher of that string).
func expectPodEvent(ctx context.Context, pod *corev1.Pod, timeout time.Duration, event any, description ...any) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, func(ctx context.Context) []string { return podEvents(ctx, pod) }).WithTimeout(timeout).
		Should(gomega.ContainElement(event), description...)
}

// controllerGateOffEvent is the event kube-controller-manager without the gate
// puts on a pod whose claim would come from tmpl.
func controllerGateOffEvent(tmpl *resourceapi.ResourceClaimTemplate) string {
	return "Warning " + release.ControllerGateOffReason + ": " + env.Rel.ControllerGateOffMessage("c-"+tmpl.Name)
}

// failedScheduling matches kube-scheduler's event for a pod it could not
// place, whose message says what.
func failedScheduling(says string) gtypes.GomegaMatcher {
	return gomega.And(gomega.HavePrefix("Warning FailedScheduling: "), gomega.ContainSubstring(says))
}

// saveClusterRecord keeps, on every run, the small part of the cluster's
// logs a reader of a green run may still want: each kube-system pod's
// current log (the control plane's components, kube-proxy, CoreDNS) and
// every event the cluster still holds, under dir. A failed run also gets
// kind's whole export (testenv.Teardown).
func saveClusterRecord(ctx context.Context, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	if pods, err := env.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				raw, err := env.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
				if err != nil {
					raw = []byte("reading the log: " + err.Error() + "\n")
				}
				os.WriteFile(filepath.Join(dir, p.Name+"_"+c.Name+".log"), raw, 0o644)
			}
		}
	}
	events, err := env.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	var out strings.Builder
	for _, e := range events.Items {
		fmt.Fprintf(&out, "%s %s %s/%s %s %s: %s\n", e.LastTimestamp.UTC().Format(time.RFC3339), e.Type,
			e.InvolvedObject.Kind, e.Namespace+"/"+e.InvolvedObject.Name, e.Source.Component, e.Reason, e.Message)
	}
	os.WriteFile(filepath.Join(dir, "events.txt"), []byte(out.String()), 0o644)
}
