// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// nodePlatforms are the platforms of the nodes the run's pods may go to,
// each with the names of its nodes: every node not cordoned. The Job's pod
// may go to any untainted one, and the bundled driver's DaemonSet, which
// tolerates every taint, to each worker; a platform the images lack there
// is a pod that dies with "exec format error" once the images are pushed.
// A node's platform is what its kubelet reports (status.nodeInfo, Go's
// names), or where it has reported none yet, its kubernetes.io/os and
// kubernetes.io/arch labels.
func nodePlatforms(ctx context.Context, client kubernetes.Interface) (map[image.Platform][]string, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the nodes, whose platform the images are built for: %w", err)
	}
	out := map[image.Platform][]string{}
	var unknown []string
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			continue
		}
		p := platformOf(&n)
		if p.OS == "" || p.Arch == "" {
			unknown = append(unknown, n.Name)
			continue
		}
		out[p] = append(out[p], n.Name)
	}
	switch {
	case len(unknown) > 0:
		return nil, fmt.Errorf("%s not say which OS and architecture %s (status.nodeInfo, or the labels kubernetes.io/os and kubernetes.io/arch), which the images must be built for", nodesDo(unknown), pronoun(unknown))
	case len(out) == 0:
		return nil, fmt.Errorf("the cluster has no schedulable node (%d, all cordoned): the Job's pod could not start", len(nodes.Items))
	}
	return out, nil
}

func platformOf(n *corev1.Node) image.Platform {
	p := image.Platform{OS: n.Status.NodeInfo.OperatingSystem, Arch: n.Status.NodeInfo.Architecture}
	if p.OS == "" {
		p.OS = n.Labels[corev1.LabelOSStable]
	}
	if p.Arch == "" {
		p.Arch = n.Labels[corev1.LabelArchStable]
	}
	return p
}

// choosePlatforms are the platforms the images are built for: each of the
// nodes', in a stable order. One the images cannot be built for (another
// OS than Linux, 32-bit ARM, one Go does not compile for) is refused, a
// line for each with its nodes, before anything is built or pushed.
//
// Nodes of several architectures get one image per platform, in an index
// (a manifest list) under one reference, rather than a refusal: the
// bundled driver's DaemonSet runs on every worker and the Job may land on
// any node, so a cluster with an arm64 and an amd64 pool, common on
// managed clouds, needs both, and an index is how one reference serves
// each node its own. The price, one compile of each image per platform,
// is paid only by such clusters.
func choosePlatforms(ctx context.Context, nodes map[image.Platform][]string, check func(context.Context, image.Platform) error) ([]image.Platform, []string) {
	var platforms []image.Platform
	for p := range nodes {
		platforms = append(platforms, p)
	}
	slices.SortFunc(platforms, func(a, b image.Platform) int { return strings.Compare(a.String(), b.String()) })
	var refused []string
	for _, p := range platforms {
		if err := check(ctx, p); err != nil {
			refused = append(refused, fmt.Sprintf("%s %s: %v", nodesRun(nodes[p]), p, err))
		}
	}
	return platforms, refused
}

// describePlatforms says which platforms the nodes run, with how many
// nodes each: "linux/arm64 (3 nodes)".
func describePlatforms(nodes map[image.Platform][]string, platforms []image.Platform) string {
	var parts []string
	for _, p := range platforms {
		count := "1 node"
		if n := len(nodes[p]); n != 1 {
			count = fmt.Sprintf("%d nodes", n)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", p, count))
	}
	return strings.Join(parts, ", ")
}

// checkPushed refuses an image pushed before (SUITE_IMAGE,
// TESTDRIVER_IMAGE) that lacks a platform of the nodes: a pod there would
// not start, after the whole set-up.
func checkPushed(variable, reference string, served []string, nodes map[image.Platform][]string, platforms []image.Platform) error {
	var missing []string
	for _, p := range platforms {
		if !slices.Contains(served, p.String()) {
			missing = append(missing, fmt.Sprintf("%s %s", nodesRun(nodes[p]), p))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s=%s serves %s, but %s: push one built for the nodes (or an index of each platform)", variable, reference, strings.Join(served, ", "), strings.Join(missing, "; "))
}

// nodeList names up to three nodes, and how many more.
func nodeList(names []string) string {
	names = slices.Sorted(slices.Values(names))
	if len(names) > 3 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	return strings.Join(names, ", ")
}

// nodesRun is "node a runs" or "nodes a, b run".
func nodesRun(names []string) string {
	if len(names) == 1 {
		return "node " + names[0] + " runs"
	}
	return "nodes " + nodeList(names) + " run"
}

// nodesDo is "node a does" or "nodes a, b do".
func nodesDo(names []string) string {
	if len(names) == 1 {
		return "node " + names[0] + " does"
	}
	return "nodes " + nodeList(names) + " do"
}

func pronoun(names []string) string {
	if len(names) == 1 {
		return "it runs"
	}
	return "they run"
}
