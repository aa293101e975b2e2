// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"fmt"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// Why clients are held while kube-apiserver restarts.
//
// A client that finds kube-apiserver's port closed fails at once, and
// client-go's reflector counts every failure: its back-off doubles from
// 0.8 s up to 30 s (with jitter 60 s) and is forgotten only two minutes after
// the last one, so pods after a move started a minute and more late
// (docs/benchmarks.md, "What a restart's steps save"). So while kube-apiserver
// restarts, the control-plane node drops new connections to its port instead
// of refusing them: a client's connect then waits in the kernel's SYN
// retransmissions (1, 3, 7, 15 s) and succeeds on the first one after the
// hold is lifted, without a failure to count. Existing connections are left
// alone (only NEW ones are dropped), so the old process still closes its
// watches cleanly. Held are the other nodes (their kubelets) and every pod
// that dials this address. Not the kubernetes Service: kube-apiserver takes
// its own address out of it from its shutdown until it serves again, and
// kube-proxy refuses connections to a Service without endpoints at once, on
// every node; so the suite points its driver at this address
// (APIServerAddress). Let through are the Docker
// network's gateway, through which the suite's own client reaches the
// published port and checks that the new process serves and authorizes, and
// the control-plane node itself (the loopback interface, which also carries
// its connections to its own address): its kubelet creates
// kube-apiserver's mirror pod before it starts the new container, so a held
// kubelet waited out its 30 s dial time-out before kube-apiserver could
// start. kube-controller-manager and
// kube-scheduler on that node are therefore not held; they stop with
// kube-apiserver and start once it serves, after that kubelet has been
// restarted (restartWithAPIServer).

// holdComment tags the rule, so that one left by an interrupted run is found
// and removed by the next hold or lift.
const holdComment = "kep5018-e2e-apiserver-restart"

// apiServerPort is where kube-apiserver listens on the control-plane node
// (kubeadm's default): the port the hold holds, so also the one the suite
// points its driver at (APIServerAddress) and checks for readiness.
const apiServerPort = "6443"

const holdScript = `gw=$(ip route | awk '/^default/ {print $3; exit}')
[ -n "$gw" ] || { echo "no default route"; exit 1; }
tag="-p tcp --dport $3 -m comment --comment $1"
for r in "-s $gw $tag -j ACCEPT" "-i lo $tag -j ACCEPT" "$tag -m conntrack --ctstate NEW -j DROP"; do
  while iptables -D INPUT $r 2>/dev/null; do :; done
done
[ "$2" = lift ] && exit 0
iptables -I INPUT $tag -m conntrack --ctstate NEW -j DROP &&
iptables -I INPUT -i lo $tag -j ACCEPT &&
iptables -I INPUT -s $gw $tag -j ACCEPT`

// holdClients makes new connections to kube-apiserver on cp wait until
// liftHold.
func holdClients(cp nodes.Node) error {
	if out, err := run(cp, holdScript, holdComment, "hold", apiServerPort); err != nil {
		return fmt.Errorf("holding kube-apiserver's clients on %s: %w: %s", cp, err, out)
	}
	return nil
}

// liftHold removes the hold (and any left by an interrupted run); removing
// none is no error.
func liftHold(cp nodes.Node) { run(cp, holdScript, holdComment, "lift", apiServerPort) }
