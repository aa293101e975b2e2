// SPDX-License-Identifier: Apache-2.0

package kindcluster

// The seam every live change of a cluster goes through: a gate move
// (SetAdminAccess, MoveTo, SetStaticPodGates, WriteStaticPodGates),
// kube-scheduler's feature set (MoveSchedulerTo) and a release switch
// (SwitchRelease) each say what should change and what the new process
// shows; the restarter decides how the components are stopped, started and
// waited for. It has two implementations: fastRestart (restart.go,
// staticpods.go), which rests on kubelet behaviour nothing documents
// (docs/restart.md), and plainRestart (plainrestart.go), which writes the
// manifests in place and waits for the kubelet. restarters is the one caller
// both are reached through: the fast one where its preconditions hold, the
// plain one where they do not, and which one ran is what a restart returns.

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// restarter puts a new configuration of the control plane or of a kubelet
// in force on the live cluster.
type restarter interface {
	// unfit says why this implementation cannot restart components on the
	// control-plane node n ("" where it can). The caller asks once per
	// cluster, before its first restart.
	unfit(n nodes.Node) string
	// restart gives each component of ch.edited its new manifest and
	// returns once each serves on it as ch.target says. Where
	// kube-apiserver is among them, kube-controller-manager and
	// kube-scheduler restart after it too (from ch.current's manifest where
	// ch.edited has none): waves says the order. With ch.target nil it
	// returns once the new manifests are in the kubelet's folder: nothing
	// waits for a component that may refuse them. An implementation that
	// finds part-way that the kubelet does not act as it rests on returns an
	// *unfitError, and only where every manifest of ch written in place
	// still finishes the change.
	restart(ctx context.Context, ch change) error
	// restartKubelet restarts the kubelet on n, running prepare (with args)
	// first in the same shell when given, and returns once a new kubelet
	// process answers on its health endpoint.
	restartKubelet(ctx context.Context, n nodes.Node, prepare string, args ...string) error
}

// unfitError is a restarter's report that a precondition it rests on does
// not hold on this cluster: what the caller falls back on, where any other
// error (a component that refuses its flags, a kubelet that does not come
// back) is the restart's verdict and is returned as it is.
type unfitError struct{ why string }

func (e *unfitError) Error() string { return "the fast restart's preconditions do not hold: " + e.why }

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

