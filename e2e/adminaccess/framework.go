// SPDX-License-Identifier: Apache-2.0

package adminaccess

// Every spec's frame: its namespace and hooks, the builder, the bounds of
// its waits.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
)

// Every wait in the suite is bounded by one of these.
const (
	podStartTimeout = 2 * time.Minute
	allocateTimeout = time.Minute
	// logTimeout bounds the wait for a component's log to show a line for
	// something the API already shows (the event came from the same attempt).
	logTimeout = 30 * time.Second
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
	// The skip is taken when the spec's body records its requirement
	// (recordKEP, the first call of every spec's body), so that the
	// sign-off counts the requirement as out of reach, not as one no spec
	// ran for.
	ginkgo.BeforeEach(inEnv(func(ctx context.Context) { requireAtKEP(ctx, release.NeedBundledDriver) }))
	return f
}

// newAnyDriverFramework is newFramework for a group whose specs hold for
// any driver (see driverview.go); a spec in it that reads the bundled
// driver's contract calls requireBundledDriver itself.
func newAnyDriverFramework(name string) *framework.Framework {
	// Before the framework's own BeforeEach (it makes the namespace): a
	// spec that would start on a cluster broken under the run fails at once.
	ginkgo.BeforeEach(failIfBroken)
	f := framework.NewDefaultFramework(name)
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged
	// The framework calls this for each namespace it made, on failure and
	// before deleting them. (Its own dump, framework/debug, would bring
	// kubectl and the apiextensions server into the suite's build.)
	f.DumpAllNamespaceInfo = dumpNamespace
	ginkgo.AfterEach(inEnv(func(ctx context.Context) {
		if r := ginkgo.CurrentSpecReport(); r.Failed() {
			saveFailureArtifacts(ctx, r)
		}
		recordProgress()
	}))
	return f
}

func newBuilder(ctx context.Context, f *framework.Framework) *builder.Builder {
	return builderIn(ctx, f.Namespace.Name, f.ClientSet)
}

// builderIn is newBuilder for a namespace the spec's framework did not
// make (one a group makes before its specs start).
func builderIn(ctx context.Context, namespace string, client kubernetes.Interface) *builder.Builder {
	e := envOf(ctx)
	b := &builder.Builder{
		Namespace: namespace, Class: deviceClass(e), DriverName: e.Driver.DriverName,
		Image: e.Driver.Image, Client: client, DRA: e.DRA, SchedulerName: specScheduler,
	}
	if e.Vendor != nil {
		b.Command, b.AnyTaint = e.Vendor.WorkloadCommand, true
	}
	return b
}

// privilegedNamespace creates a namespace named from generateName, outside
// any spec's framework, whose pods may run privileged (as the framework's
// namespaces of this suite may), with labels besides.
func privilegedNamespace(ctx context.Context, generateName string, labels map[string]string) (*corev1.Namespace, error) {
	e := envOf(ctx)
	all := map[string]string{admissionapi.EnforceLevelLabel: string(admissionapi.LevelPrivileged)}
	for k, v := range labels {
		all[k] = v
	}
	return e.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: generateName, Labels: all}}, metav1.CreateOptions{})
}

// setNamespaceLabel sets (or with value nil, removes) one label of a namespace.
func setNamespaceLabel(ctx context.Context, ns, key string, value *string) {
	e := envOf(ctx)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: value}}})
	_, err := e.Client.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{})
	framework.ExpectNoError(err, "labelling namespace %s", ns)
}

// labelForAdmin is what a cluster admin does to let a namespace use admin access.
func labelForAdmin(ctx context.Context, ns string) {
	e := envOf(ctx)
	v := "true"
	setNamespaceLabel(ctx, ns, e.Rel.AdminLabel, &v)
}

func str(s string) *string { return &s }
