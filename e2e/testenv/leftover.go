// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// specNamespaceLabel is the label the e2e framework puts on every
// namespace it makes for a spec (framework.go, "e2e-framework": the base
// name).
const specNamespaceLabel = "e2e-framework"

// specNamespacesGoneTimeout bounds the wait for the specs' namespaces to
// go at the end of a run on someone else's cluster: their pods' claims are
// unprepared by the driver as they go.
const specNamespacesGoneTimeout = 3 * time.Minute

// waitSpecNamespacesGone waits until no namespace a spec made is left. The
// framework deletes a spec's namespace when the spec ends but does not wait
// for it; on someone else's cluster the run must leave it as found, or the
// next run (another DEVICE_CLASS of the same make e2e, a vendor's own
// workloads) finds devices still held by the last specs' claims.
func waitSpecNamespacesGone(ctx context.Context, client kubernetes.Interface, timeout time.Duration) error {
	var left []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: specNamespaceLabel})
		if err != nil {
			return false, nil // a failed list is looked at again until the bound
		}
		left = left[:0]
		for _, ns := range list.Items {
			left = append(left, ns.Name)
		}
		return len(left) == 0, nil
	})
	if err != nil {
		slices.Sort(left)
		return fmt.Errorf("the specs' namespaces %v were still there %s after the last spec: the cluster is not left as it was found (%w)", left, timeout, err)
	}
	return nil
}
