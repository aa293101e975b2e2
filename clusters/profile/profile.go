// SPDX-License-Identifier: Apache-2.0

// Package profile describes the desired state of DRAAdminAccess per component.
//
// A profile is data. It renders to a kind cluster config for a fresh cluster
// (Render) and gives each component's value (Effective), which a live
// cluster is moved to in place (kindcluster.MoveTo) instead of creating one.
package profile

import (
	"fmt"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/nodeconfig"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Component is a Kubernetes component that can carry feature gates.
type Component string

const (
	APIServer         Component = "kube-apiserver"
	ControllerManager Component = "kube-controller-manager"
	Scheduler         Component = "kube-scheduler"
	Kubelet           Component = "kubelet"
)

// ControlPlane are the control plane's static pods, in the order kubeadm
// upgrades them: the components that read DRAAdminAccess (the kubelet does
// not; it is only switched in `adminaccess-off`), and those whose images a
// release switch replaces.
var ControlPlane = []Component{APIServer, ControllerManager, Scheduler}

// AllComponents lists every component a profile may set, in a stable order.
var AllComponents = []Component{APIServer, ControllerManager, Scheduler, Kubelet}

// Profile is a named desired gate state. A component missing from AdminAccess
// keeps its release default.
type Profile struct {
	Name        string
	Description string
	AdminAccess map[Component]bool
}

func on(cs ...Component) map[Component]bool {
	m := map[Component]bool{APIServer: true, ControllerManager: true, Scheduler: true}
	for _, c := range cs {
		m[c] = false
	}
	return m
}

var profiles = []Profile{
	{Name: "default", Description: "admin access on in every component that reads the gate (on 1.33, where it is alpha, this switches it on)",
		AdminAccess: on()},
	{Name: "adminaccess-off", Description: "DRAAdminAccess off in every component",
		AdminAccess: map[Component]bool{APIServer: false, ControllerManager: false, Scheduler: false, Kubelet: false}},
	{Name: "apiserver-only", Description: "on in kube-apiserver, off in kube-controller-manager and kube-scheduler",
		AdminAccess: on(ControllerManager, Scheduler)},
	{Name: "controller-manager-off", Description: "off in kube-controller-manager only",
		AdminAccess: on(ControllerManager)},
	{Name: "scheduler-off", Description: "off in kube-scheduler only",
		AdminAccess: on(Scheduler)},
	{Name: "apiserver-off", Description: "off in kube-apiserver only",
		AdminAccess: on(APIServer)},
}

// Names lists the known profiles.
func Names() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.Name
	}
	return out
}

// Get returns a known profile.
func Get(name string) (Profile, error) {
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown profile %q: known profiles are %s", name, strings.Join(Names(), ", "))
}

// Effective is the value of DRAAdminAccess that component runs with under this
// profile on release r.
func (p Profile) Effective(r release.Release, c Component) bool {
	if v, ok := p.AdminAccess[c]; ok {
		return v
	}
	return r.GateDefault()
}

// CheckRunnable refuses a profile the release cannot run: on 1.36 the gate is
// locked on, and a component started with it off refuses to start.
func (p Profile) CheckRunnable(r release.Release) error {
	if c, ok := p.lockedConflict(r); ok {
		return fmt.Errorf("profile %q cannot run on Kubernetes %s: %s is locked on there (%s), so %s would refuse to start; profiles %s can run: %s",
			p.Name, r.Minor, release.Gate, r.GateState, c, r.Minor, strings.Join(RunnableOn(r), ", "))
	}
	return nil
}

// lockedConflict names a component whose wanted value the release's locked gate forbids.
func (p Profile) lockedConflict(r release.Release) (Component, bool) {
	if r.GateSwitchable() {
		return "", false
	}
	for _, c := range AllComponents {
		if v, ok := p.AdminAccess[c]; ok && v != r.GateDefault() {
			return c, true
		}
	}
	return "", false
}

// RunnableOn lists the profiles release r can run.
func RunnableOn(r release.Release) []string {
	var out []string
	for _, p := range profiles {
		if _, conflict := p.lockedConflict(r); !conflict {
			out = append(out, p.Name)
		}
	}
	return out
}

// Gates is the full --feature-gates map one component gets under this profile:
// the release's extra gates plus DRAAdminAccess where it must be stated. A gate
// locked on is left out when it is wanted on, so the flag never names it.
func (p Profile) Gates(r release.Release, c Component) map[string]bool {
	gates := map[string]bool{}
	for k, v := range r.ExtraGates {
		gates[k] = v
	}
	if v, ok := p.AdminAccess[c]; ok && (r.GateSwitchable() || v != r.GateDefault()) {
		gates[release.Gate] = v
	}
	return gates
}

// FormatGates renders a gate map as the --feature-gates flag value, sorted.
func FormatGates(gates map[string]bool) string { return nodeconfig.FormatGates(gates) }
