// SPDX-License-Identifier: Apache-2.0

package adminaccess

// The nodes specs run their pods on: the workers, any one of them, and the
// nodes the bundled driver runs on.

import (
	"context"

	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
	"github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
)

func anyWorker(ctx context.Context) string {
	ginkgo.GinkgoHelper()
	return workers(ctx)[0]
}

// workers are the nodes that run the specs' pods: all but the control plane
// (a single-node cluster's only node).
func workers(ctx context.Context) []string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	nodes, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	var out, all []string
	for _, n := range nodes.Items {
		all = append(all, n.Name)
		if !deploy.IsControlPlane(n) {
			out = append(out, n.Name)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// bundledDriverNodes are the nodes the bundled driver runs on: every node,
// or the workers where it keeps off the control plane (on a cluster the
// suite did not create, deploy.Options.WorkersOnly).
func bundledDriverNodes(ctx context.Context) []string {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	if e.Driver.WorkersOnly {
		return workers(ctx)
	}
	nodes, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err)
	var out []string
	for _, n := range nodes.Items {
		out = append(out, n.Name)
	}
	return out
}
