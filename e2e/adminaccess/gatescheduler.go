package adminaccess

// The scheduler-off group's kube-scheduler of its own: the cluster's
// kube-scheduler binary and flags with DRAAdminAccess off, under a scheduler
// name of its own, so that the group runs beside the other specs instead
// of moving the cluster's kube-scheduler (which every spec running beside
// it uses) in the Serial part. Turning the gate back on replaces its pod by
// one with the gate on and the same name: the pods kept waiting are the
// new process's to schedule, as they are a restarted cluster scheduler's.

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
)

// gateScheduler is the cluster's kube-scheduler with DRAAdminAccess set to
// enable and every other gate as the cluster has it. Both values share one
// name: the pods ask for the scheduler by name, whichever process runs.
func gateScheduler(enable bool) allocatorScheduler {
	return allocatorScheduler{allocator: "gate", adminAccess: &enable}
}

// replaceBy ends s's process (its pod, with its 1 s grace period) and
// starts next's under the same name, and returns once next is ready.
func (s allocatorScheduler) replaceBy(ctx context.Context, next allocatorScheduler) {
	ginkgo.GinkgoHelper()
	name := s.name()
	err := env.Client.CoreV1().Pods(schedulerSystemNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		framework.ExpectNoError(err, "deleting kube-scheduler %s's pod", name)
	}
	// Gone, not only terminating: a new pod of that name can only be
	// created then, and two processes of one scheduler name must not run.
	gomega.Eventually(ctx, func(ctx context.Context) error {
		_, err := env.Client.CoreV1().Pods(schedulerSystemNamespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("pod %s is still there", name)
	}).WithTimeout(time.Minute).Should(gomega.Succeed(), "kube-scheduler %s's old process has ended", name)
	framework.ExpectNoError(next.start(ctx), "starting kube-scheduler %s again with its new flags", name)
	next.awaitReady(ctx)
}