// waves is the order in which ch's components restart, each wave's
// manifests: where kube-apiserver is among those edited and the restart
// waits, kube-apiserver alone, then kube-controller-manager and
// kube-scheduler, edited or as they stand (restartWithAPIServer says why);
// otherwise every edited component at once. Without a wait there is no
// order to keep: nothing would see kube-apiserver serve.
func waves(ch change) []map[profile.Component][]byte {
	if len(ch.edited) == 0 {
		return nil
	}
	first, apiserver := ch.edited[profile.APIServer]
	if !apiserver || ch.target == nil {
		return []map[profile.Component][]byte{ch.edited}
	}
	then := maps.Clone(ch.current)
	maps.Copy(then, ch.edited)
	delete(then, profile.APIServer)
	return []map[profile.Component][]byte{{profile.APIServer: first}, then}
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

// always is a change's target where every component restarted shows the
// same thing.
func always(t target) func(profile.Component, []byte) (target, error) {
	return func(profile.Component, []byte) (target, error) { return t, nil }
}

// The two ways, as a Restart names them.
const (
	wayFast  = "fast"
	wayPlain = "plain"
)

// Restart says which restarter a restart of control-plane components went
// through, for a move's or a switch's line on the timeline.
type Restart struct {
	// Way is "fast" or "plain"; "" where nothing restarted.
	Way string
	// Why is, for a plain restart, why the fast one's preconditions do
	// not hold.
	Why string
}

func (r Restart) String() string {
	switch r.Way {
	case "":
		return "no restart"
	case wayPlain:
		return "plain restart (" + r.Why + ")"
	}
	return r.Way + " restart"
}

// Note is what a timeline step gets for the restart: nothing for the fast
// one, which every step is unless it says otherwise (so make bench keeps
// comparing it with runs before there were two), and ", plain restart" for
// the fallback, which takes its own row.
func (r Restart) Note() string {
	if r.Way == wayPlain {
		return ", plain restart"
	}
	return ""
}

// restarters is the one caller of the restarter: every restart of a
// cluster goes through it (Cluster.restart, Cluster.restartKubelet). It takes
// the fast one, and the plain one where the fast one says up front that it
// is unfit for the node or reports part-way that the kubelet does not act
// as it rests on; it then stays with the plain one, so that later restarts
// do not pay for finding that out again.
type restarters struct {
	fast, plain restarter
	// checked: the fast one has been asked whether it is unfit.
	checked bool
	// unfit is why the fast one cannot be used here, once known.
	unfit string
	// last is the way each component's latest restart went.
	last map[profile.Component]Restart
	logf func(format string, args ...any)
}

// restart puts ch in force through the fast restarter or, where its
// preconditions do not hold, the plain one, and says which ran. A plain
// restart's error says that it was one and why.
func (rs *restarters) restart(ctx context.Context, ch change) (Restart, error) {
	ws := waves(ch)
	if len(ws) == 0 {
		return Restart{}, nil
	}
	if !rs.checked {
		rs.checked = true
		if why := rs.fast.unfit(ch.node); why != "" {
			rs.fallBack(why)
		}
	}
	if rs.unfit == "" {
		by := Restart{Way: wayFast}
		err := rs.fast.restart(ctx, ch)
		var unfit *unfitError
		if !errors.As(err, &unfit) {
			rs.record(ws, by)
			return by, err
		}
		rs.fallBack(unfit.why)
	}
	by := Restart{Way: wayPlain, Why: rs.unfit}
	rs.record(ws, by)
	if err := rs.plain.restart(ctx, ch); err != nil {
		return by, fmt.Errorf("%s: %w", by, err)
	}
	return by, nil
}

// restartKubelet restarts the kubelet on n through the restarter restarts
// go through now: both restart it the same way, but a kubelet restart too
// goes through the seam, so that a third way cannot miss it.
func (rs *restarters) restartKubelet(ctx context.Context, n nodes.Node, prepare string, args ...string) error {
	if rs.unfit != "" {
		return rs.plain.restartKubelet(ctx, n, prepare, args...)
	}
	return rs.fast.restartKubelet(ctx, n, prepare, args...)
}

func (rs *restarters) fallBack(why string) {
	rs.unfit = why
	if rs.logf != nil {
		rs.logf("%s; this and every later restart of the cluster go the plain way: manifests written in place, the kubelet waited for", (&unfitError{why}).Error())
	}
}

func (rs *restarters) record(ws []map[profile.Component][]byte, by Restart) {
	if rs.last == nil {
		rs.last = map[profile.Component]Restart{}
	}
	for _, w := range ws {
		for comp := range w {
			rs.last[comp] = by
		}
	}
}

// restarts is the cluster's caller of the restarters, made at its first
// restart; the only place either implementation is made.
func (c *Cluster) restarts() *restarters {
	if c.ways == nil {
		c.ways = &restarters{fast: fastRestart{c}, plain: plainRestart{c}, logf: c.logf}
	}
	return c.ways
}

// restart puts ch in force (restarters.restart).
func (c *Cluster) restart(ctx context.Context, ch change) (Restart, error) {
	defer c.restartMove(ch)()
	return c.restarts().restart(ctx, ch)
}

// restartKubelet restarts the kubelet on n (restarters.restartKubelet).
func (c *Cluster) restartKubelet(ctx context.Context, n nodes.Node, prepare string, args ...string) error {
	defer c.kubeletMove(n.String())()
	return c.restarts().restartKubelet(ctx, n, prepare, args...)
}

// RestartedBy says which way comp's latest restart on this cluster went
// (fast or plain), for a timeline step's name (Restart.Note); the zero
// Restart where comp has not restarted (a kubelet has one way only).
func (c *Cluster) RestartedBy(comp profile.Component) Restart {
	if c.ways == nil {
		return Restart{}
	}
	return c.ways.last[comp]
}
