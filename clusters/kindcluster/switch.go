// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/nodeconfig"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// SwitchTimeout bounds one gate switch. kube-apiserver takes the longest (it
// restarts etcd watches and its caches); a component that refuses its flags
// fails within it with its own log line.
var SwitchTimeout = 3 * time.Minute

// inTime says how a bounded wait under ctx ended, for its error: "within"
// the timeout, or stopped because ctx ended first (an interrupted run),
// which is no verdict on the component.
func inTime(ctx context.Context, timeout time.Duration) string {
	if err := ctx.Err(); err != nil {
		return fmt.Sprintf("before the run stopped waiting (%v)", err)
	}
	return fmt.Sprintf("within %s", timeout)
}

// SetAdminAccess switches DRAAdminAccess in one component of the live cluster
// and waits until that component runs with the new flag. It returns how long
// that took (nothing restarts, and it returns at once, where the value is
// already in force).
func (c *Cluster) SetAdminAccess(ctx context.Context, comp profile.Component, enable bool) (time.Duration, error) {
	start := time.Now()
	var err error
	switch comp {
	case profile.APIServer, profile.ControllerManager, profile.Scheduler:
		_, err = c.SetStaticPodGates(ctx, map[profile.Component]bool{comp: enable})
	case profile.Kubelet:
		_, err = c.switchKubelets(ctx, enable)
	default:
		return 0, fmt.Errorf("unknown component %q: use %s, %s, %s or %s", comp, profile.APIServer, profile.ControllerManager, profile.Scheduler, profile.Kubelet)
	}
	return time.Since(start), err
}

// MoveTo gives every component the value profile `to` wants, restarting
// only those whose files on the nodes say otherwise: what the cluster runs is
// read, never remembered, so a move that failed half-way, a single switch or
// an attached cluster cannot mislead the next one. Static pods restart
// independently, so they are replaced together and waited for together: a
// move costs its slowest restart, not the sum. The durations returned are
// those of the components restarted.
func (c *Cluster) MoveTo(ctx context.Context, to profile.Profile) (map[profile.Component]time.Duration, error) {
	if err := to.CheckRunnable(c.Release); err != nil {
		return nil, err
	}
	static := map[profile.Component]bool{}
	for _, comp := range profile.ControlPlane {
		static[comp] = to.Effective(c.Release, comp)
	}
	took, err := c.SetStaticPodGates(ctx, static)
	if err != nil {
		return took, err
	}
	start := time.Now()
	restarted, err := c.switchKubelets(ctx, to.Effective(c.Release, profile.Kubelet))
	if restarted {
		took[profile.Kubelet] = time.Since(start)
	}
	return took, err
}

// SetStaticPodGates sets DRAAdminAccess in several control-plane components
// at once: the manifests are replaced together and then waited for, so the
// call costs the slowest restart, not the sum; but where kube-apiserver
// restarts, kube-controller-manager and kube-scheduler start only once it
// serves (restartWithAPIServer). The durations run from the start to each
// restarted component's return.
func (c *Cluster) SetStaticPodGates(ctx context.Context, gates map[profile.Component]bool) (map[profile.Component]time.Duration, error) {
	cp, err := c.ControlPlane()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	took := map[profile.Component]time.Duration{}
	current, err := readManifests(cp)
	if err != nil {
		return took, err
	}
	updated, err := c.staticPodGateEdits(current, gates)
	if err != nil || len(updated) == 0 {
		return took, err
	}
	_, err = c.restart(ctx, change{node: cp, current: current, edited: updated, target: c.gateTarget,
		served: func(comp profile.Component, _ error) { took[comp] = time.Since(start) }})
	return took, err
}

// WriteStaticPodGates restarts the components with the gate set and returns
// without waiting for them to come back (the GA lock spec watches them refuse).
func (c *Cluster) WriteStaticPodGates(ctx context.Context, gates map[profile.Component]bool) error {
	cp, err := c.ControlPlane()
	if err != nil {
		return err
	}
	current, err := readManifests(cp)
	if err != nil {
		return err
	}
	updated, err := c.staticPodGateEdits(current, gates)
	if err != nil || len(updated) == 0 {
		return err
	}
	_, err = c.restart(ctx, change{node: cp, current: current, edited: updated})
	return err
}

