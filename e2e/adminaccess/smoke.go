// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
)

var _ = framework.Describe("The cluster under test", ginkgo.Label("smoke"), func() {
	f := newFramework("smoke")

	it("answers, serves the release's resource.k8s.io versions and reports the expected server version", kep("DRA must be served for admin access to exist (prerequisite)"), func(ctx context.Context) {
		e := envOf(ctx)
		v, err := e.Client.Discovery().ServerVersion()
		framework.ExpectNoError(err)
		gomega.Expect(v.Major+"."+strings.TrimSuffix(v.Minor, "+")).To(gomega.Equal(e.Rel.Minor), "server version %s", v.GitVersion)
		if e.Owned {
			// A cluster this suite built runs exactly the version of the node image it booted
			// (its /kind/version: the pinned patch when built offline, kind's patch when published).
			gomega.Expect(v.GitVersion).To(gomega.Equal(e.Rel.GitVersion()))
		}
		groups, err := e.Client.Discovery().ServerGroups()
		framework.ExpectNoError(err)
		var served []string
		preferred := ""
		for _, g := range groups.Groups {
			if g.Name == "resource.k8s.io" {
				for _, gv := range g.Versions {
					served = append(served, gv.Version)
				}
				preferred = g.PreferredVersion.Version
			}
		}
		for _, want := range e.Rel.Served {
			gomega.Expect(served).To(gomega.ContainElement(want), "resource.k8s.io versions served")
		}
		// The quota spec's reading of this release rests on it: the quota
		// controller watches claims at this version (ClaimQuotaMayMissDeletes).
		gomega.Expect(preferred).To(gomega.Equal(e.Rel.PreferredVersion()), "resource.k8s.io version discovery prefers")
	})

	it("runs a pod on a worker that resolves kubernetes.default and reads /version through the Service", kep("a working cluster (prerequisite)"), func(ctx context.Context) {
		e := envOf(ctx)
		// A worker where there is one; a single-node cluster's pod runs beside its control plane.
		worker := anyWorker(ctx)
		b := newBuilder(ctx, f)
		pod := b.Pod()
		pod.Spec.Containers[0].Command = []string{"/workload", "probe"}
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.NodeName = worker
		_, err := b.CreatePod(ctx, pod)
		framework.ExpectNoError(err)
		gomega.Eventually(ctx, func(ctx context.Context) (corev1.PodPhase, error) {
			p, err := b.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return p.Status.Phase, nil
		}).WithTimeout(podStartTimeout).Should(gomega.BeElementOf(corev1.PodSucceeded, corev1.PodFailed))
		logs, err := b.Client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		framework.ExpectNoError(err)
		v, err := e.Client.Discovery().ServerVersion()
		framework.ExpectNoError(err)
		gomega.Expect(string(logs)).To(gomega.ContainSubstring("resolved kubernetes.default to"), "DNS lookup through CoreDNS")
		gomega.Expect(string(logs)).To(gomega.ContainSubstring(fmt.Sprintf(`"gitVersion": "%s"`, v.GitVersion)), "GET /version through the Service")
		p, _ := b.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		gomega.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodSucceeded), "probe output:\n%s", logs)
	})
})
