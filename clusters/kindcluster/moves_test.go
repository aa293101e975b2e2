// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"reflect"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/nodeconfig"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"os"
)

// A restart that waits ends its own move; one that does not (the GA lock
// spec's refused flag) stays the suite's until the next restart that waits
// has ended.
func TestARestartThatDoesNotWaitStaysTheSuitesUntilTheNext(t *testing.T) {
	var log []string
	c := &Cluster{Name: "s135", Moves: func(what string) func() {
		log = append(log, "begin "+what)
		return func() { log = append(log, "end "+what) }
	}}
	manifests := map[profile.Component][]byte{profile.Scheduler: nil, profile.APIServer: nil}
	c.restartMove(change{edited: manifests})()
	end := c.restartMove(change{edited: manifests, target: always(target{})})
	if want := []string{"begin s135: restart of kube-apiserver, kube-scheduler, not waited for", "begin s135: restart of kube-apiserver, kube-scheduler"}; !reflect.DeepEqual(log, want) {
		t.Fatalf("before the waiting restart ends:\n got %q\nwant %q", log, want)
	}
	end()
	if got := log[2:]; !reflect.DeepEqual(got, []string{"end s135: restart of kube-apiserver, kube-scheduler", "end s135: restart of kube-apiserver, kube-scheduler, not waited for"}) {
		t.Fatalf("its end ends both: %q", got)
	}
	// Nobody listening: nothing to call.
	(&Cluster{}).kubeletMove("s135-worker")()
}

// Back from a refused DRAAdminAccess=false, a release that no longer knows
// the gate (or locks it) gets a flag that does not name it: true would be
// refused as well once the gate is gone.
func TestTheLockedValueTakesTheGateOutOfTheFlag(t *testing.T) {
	manifest, err := os.ReadFile("../nodeconfig/testdata/1.37/kube-apiserver.yaml")
	if err != nil {
		t.Fatal(err)
	}
	off, err := nodeconfig.SetStaticPodGate(manifest, release.Gate, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []release.GateState{release.GALocked, release.Removed} {
		r, _ := release.Get("1.37")
		r.GateState = state
		c := &Cluster{Release: r}
		edits, err := c.staticPodGateEdits(map[profile.Component][]byte{profile.APIServer: off}, map[profile.Component]bool{profile.APIServer: true})
		if err != nil {
			t.Fatal(err)
		}
		gates, err := nodeconfig.StaticPodGates(edits[profile.APIServer])
		if _, named := gates[release.Gate]; err != nil || named {
			t.Errorf("%s: the restored flag names the gate: %v %v", state, gates, err)
		}
		if again, _ := c.staticPodGateEdits(map[profile.Component][]byte{profile.APIServer: edits[profile.APIServer]}, map[profile.Component]bool{profile.APIServer: true}); len(again) != 0 {
			t.Errorf("%s: a flag without the gate already runs the locked value", state)
		}
	}
}

// A manifest that stops naming the gate is in force once the process
// stops naming it too: the process before it (DRAAdminAccess=false, or
// =true) is not the one the manifest starts.
func TestAFlagWithoutTheGateIsInForceOnlyWithoutIt(t *testing.T) {
	manifest, err := os.ReadFile("../nodeconfig/testdata/1.37/kube-apiserver.yaml")
	if err != nil {
		t.Fatal(err)
	}
	without, err := nodeconfig.EditStaticPodGates(manifest, nil, []string{release.Gate})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := release.Get("1.37")
	target, err := (&Cluster{Release: r}).gateTarget(profile.APIServer, without)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]bool{
		"kube-apiserver --feature-gates=DRAAdminAccess=false":                            false,
		"kube-apiserver --feature-gates=DRAAdminAccess=true":                             false,
		"kube-apiserver --feature-gates=DRAAdminAccess=true,DRAConsumableCapacity=false": false,
		"kube-apiserver --authorization-mode=Node,RBAC":                                  true,
		"kube-apiserver --feature-gates=DRAConsumableCapacity=false":                     true,
	} {
		if got, _ := target.inForce(process{Command: cmd}); got != want {
			t.Errorf("%q: in force %t, want %t (%s)", cmd, got, want, target.what)
		}
	}
}
