// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigCluster is the cluster a kubeconfig's context kubeContext
// points at ("" its current context), by the kubeconfig's name for it and
// its server: what the provenance of a run against an existing cluster
// names (CLUSTER_NAME is the kind cluster's name, which an existing
// cluster need not have).
func KubeconfigCluster(path, kubeContext string) (name, server string, err error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", "", fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	given := kubeContext != ""
	if !given {
		kubeContext = cfg.CurrentContext
	}
	ctx, ok := cfg.Contexts[kubeContext]
	switch {
	case !ok && !given:
		return "", "", fmt.Errorf("kubeconfig %s has no current context (kubectl config use-context sets one, or give KUBECONTEXT)", path)
	case !ok:
		return "", "", fmt.Errorf("kubeconfig %s has no context %q (it has %s)", path, kubeContext, strings.Join(slices.Sorted(maps.Keys(cfg.Contexts)), ", "))
	}
	if c, ok := cfg.Clusters[ctx.Cluster]; ok {
		server = c.Server
	}
	return ctx.Cluster, server, nil
}

// KubeconfigName is how messages name a kubeconfig and its context: the
// path, and the context where one was given.
func KubeconfigName(path, kubeContext string) string {
	if kubeContext == "" {
		return path
	}
	return fmt.Sprintf("%s (context %s)", path, kubeContext)
}
