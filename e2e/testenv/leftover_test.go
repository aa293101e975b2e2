// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A spec's namespace still there at the end names itself; the cluster's
// own namespaces are no leftover.
func TestWaitSpecNamespacesGone(t *testing.T) {
	own := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}
	spec := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "allocation-3596", Labels: map[string]string{specNamespaceLabel: "allocation"}}}
	if err := waitSpecNamespacesGone(context.Background(), fake.NewClientset(own), time.Second); err != nil {
		t.Errorf("no spec namespace left: %v", err)
	}
	err := waitSpecNamespacesGone(context.Background(), fake.NewClientset(own, spec), 1500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "[allocation-3596]") {
		t.Errorf("error %v, want the spec's namespace named", err)
	}
}
