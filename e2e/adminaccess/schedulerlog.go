package adminaccess

// What kube-scheduler logged, read through the API: the allocators group
// reads which implementation allocated, a known defect's verdict the
// allocator's reason for passing over a device.

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
)

// schedulerLog is the log since then of the kube-scheduler that schedules
// the running spec's pods, read through the API: the cluster's (its static
// pod's mirror in kube-system), or the allocator scheduler the spec runs
// under (specScheduler).
func schedulerLog(ctx context.Context, since metav1.Time) string {
	ginkgo.GinkgoHelper()
	if specScheduler != "" {
		raw, err := env.Client.CoreV1().Pods(schedulerSystemNamespace).GetLogs(specScheduler, &corev1.PodLogOptions{SinceTime: &since}).DoRaw(ctx)
		framework.ExpectNoError(err, "reading %s's log", specScheduler)
		return string(raw)
	}
	pods, err := env.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-scheduler"})
	framework.ExpectNoError(err, "listing kube-scheduler's pod")
	gomega.Expect(pods.Items).To(gomega.HaveLen(1), "kube-scheduler's pods in kube-system (component=kube-scheduler)")
	pod := pods.Items[0].Name
	raw, err := env.Client.CoreV1().Pods("kube-system").GetLogs(pod, &corev1.PodLogOptions{SinceTime: &since}).DoRaw(ctx)
	framework.ExpectNoError(err, "reading %s's log", pod)
	return string(raw)
}
