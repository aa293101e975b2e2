// SPDX-License-Identifier: Apache-2.0

package adminaccess

// What kube-scheduler logged, read through the API: the allocators group
// reads which implementation allocated, a known defect's verdict the
// allocator's reason for passing over a device.

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
)

// schedulerLog is the log since then of the kube-scheduler that schedules
// the running spec's pods, read through the API: the cluster's (its static
// pod's mirror in kube-system), or the allocator scheduler the spec runs
// under (specScheduler).
func schedulerLog(ctx context.Context, since metav1.Time) string {
	ginkgo.GinkgoHelper()
	return schedulerLogOf(ctx, schedulerPod(ctx, specScheduler), since)
}

// schedulerPod is the pod in kube-system of the kube-scheduler that pods
// naming scheduler go to: the allocator scheduler of that name, or for ""
// the cluster's.
func schedulerPod(ctx context.Context, scheduler string) string {
	ginkgo.GinkgoHelper()
	if scheduler != "" {
		return scheduler
	}
	own, err := clusterScheduler(ctx, envOf(ctx))
	framework.ExpectNoError(err)
	return own.Name
}

// schedulerLogOf is the log since then of kube-scheduler's pod in kube-system.
func schedulerLogOf(ctx context.Context, pod string, since metav1.Time) string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	raw, err := e.Client.CoreV1().Pods(schedulerSystemNamespace).GetLogs(pod, &corev1.PodLogOptions{SinceTime: &since}).DoRaw(ctx)
	framework.ExpectNoError(err, "reading %s's log", pod)
	return string(raw)
}

// clusterScheduler is the cluster's kube-scheduler: its static pod's
// mirror, the one pod labelled component=kube-scheduler in kube-system.
func clusterScheduler(ctx context.Context, e *testenv.Env) (*corev1.Pod, error) {
	pods, err := e.Client.CoreV1().Pods(schedulerSystemNamespace).List(ctx, metav1.ListOptions{LabelSelector: "component=kube-scheduler"})
	if err != nil {
		return nil, fmt.Errorf("listing kube-scheduler's pod: %w", err)
	}
	if len(pods.Items) != 1 {
		return nil, fmt.Errorf("%d kube-scheduler pods in %s (component=kube-scheduler), want the cluster's one", len(pods.Items), schedulerSystemNamespace)
	}
	return &pods.Items[0], nil
}

// reportAllocator names on the running spec's report row the allocator
// and the feature set it ran under.
func reportAllocator(allocator string, set release.FeatureSet) {
	ginkgo.AddReportEntry(report.AllocatorEntry, report.AllocatorRun{Allocator: allocator, FeatureSet: set.String()}, ginkgo.ReportEntryVisibilityNever)
}