// staticPodGateEdits returns the new manifest of every component whose
// manifest (in manifests, as they stand) does not already run the wanted
// value (a flag that does not name the gate runs the release's default).
func (c *Cluster) staticPodGateEdits(manifests map[profile.Component][]byte, gates map[profile.Component]bool) (map[profile.Component][]byte, error) {
	updated := map[profile.Component][]byte{}
	for comp, enable := range gates {
		manifest := manifests[comp]
		current, err := nodeconfig.StaticPodGates(manifest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", comp, err)
		}
		_, named := current[release.Gate]
		if c.effective(current) == enable && (c.Release.GateSwitchable() || !named) {
			continue
		}
		if !c.Release.GateSwitchable() && enable == c.Release.GateDefault() {
			// Back to the locked (or, once the gate is gone, the only)
			// value: the flag stops naming the gate, which a release
			// without it refuses even set to true.
			updated[comp], err = nodeconfig.EditStaticPodGates(manifest, nil, []string{release.Gate})
		} else {
			updated[comp], err = nodeconfig.SetStaticPodGate(manifest, release.Gate, enable)
		}
		if err != nil {
			return nil, err
		}
	}
	return updated, nil
}

// effective is the value of the gate a component with these feature gates
// runs (a flag that does not name it runs the release's default).
func (c *Cluster) effective(gates map[string]bool) bool {
	if v, ok := gates[release.Gate]; ok {
		return v
	}
	return c.Release.GateDefault()
}

// gateTarget is what comp's process shows once manifest is in force: the
// gate's value that manifest sets (or the release's default) on its
// command line.
func (c *Cluster) gateTarget(comp profile.Component, manifest []byte) (target, error) {
	set, err := nodeconfig.StaticPodGates(manifest)
	if err != nil {
		return target{}, fmt.Errorf("%s: %w", comp, err)
	}
	enable := c.effective(set)
	want, wantNamed := set[release.Gate]
	what := fmt.Sprintf("with %s=%t", release.Gate, enable)
	if !wantNamed {
		what = fmt.Sprintf("with no %s flag (the release's %t)", release.Gate, enable)
	}
	return target{what: what,
		inForce: func(p process) (bool, string) {
			gates, err := nodeconfig.CommandGates(strings.Fields(p.Command))
			if err != nil {
				return false, err.Error()
			}
			// The process runs the manifest when its flag names the gate
			// as the manifest does, or, where the manifest does not name
			// it (a locked or removed gate taken back), does not either:
			// the process before it named the gate.
			v, named := gates[release.Gate]
			return named == wantNamed && (!named || v == want), ""
		}}, nil
}

// switchKubelets sets the gate in every kubelet whose configuration does
// not already run it, one node at a time, and says whether any restarted.
func (c *Cluster) switchKubelets(ctx context.Context, enable bool) (bool, error) {
	all, err := c.Nodes()
	if err != nil {
		return false, err
	}
	const path = "/var/lib/kubelet/config.yaml"
	restarted := false
	for _, n := range all {
		cfg, err := readFile(n, path)
		if err != nil {
			return restarted, err
		}
		current, err := nodeconfig.KubeletGates(cfg)
		if err != nil {
			return restarted, fmt.Errorf("%s on %s: %w", path, n, err)
		}
		if c.effective(current) == enable {
			continue
		}
		updated, err := nodeconfig.SetKubeletGate(cfg, release.Gate, enable)
		if err != nil {
			return restarted, err
		}
		if err := writeFile(n, path, updated); err != nil {
			return restarted, err
		}
		restarted = true
		if err := c.restartKubelet(ctx, n, ""); err != nil {
			return restarted, err
		}
	}
	if !restarted {
		return false, nil
	}
	return true, waitNodesReady(ctx, c)
}
