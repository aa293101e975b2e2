// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
)

// What the report says of the cluster a run used. On a cluster the suite
// created, the kind cluster's name and the gates read from the nodes'
// manifests. On one given with --kubeconfig, what the kubeconfig and the API
// say: the cluster its context (--kubecontext, or its current one) points
// at (CLUSTER_NAME is only the name a kind cluster of this machine would
// have), and the DRA gates kube-apiserver reports in its metrics; the
// other components' flags are out of reach there, and the report says so
// instead of the profile's.

// clusterProvenance names the cluster for the report.
func clusterProvenance() string {
	if theRun.Cluster.Kubeconfig == "" {
		return theRun.Cluster.Name
	}
	name, server, err := testenv.KubeconfigCluster(theRun.Cluster.Kubeconfig, theRun.Cluster.Context)
	if err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	out := fmt.Sprintf("%s (%s)", name, server)
	if env != nil && env.Cluster != nil {
		out += fmt.Sprintf(", kind cluster %s of this machine", theRun.Cluster.Name)
	}
	return out
}

// unreachableGates is what the report says of a component whose flags a
// run against an existing cluster cannot read.
const unreachableGates = "not readable through the API"

// existingClusterGates are the gates a run against an existing cluster can
// tell: kube-apiserver's DRA gates from its /metrics, which the API serves
// to an identity allowed to read it.
func existingClusterGates(ctx context.Context) (string, error) {
	raw, err := env.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading kube-apiserver's /metrics: %w", err)
	}
	f, err := metrics.Parse(bytes.NewReader(raw))
	if err != nil {
		return "", fmt.Errorf("parsing kube-apiserver's /metrics: %w", err)
	}
	gates := f.DRAGates()
	if gates == "" {
		return "", fmt.Errorf("kube-apiserver's /metrics has no %s", metrics.FeatureEnabled)
	}
	return gates, nil
}
