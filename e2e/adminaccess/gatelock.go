// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The release where the gate is locked on: components refuse it off (the move
// helpers are in gatemoves.go).

var _ = framework.Describe("A release where DRAAdminAccess is locked on", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), ginkgo.Label("lock"), func() {
	f := newFramework("locked")
	it("refuses to start the control plane with DRAAdminAccess=false, and is healthy once the flag goes", kep("GA: the gate is locked on and cannot be disabled"), func(ctx context.Context) {
		e := envOf(ctx)
		require(ctx, release.NeedGateLock, nil)
		off := map[profile.Component]bool{}
		for _, c := range profile.ControlPlane {
			off[c] = false
		}
		ginkgo.DeferCleanup(inEnv(func(ctx context.Context) {
			// Back to the locked value, which every component accepts.
			on := map[profile.Component]bool{}
			for c := range off {
				on[c] = true
			}
			_, err := e.Cluster.SetStaticPodGates(ctx, on)
			framework.ExpectNoError(err, "restoring the control plane with DRAAdminAccess=true")
		}))
		framework.ExpectNoError(e.Cluster.WriteStaticPodGates(ctx, off), "restarting the control plane with DRAAdminAccess=false")
		for _, c := range profile.ControlPlane {
			// Each look is a command on the node (a docker exec, about 0.2 s).
			gomega.Eventually(ctx, func() string { return e.Cluster.ComponentLog(c) }).
				WithTimeout(2*time.Minute).WithPolling(time.Second).Should(gomega.ContainSubstring(e.Rel.GateOffError()),
				"%s must refuse the flag and say why", c)
			framework.Logf("%s refused DRAAdminAccess=false as expected: %s", c, strings.TrimSpace(e.Cluster.ComponentLog(c)))
		}

		ginkgo.By("taking the flag back: every component runs again and admin access works end to end")
		start := time.Now()
		took, err := e.Cluster.SetStaticPodGates(ctx, map[profile.Component]bool{profile.APIServer: true, profile.ControllerManager: true, profile.Scheduler: true})
		for c, d := range took {
			recordStep(timeline.Step{Kind: timeline.KindMove, Name: fmt.Sprintf("%s back from a refused %s=false", c, release.Gate), Started: start, Seconds: d.Seconds()})
		}
		framework.ExpectNoError(err, "restoring the control plane")
		settle(ctx, "the control plane's restart with the flag taken back")
		b := newBuilder(ctx, f)
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
