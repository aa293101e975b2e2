package kindcluster

// The seam every live change of a cluster goes through: a gate move
// (SetAdminAccess, MoveTo, SetStaticPodGates, WriteStaticPodGates),
// kube-scheduler's feature set (MoveSchedulerTo) and a release switch
// (SwitchRelease) each say what should change and what the new process
// shows; the restarter decides how the components are stopped, started and
// waited for. fastRestart (restart.go) is the one implementation; why its
// sequence looks as it does is ARCHITECTURE.md's "A gate move ends when the
// component serves".

import (
	"context"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// restarter puts a new configuration of the control plane or of a kubelet
// in force on the live cluster.
type restarter interface {
	// restart gives each component of ch.edited its new manifest and
	// returns once each serves on it as ch.target says. Where
	// kube-apiserver is among them, kube-controller-manager and
	// kube-scheduler restart after it too (from ch.current's manifest where
	// ch.edited has none), so that no client of kube-apiserver backs off
	// from its restart. With ch.target nil it returns once the new manifests
	// are in the kubelet's folder: nothing waits for a component that may
	// refuse them.
	restart(ctx context.Context, ch change) error
	// restartKubelet restarts the kubelet on n, running prepare (with args)
	// first in the same shell when given, and returns once a new kubelet
	// process answers on its health endpoint.
	restartKubelet(ctx context.Context, n nodes.Node, prepare string, args ...string) error
}

// change is a new configuration of control-plane components.
type change struct {
	// node is the control-plane node, whose kubelet runs the components.
	node nodes.Node
	// current is every control-plane component's manifest as it stands.
	current map[profile.Component][]byte
	// edited is the new manifest of each component that changes.
	edited map[profile.Component][]byte
	// target says what comp's new process shows once manifest (as given,
	// before the restart stamps it) is in force; nil: no wait.
	target func(comp profile.Component, manifest []byte) (target, error)
	// served, where set, hears when each component's wait ended (err nil:
	// it serves on its new manifest).
	served func(comp profile.Component, err error)
}

// target is what a restarted component's process shows once its new
// configuration is in force.
type target struct {
	// what says what the new configuration is, for messages ("with
	// --feature-gates=...").
	what string
	// withVersion also probes the binary's --version (a release switch).
	withVersion bool
	// inForce accepts the process that runs the new configuration, or
	// says what it still lacks.
	inForce func(process) (bool, string)
}

// restarter is how this cluster's components are restarted.
func (c *Cluster) restarter() restarter { return fastRestart{c} }

// always is a change's target where every component restarted shows the
// same thing.
func always(t target) func(profile.Component, []byte) (target, error) {
	return func(profile.Component, []byte) (target, error) { return t, nil }
}
