// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/nodeconfig"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// MoveSchedulerTo gives kube-scheduler the DRA feature set: the gates set
// names in its --feature-gates flag and every other gate a move of the
// release names (release.MovableGates) taken out, so the release default
// holds for it. kube-scheduler alone picks the allocator implementation, so
// it alone restarts; nothing restarts where its manifest already says so.
// As with MoveTo, what runs is read from the manifest, never remembered.
//
// kube-scheduler keeps logging its allocator's files (AllocatorVModule, as
// the suite's clusters start): each implementation logs "Starting
// allocation" from a file named after it, so a spec can see which one
// allocated (e2e/observe.AllocatorsInLog). A cluster that started without
// the flag gets it with the move, and keeps it on the move back.
func (c *Cluster) MoveSchedulerTo(ctx context.Context, set release.FeatureSet) (time.Duration, error) {
	cp, err := c.ControlPlane()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	current, err := readManifests(cp)
	if err != nil {
		return 0, err
	}
	var unset []string
	for _, g := range c.Release.MovableGates() {
		if _, named := set.SchedulerGates[g]; !named {
			unset = append(unset, g)
		}
	}
	manifest := current[profile.Scheduler]
	edited, err := nodeconfig.EditStaticPodGates(manifest, set.SchedulerGates, unset)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", profile.Scheduler, err)
	}
	vmodule := AllocatorVModule
	if edited, err = nodeconfig.SetStaticPodFlag(edited, "vmodule", vmodule); err != nil {
		return 0, err
	}
	before, err := nodeconfig.StaticPodGates(manifest)
	if err != nil {
		return 0, err
	}
	beforeVModule, err := nodeconfig.StaticPodFlag(manifest, "vmodule")
	if err != nil {
		return 0, err
	}
	want, err := nodeconfig.StaticPodGates(edited)
	if err != nil {
		return 0, err
	}
	if maps.Equal(before, want) && beforeVModule == vmodule {
		return 0, nil
	}
	c.logf("%s: feature set %s", profile.Scheduler, set.Name)
	moved := target{what: "with --feature-gates=" + nodeconfig.FormatGates(want),
		inForce: func(p process) (bool, string) {
			args := strings.Fields(p.Command)
			got, err := nodeconfig.CommandGates(args)
			if err != nil {
				return false, err.Error()
			}
			return maps.Equal(got, want) && nodeconfig.CommandFlag(args, "vmodule") == vmodule, ""
		}}
	_, err = c.restart(ctx, change{node: cp, current: current, edited: map[profile.Component][]byte{profile.Scheduler: edited},
		target: always(moved)})
	return time.Since(start), err
}

// AllocatorVModule is kube-scheduler's --vmodule while moved.
const AllocatorVModule = release.AllocatorVModule

// RunningGates reads the --feature-gates each component runs with from the
// nodes' files: the control plane's static pod manifests and every kubelet's
// configuration (nodes that differ are listed by node). For the report's
// provenance: what the cluster runs, not what its profile asked for.
func (c *Cluster) RunningGates() (map[profile.Component]string, error) {
	cp, err := c.ControlPlane()
	if err != nil {
		return nil, err
	}
	manifests, err := readManifests(cp)
	if err != nil {
		return nil, err
	}
	out := map[profile.Component]string{}
	for _, comp := range profile.ControlPlane {
		gates, err := nodeconfig.StaticPodGates(manifests[comp])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", comp, err)
		}
		out[comp] = nodeconfig.FormatGates(gates)
	}
	all, err := c.Nodes()
	if err != nil {
		return nil, err
	}
	perNode := map[string][]string{}
	for _, n := range all {
		cfg, err := readFile(n, "/var/lib/kubelet/config.yaml")
		if err != nil {
			return nil, err
		}
		gates, err := nodeconfig.KubeletGates(cfg)
		if err != nil {
			return nil, fmt.Errorf("kubelet on %s: %w", n, err)
		}
		v := nodeconfig.FormatGates(gates)
		perNode[v] = append(perNode[v], n.String())
	}
	if len(perNode) == 1 {
		for v := range perNode {
			out[profile.Kubelet] = v
		}
	} else {
		var parts []string
		for v, ns := range perNode {
			parts = append(parts, fmt.Sprintf("%s: %q", strings.Join(ns, ","), v))
		}
		sort.Strings(parts)
		out[profile.Kubelet] = strings.Join(parts, "; ")
	}
	return out, nil
}
