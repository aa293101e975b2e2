// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/expect"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The in-place upgrade: the suite's cluster (release N) gets the control-plane
// images and kubelets of release N+1, then those of N again, while admin-access
// workloads run. Where 1.34 renamed the namespace label, one namespace carries
// both keys (what the changelog tells admins to do before upgrading) and one
// only the old key; where it was not, the second namespace has no key at all.

// adminPod is a running pod whose claim asks for admin access, and its state
// before the switch.
type adminPod struct {
	pod    *corev1.Pod
	claim  string
	before podSnapshot
}

// It runs last of the Serial groups (SpecPriority below the default 0):
// the next release's bits may still be compiling beside the suite on a
// machine that had no node image of that release (measured on a fresh 2-core
// VM: ready 3m33s into the suite, while the upgrade spec, run first of the
// Serial groups by that run's seed, waited 96 s for them).
var _ = framework.Describe("Upgrading the control plane and kubelets in place to the next release and back", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), ginkgo.Label("upgrade"), ginkgo.SpecPriority(-1), func() {
	f := newFramework("upgrade")
	// Where both releases have partitionable devices by default (from
	// 1.36), a partitionable admin allocation goes through the switch too.
	parts := newFeatureDriver(contract.LayoutPartitionable, release.NeedPartitionableDevices)

	it("keeps admin-access pods running through every step, and authorizes by the running apiserver's label key", kep("upgrade and rollback never break running workloads; from 1.34 the namespace label is resource.kubernetes.io/admin-access"), func(ctx context.Context) {
		e := envOf(ctx)
		from := e.Rel
		requireUpgrade()
		up, down, err := releaseBits.wait(ctx)
		framework.ExpectNoError(err)
		to := up.Release

		renamed := from.AdminLabel != to.AdminLabel
		b := newBuilder(ctx, f)
		setNamespaceLabel(ctx, b.Namespace, from.AdminLabel, str("true"))
		setNamespaceLabel(ctx, b.Namespace, to.AdminLabel, str("true"))
		// The other namespace carries only the old key where it was renamed, and
		// no key otherwise: either way N+1 must refuse it admin access.
		otherLabels := map[string]string{}
		if renamed {
			otherLabels[from.AdminLabel] = "true"
		}
		ns, err := f.CreateNamespace(ctx, "upgrade-other", otherLabels)
		framework.ExpectNoError(err)
		other := *b
		other.Namespace = ns.Name

		node := anyWorker(ctx)
		ginkgo.By(fmt.Sprintf("on Kubernetes %s: an ordinary pod holds a device and admin-access pods watch it", from.Version))
		holder, _, _ := runOn(ctx, b, node, builder.DeviceIndex(0))
		running := []adminPod{startAdmin(ctx, b, node), {pod: holder, before: snapshot(ctx, holder)}}
		if renamed {
			running = append(running, startAdmin(ctx, &other, node))
		}
		var pb *builder.Builder
		if from.DefaultFeatures().Has(release.FeaturePartitionableDevices) && to.DefaultFeatures().Has(release.FeaturePartitionableDevices) {
			ginkgo.By("partitionable devices: an admin-access pod has the whole device, an ordinary pod one half of it")
			pb = parts.builder(ctx, f)
			wholePod, admin, vars := runOn(ctx, pb, node, whole, builder.AdminAccess())
			gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"), "pod %s", wholePod.Name)
			halfPod, _, _ := runOn(ctx, pb, node, half)
			running = append(running, adminPod{pod: wholePod, claim: admin.Name, before: snapshot(ctx, wholePod)}, adminPod{pod: halfPod, before: snapshot(ctx, halfPod)})
		}

		atFrom := true
		// A switch back takes 25-60 s, more when it starts mid-switch: after
		// an interrupt Ginkgo would give a cleanup without a NodeTimeout only
		// its grace period (30 s).
		ginkgo.DeferCleanup(inEnv(func(ctx context.Context) {
			if !atFrom {
				_, err := e.Cluster.SwitchRelease(ctx, down)
				framework.ExpectNoError(err, "restoring Kubernetes %s", from.Version)
			}
		}), ginkgo.NodeTimeout(restoreTimeout))

		ginkgo.By(fmt.Sprintf("upgrading the control plane, then the kubelets, to Kubernetes %s", up.Release.Version))
		atFrom = false
		switchRelease(ctx, up)
		expectUndisturbedAll(ctx, b, running)
		ginkgo.By("a new admin-access claim in the namespace with the new key is allowed and runs")
		running = append(running, startAdmin(ctx, b, node))
		ginkgo.By(fmt.Sprintf("a namespace without %s is refused new admin-access claims (where it had the old key, it keeps what it had)", to.AdminLabel))
		_, err = other.CreateClaim(ctx, other.Claim(builder.AdminAccess()))
		gomega.Expect(err).To(expect.MatchForbiddenAt(to.AdminAccessFieldPath(0), to.AdminAccessDenial()))
		if pb != nil {
			ginkgo.By(fmt.Sprintf("on %s the admin-access allocation of the whole device still uses no counters: the other half goes to an ordinary claim", to.Minor))
			otherHalf, _, _ := runOn(ctx, pb, node, builder.DeviceIndex(2))
			running = append(running, adminPod{pod: otherHalf, before: snapshot(ctx, otherHalf)})
		}

		ginkgo.By(fmt.Sprintf("downgrading the kubelets, then the control plane, to Kubernetes %s", down.Release.Version))
		switchRelease(ctx, down)
		atFrom = true
		expectUndisturbedAll(ctx, b, running)
		if renamed {
			ginkgo.By(fmt.Sprintf("back on %s, the namespace with only %s may make admin-access claims again", from.Minor, from.AdminLabel))
			startAdmin(ctx, &other, node)
		}
	})
})

