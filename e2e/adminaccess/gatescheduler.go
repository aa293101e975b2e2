// SPDX-License-Identifier: Apache-2.0

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

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"
)

// gateScheduler is the cluster's kube-scheduler with DRAAdminAccess set to
// enable and every other gate as the cluster has it. Both values share one
// name: the pods ask for the scheduler by name, whichever process runs.
func gateScheduler(enable bool) allocatorScheduler {
	return allocatorScheduler{allocator: "gate", adminAccess: &enable}
}

// replaceBy ends s's process (removePod) and starts next's under the same
// name, and returns once next is ready: two processes of one scheduler name
// never run at once.
func (s allocatorScheduler) replaceBy(ctx context.Context, next allocatorScheduler) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	framework.ExpectNoError(s.removePod(ctx, e), "ending kube-scheduler %s's old process", s.name())
	framework.ExpectNoError(next.start(ctx, e), "starting kube-scheduler %s again with %s", next.name(), next.what())
	next.awaitReady(ctx)
}
