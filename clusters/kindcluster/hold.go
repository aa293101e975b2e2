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
// the last one. Measured on 1.33 after a kube-apiserver move of 9-13 s: a
// worker's kubelet started a pod bound to it 63 s late, and the first pod
// after such a move waited 52 s to 1:40 in all. So while kube-apiserver
// restarts, the control-plane node drops new connections to its port instead
// of refusing them: a client's connect then waits in the kernel's SYN
// retransmissions (1, 3, 7, 15 s) and succeeds on the first one after the
// hold is lifted, without a failure to count. Existing connections are left
// alone (only NEW ones are dropped), so the old process still closes its
// watches cleanly. Two sources are let through: loopback (the node's own
// health checks of 127.0.0.1) and the Docker network's gateway, through which
// the suite's own client reaches the published port and checks that the new
// process serves and authorizes.

// holdComment tags the rule, so that one left by an interrupted run is found
// and removed by the next hold or lift.
const holdComment = "kep5018-e2e-apiserver-restart"

const holdScript = `gw=$(ip route | awk '/^default/ {print $3; exit}')
[ -n "$gw" ] || { echo "no default route"; exit 1; }
rule="-p tcp --dport 6443 -m conntrack --ctstate NEW ! -s $gw ! -d 127.0.0.1 -m comment --comment $1 -j DROP"
while iptables -D INPUT $rule 2>/dev/null; do :; done
[ "$2" = lift ] || iptables -I INPUT $rule`

// holdClients makes new connections to kube-apiserver on cp wait until the
// returned lift is called (lift may be called more than once).
func holdClients(cp nodes.Node) (lift func(), err error) {
	if out, err := run(cp, holdScript, holdComment, "hold"); err != nil {
		return func() {}, fmt.Errorf("holding kube-apiserver's clients on %s: %w: %s", cp, err, out)
	}
	return func() { liftHold(cp) }, nil
}

// liftHold removes the hold (and any left by an interrupted run).
func liftHold(cp nodes.Node) { run(cp, holdScript, holdComment, "lift") }