// startAdmin runs a pod with an admin-access claim on node and checks the
// driver told it so.
func startAdmin(ctx context.Context, b *builder.Builder, node string) adminPod {
	ginkgo.GinkgoHelper()
	pod, claim, vars := runOn(ctx, b, node, builder.AdminAccess(), builder.DeviceIndex(0))
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"), "pod %s/%s", pod.Namespace, pod.Name)
	return adminPod{pod: pod, claim: claim.Name, before: snapshot(ctx, pod)}
}

// switchRelease moves the cluster and records each step's duration in the report.
func switchRelease(ctx context.Context, bits *nodesource.ReleaseBits) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	start := time.Now()
	from := e.Cluster.Release
	steps, err := e.Cluster.SwitchRelease(ctx, bits)
	framework.ExpectNoError(err)
	at := start
	for _, s := range steps {
		recordStep(timeline.Step{Kind: timeline.KindRelease, Name: fmt.Sprintf("%s -> %s: %s", from.Minor, bits.Release.Minor, s.Name), Started: at, Seconds: s.Took.Seconds()})
		at = at.Add(s.Took)
	}
	recordStep(timeline.Since(timeline.KindRelease, fmt.Sprintf("%s -> %s", from.Minor, bits.Release.Minor), start))
	v, err := e.Client.Discovery().ServerVersion()
	framework.ExpectNoError(err)
	gomega.Expect(v.GitVersion).To(gomega.Equal(bits.Release.GitVersion()), "the apiserver's version after the switch")
	settle(ctx, fmt.Sprintf("the switch to %s", bits.Release.Version))
}

// expectUndisturbedAll checks that every pod is the same running pod with no
// restarts and that each admin-access claim is still allocated with the flag.
func expectUndisturbedAll(ctx context.Context, b *builder.Builder, pods []adminPod) {
	ginkgo.GinkgoHelper()
	var watched []*corev1.Pod
	var before []podSnapshot
	for _, p := range pods {
		watched, before = append(watched, p.pod), append(before, p.before)
	}
	expectAllUndisturbed(ctx, watched, before)
	for _, p := range pods {
		if p.claim == "" {
			continue
		}
		pb := *b
		pb.Namespace = p.pod.Namespace
		claim := allocatedClaim(ctx, &pb, p.claim)
		gomega.Expect(observe.AdminAccessResults(claim)).To(gomega.Equal([]bool{true}), "claim %s/%s keeps its admin-access allocation", p.pod.Namespace, p.claim)
	}
}
