// SPDX-License-Identifier: Apache-2.0

// Package publish keeps the node's ResourceSlices in the API server as the
// driver describes them, also after the kubelet deleted them behind the
// publishing controller's back.
//
// Why: the kubelet deletes every ResourceSlice of its node whenever it starts
// (pkg/kubelet/cm/dra/plugin: "When kubelet starts up, ... it is better to
// not advertise any local resources"), and the publishing controller
// (k8s.io/dynamic-resource-allocation/resourceslice) puts them back only
// once its informer sees the deletion. After a kube-apiserver restart that
// informer's watch resumes at a resource version the new kube-apiserver no
// longer has ("too old resource version"), and client-go relists only after
// its back-off, which grows with every restart within two minutes: measured
// in a suite run, the control-plane node's devices came back 35-58 s after
// its kubelet restarted, and every spec in that time waited for them. So a
// Keeper asks the API server itself how many of the node's slices there are
// and, when there are fewer than all for two looks in a row, starts the
// controller anew: its first list sees the truth and it publishes at once.
package publish

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// Controller is a running publisher (a *resourceslice.Controller).
type Controller interface{ Stop() }

// Keeper runs a Controller and starts it anew when the node's slices are gone.
type Keeper struct {
	// Start starts the controller.
	Start func(ctx context.Context) (Controller, error)
	// Published says how many of the node's slices of this driver the API
	// server has.
	Published func(ctx context.Context) (int, error)
	// Want is how many slices the node has when all are published (0: any
	// one will do). With several pools (spare ones) some may come back
	// while others stay gone: the controller's queue backs off a pool whose
	// writes failed while kube-apiserver was away, exponentially, and no
	// look at "none" would ever start it anew (seen: a node's spare pools
	// back 48 s after a kubelet restart while its own pool was there).
	Want int
	// Period is how often Published is asked.
	Period time.Duration
}

// gone is how many looks in a row must find no slice before the controller
// is started anew: a controller whose watch works puts them back within its
// sync delay, before the second look.
const gone = 2

// Run starts the controller and keeps it until ctx ends; it returns only
// the error of a start.
func (k *Keeper) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	c, err := k.Start(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if c != nil {
			c.Stop()
		}
	}()
	ticker := time.NewTicker(k.Period)
	defer ticker.Stop()
	missing := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		n, err := k.Published(ctx)
		switch {
		case err != nil:
			// kube-apiserver away (restarting): nothing is known.
			continue
		case n >= max(k.Want, 1):
			missing = 0
			continue
		}
		if missing++; missing < gone {
			continue
		}
		logger.Info("the node's ResourceSlices are gone and the publishing controller has not put them back: starting it anew", "looks", missing, "period", k.Period, "published", n, "want", k.Want)
		c.Stop()
		c = nil
		next, err := k.Start(ctx)
		if err != nil {
			return err
		}
		c, missing = next, 0
	}
}
