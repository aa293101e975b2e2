// SPDX-License-Identifier: Apache-2.0

package kindcluster

// Why a restart first waits for the kubelet's pod sources.
//
// A kubelet acts on a static pod's removal (its manifest taken out of the
// folder, or replaced by one with another UID) only once each of its pod
// sources (the folder and kube-apiserver) has delivered its first list.
// Before that it drops the removal ("skipping delete because sources aren't
// ready yet", kubelet.go deletePod, 1.33 to 1.38) and leaves the pod to its
// housekeeping. The housekeeping does end an orphaned pod, but through the
// pod's worker and without interrupting it, and the worker of a kubelet a
// few seconds old may still be in the pod's first sync, waiting for its
// volumes (up to 2 minutes). That is how make bench's kube-apiserver move,
// 2.3 s after a kubelet restart, found kube-apiserver still serving a minute
// after its manifest went: kube-controller-manager and kube-scheduler were
// ended, kube-apiserver never (docs/benchmarks.md). A removal the kubelet
// acts on interrupts the worker's sync at once. So a restart waits, before
// it takes a manifest away or writes one over, until the control-plane
// kubelet's sources are ready.
//
// Nothing reports that directly. The kubelet runs its housekeeping only with
// its sources ready, and its first housekeeping sets the gauge
// kubelet_desired_pods (kubelet_pods.go, HandlePodCleanups, the only place
// that sets it, 1.33 to 1.38); before that the gauge has no sample in the
// kubelet's metrics. Once ready, the sources stay ready for the kubelet's
// life, so on a kubelet that has run a while this costs one look.

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// What sourcesScript prints.
const (
	// The kubelet has run its housekeeping.
	sourcesReady = "ready"
	// Its metrics answer without the gauge, or its port refuses the
	// connection (a kubelet just restarted listens a few tenths of a
	// second after it starts).
	sourcesWaiting = "waiting"
	// Its metrics do not answer otherwise: the read is refused (not
	// authorized, which a kubelet decides through kube-apiserver) or
	// times out.
	sourcesUnanswered = "unanswered"
)

// sourcesScript prints whether the kubelet on the node has its pod sources
// ready, reading its metrics with kube-apiserver's client certificate for
// kubelets ($1, $2). curl's exit code 7 is a refused connection.
const sourcesScript = `m=$(curl -sfk --max-time 2 --cert "$1" --key "$2" https://127.0.0.1:10250/metrics); rc=$?
if [ $rc -eq 7 ]; then echo ` + sourcesWaiting + `; exit 0; fi
if [ $rc -ne 0 ]; then echo ` + sourcesUnanswered + `; exit 0; fi
if printf '%s\n' "$m" | grep -q '^kubelet_desired_pods{'; then echo ` + sourcesReady + `; else echo ` + sourcesWaiting + `; fi`

// kubeadm's client certificate for kube-apiserver's calls to kubelets, on
// the control-plane node.
const (
	kubeletClientCert = "/etc/kubernetes/pki/apiserver-kubelet-client.crt"
	kubeletClientKey  = "/etc/kubernetes/pki/apiserver-kubelet-client.key"
)

// sourcesTimeout bounds the wait: a kubelet has its sources ready 1-3 s
// after it starts where kube-apiserver answers.
const sourcesTimeout = 30 * time.Second

// sourcesState reads sourcesScript's output; anything else (a node that
// does not answer) counts as unanswered.
func sourcesState(out string) string {
	switch s := strings.TrimSpace(out); s {
	case sourcesReady, sourcesWaiting:
		return s
	}
	return sourcesUnanswered
}

// awaitKubeletSources returns once the kubelet on the control-plane node cp
// has its pod sources ready, or at once where its metrics do not answer:
// with kube-apiserver down (a component that refused its flags) the kubelet
// can neither authorize the read nor list its pods, and the restart goes on
// as it did before this wait. Past sourcesTimeout it goes on too, and says
// so: the restart's own waits then give the verdict.
func (c *Cluster) awaitKubeletSources(ctx context.Context, cp nodes.Node) {
	start := time.Now()
	looks := 0
	err := wait.PollUntilContextTimeout(ctx, pollInterval, sourcesTimeout, true, func(context.Context) (bool, error) {
		looks++
		out, _ := run(cp, sourcesScript, kubeletClientCert, kubeletClientKey)
		return sourcesState(out) != sourcesWaiting, nil
	})
	switch {
	case err != nil:
		c.logf("the kubelet on %s has not run its housekeeping %s; restarting without it, so a manifest taken away may not be acted on", cp, inTime(ctx, sourcesTimeout))
	case looks > 1:
		c.logf("the kubelet on %s has its pod sources ready after %s", cp, elapsed(start))
	}
}
