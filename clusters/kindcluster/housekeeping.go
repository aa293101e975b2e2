// SPDX-License-Identifier: Apache-2.0

package kindcluster

// API housekeeping around a restart: the components' mirror pods, the
// controller manager's lease, and RBAC readiness of a new kube-apiserver.

import (
	"context"
	"strconv"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// mirrorPods are the components' mirror pods as read before a restart; a
// component whose mirror pod could not be read has none.
type mirrorPods map[profile.Component]*corev1.Pod

// hash is comp's mirror pod's config hash before the restart, or "".
func (m mirrorPods) hash(comp profile.Component) string {
	if pod := m[comp]; pod != nil {
		return pod.Annotations[configHash]
	}
	return ""
}

// quickRead bounds a request made where kube-apiserver may be down. client-go
// retries a GET whose connection ends without an answer ten times, a second
// apart, and that is what a kube-apiserver that is down gives through kind's
// published port (the port's proxy accepts, then closes), so after the GA
// lock spec's refused flag each unbounded read cost ten seconds. A serving
// kube-apiserver answers such a request in well under a second.
const quickRead = 3 * time.Second

// readMirrorPods reads the components' mirror pods before a restart, in one
// request. Where kube-apiserver does not answer (a component refusing its
// flags, a failed move) there are none to read: the restart goes on
// without them, and says so.
func (c *Cluster) readMirrorPods(ctx context.Context, cp nodes.Node, manifests map[profile.Component][]byte) mirrorPods {
	pods := mirrorPods{}
	ctx, cancel := context.WithTimeout(ctx, quickRead)
	defer cancel()
	list, err := c.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + cp.String()})
	if err != nil {
		c.logf("mirror pods not read, the restart goes on without them: %v", err)
		return pods
	}
	for i := range list.Items {
		for comp := range manifests {
			if list.Items[i].Name == string(comp)+"-"+cp.String() {
				pods[comp] = &list.Items[i]
			}
		}
	}
	return pods
}

// deleteMirrorPods deletes comps' mirror pods read before the restart (by
// UID: a pod the kubelet has replaced meanwhile stays).
func (c *Cluster) deleteMirrorPods(ctx context.Context, before mirrorPods, comps []profile.Component) {
	for _, comp := range comps {
		if pod := before[comp]; pod != nil {
			c.deleteStaleMirrorPod(ctx, pod)
		}
	}
}

// rbacNotReady says why kube-apiserver's authorizer does not yet grant
// kube-scheduler a watch of pods (a SubjectAccessReview), or "".
func (c *Cluster) rbacNotReady(ctx context.Context) string {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:kube-scheduler",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods"},
	}}
	got, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	switch {
	case err != nil:
		return "reviewing kube-scheduler's access: " + err.Error()
	case !got.Status.Allowed:
		return "RBAC does not yet let kube-scheduler watch pods (" + got.Status.Reason + ")"
	}
	return ""
}

// deleteStaleMirrorPod deletes a mirror pod of a component's old manifest
// once the new process serves. The kubelet replaces it itself only when its
// own watch of pods has seen it: a mirror pod the kubelet published while
// that watch was in back-off (after a kube-apiserver restart) is unknown to
// it, its create of the new one then fails with AlreadyExists, and the move
// waited until the watch came back. With the old one
// gone, the kubelet's next sync (10 s at most, see the suite's kubelet
// configuration) publishes the new one. The UID precondition spares a pod
// the kubelet has replaced meanwhile.
func (c *Cluster) deleteStaleMirrorPod(ctx context.Context, pod *corev1.Pod) {
	c.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
}

// releaseStaleLease deletes kube-controller-manager's leader-election lease
// when a process older than the running one (pid) took it: killed, that
// process could not give it up, and the new one would wait for it to expire
// (15 s, kubeadm's default) before any controller acts; with it gone, the new
// one takes it at once. A lease acquired at or after the new process's start
// (seconds, rounded down) is its own and is left alone, as is one that
// changed since it was read (resourceVersion precondition).
func (c *Cluster) releaseStaleLease(ctx context.Context, cp nodes.Node, pid string) {
	// ps reads the start from the kernel's process table (a /proc folder's
	// own time is when it was first looked at, not when the process began).
	started, err := run(cp, `date -d "$(ps -o lstart= -p "$1")" +%s`, pid)
	if err != nil {
		return
	}
	sec, err := strconv.ParseInt(started, 10, 64)
	if err != nil {
		return
	}
	leases := c.Client.CoordinationV1().Leases("kube-system")
	lease, err := leases.Get(ctx, string(profile.ControllerManager), metav1.GetOptions{})
	if err != nil || !takenBefore(lease, time.Unix(sec, 0)) {
		return
	}
	leases.Delete(ctx, lease.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &lease.ResourceVersion}})
}

// takenBefore says whether lease was acquired before start: by a process
// older than one started then.
func takenBefore(lease *coordinationv1.Lease, start time.Time) bool {
	return lease.Spec.AcquireTime != nil && lease.Spec.AcquireTime.Time.Before(start)
}

// configHash is the mirror pod annotation that names the manifest the
// kubelet runs (its hash, or the UID the manifest sets).
const configHash = "kubernetes.io/config.hash"
