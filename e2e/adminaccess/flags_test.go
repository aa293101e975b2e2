// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Every spec that runs in a spare pool of the bundled driver has one of its
// own: the allocation group's core promises, and the allocators group's
// with its prioritized list's once per other implementation, on every
// release the table knows.
func TestTheDriverHasASparePoolForEveryPooledSpec(t *testing.T) {
	for _, minor := range release.Minors() {
		rel, err := release.Get(minor)
		if err != nil {
			t.Fatal(err)
		}
		need := len(corePromises)
		if n := len(allocatorSchedulers(rel)); n > 0 {
			need = allocatorSlot(n-1, len(corePromises))
		}
		if need > contract.Slots {
			t.Errorf("Kubernetes %s: %d specs run in spare pools, the driver publishes %d", minor, need, contract.Slots)
		}
	}
}

// An allocator scheduler runs the cluster's kube-scheduler's command with
// the feature set's gates moved as a move of the cluster's would, its own
// configuration, and none of the flags only the static pod can use.
func TestAnAllocatorSchedulerRunsTheClustersCommandWithItsSet(t *testing.T) {
	s := allocatorScheduler{allocator: "experimental", set: release.FeatureSet{SchedulerGates: map[string]bool{"DRAConsumableCapacity": true}}}
	got, err := s.command([]string{"kube-scheduler", "--authentication-kubeconfig=/etc/kubernetes/scheduler.conf", "--bind-address=127.0.0.1",
		"--feature-gates=DRAAdminAccess=true,DRADeviceTaints=false", "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true", "--v=2", "--vmodule=x=1"},
		[]string{"DRAConsumableCapacity", "DRADeviceTaints"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kube-scheduler", "--v=2", "--config=" + schedulerConfigDir + "/config.yaml", "--vmodule=" + release.AllocatorVModule,
		"--feature-gates=DRAAdminAccess=true,DRAConsumableCapacity=true"}
	if !slices.Equal(got, want) {
		t.Errorf("command\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(s.schedulerConfig(), "schedulerName: adminaccess-scheduler-experimental") || !strings.Contains(s.schedulerConfig(), "leaderElect: false") {
		t.Errorf("configuration:\n%s", s.schedulerConfig())
	}
}

// The scheduler-off group's kube-scheduler runs the cluster's command with
// DRAAdminAccess alone moved, as SetAdminAccess moves the cluster's: the
// other DRA gates stay as the cluster has them.
func TestTheGateSchedulerMovesOnlyDRAAdminAccess(t *testing.T) {
	cluster := []string{"kube-scheduler", "--bind-address=127.0.0.1", "--feature-gates=DRAAdminAccess=true,DRADeviceTaints=false", "--leader-elect=false", "--v=2"}
	for _, enable := range []bool{false, true} {
		s := gateScheduler(enable)
		got, err := s.command(cluster, []string{"DRAConsumableCapacity", "DRADeviceTaints"})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"kube-scheduler", "--v=2", "--config=" + schedulerConfigDir + "/config.yaml", "--vmodule=" + release.AllocatorVModule,
			fmt.Sprintf("--feature-gates=DRAAdminAccess=%t,DRADeviceTaints=false", enable)}
		if !slices.Equal(got, want) {
			t.Errorf("DRAAdminAccess=%t: command\n got %q\nwant %q", enable, got, want)
		}
		if s.name() != "adminaccess-scheduler-gate" {
			t.Errorf("name %q: both processes must carry the one name its pods ask for", s.name())
		}
	}
}
