package testenv

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigCluster is the cluster a kubeconfig's current context points
// at, by the kubeconfig's name for it and its server: what the provenance of
// a run against an existing cluster names (CLUSTER_NAME is the kind
// cluster's name, which an existing cluster need not have).
func KubeconfigCluster(path string) (name, server string, err error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", "", fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return "", "", fmt.Errorf("kubeconfig %s has no current context (kubectl config use-context sets one)", path)
	}
	if c, ok := cfg.Clusters[ctx.Cluster]; ok {
		server = c.Server
	}
	return ctx.Cluster, server, nil
}
