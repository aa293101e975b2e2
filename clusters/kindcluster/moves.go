// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// What the suite itself moves: every restart of a component and every
// release switch is announced to Cluster.Moves, where set, so that a
// watcher of the cluster (e2e/clusterwatch) reads a component down inside
// one as the suite's doing, not as the cluster breaking.

// moving announces a move and returns what ends it (nothing where no one
// listens).
func (c *Cluster) moving(what string) (end func()) {
	if c.Moves == nil {
		return func() {}
	}
	return c.Moves(fmt.Sprintf("%s: %s", c.Name, what))
}

// restartMove announces a restart of ch's components. A restart that does
// not wait (WriteStaticPodGates: the components may refuse their flags, on
// purpose) leaves them the suite's until a restart that waits has them
// serve again: its end ends those too.
func (c *Cluster) restartMove(ch change) (end func()) {
	var comps []string
	for comp := range ch.edited {
		comps = append(comps, string(comp))
	}
	slices.Sort(comps)
	what := "restart of " + strings.Join(comps, ", ")
	if ch.target == nil {
		c.leftDown = append(c.leftDown, c.moving(what+", not waited for"))
		return func() {}
	}
	own := c.moving(what)
	return func() {
		own()
		for _, e := range c.leftDown {
			e()
		}
		c.leftDown = nil
	}
}

// kubeletMove announces a restart of n's kubelet.
func (c *Cluster) kubeletMove(node string) (end func()) {
	return c.moving(fmt.Sprintf("restart of %s on %s", profile.Kubelet, node))
}
