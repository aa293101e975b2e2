package kindcluster

import (
	"reflect"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
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
