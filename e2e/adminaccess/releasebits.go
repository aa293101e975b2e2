// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// releaseBits are the control-plane images and kubelets of both releases of
// the upgrade spec, got while the parallel specs run, so that the Serial
// part, which nothing shortens by running beside it, does not wait for
// them. The cluster's own release's are taken out of its node image (a
// container and an export of its images: 16 s on a 2-core VM when not
// cached). The next release's come from the runner, which gets them beside
// the steps before the suite and the suite itself (the run's Upgrade.Bits:
// on a machine without that release's node image, minutes of compiling). The next
// release's images are then loaded onto the control-plane node as well
// (5-6 s that the switch would otherwise spend).
var releaseBits bitsAhead

// bitsBesideTimeout bounds the wait for the next release's bits that the
// runner gets beside the suite: built on a cold 2-core VM, at the lowest
// CPU priority, they take minutes more than the suite leaves them.
const bitsBesideTimeout = 30 * time.Minute

// bitsAhead is an extraction begun early and waited for once.
type bitsAhead struct {
	done     chan struct{}
	up, down *nodesource.ReleaseBits
	err      error
	// preload is why loading the next release's images ahead failed, if
	// it did.
	preload string
}

// begin starts the extraction where the upgrade spec will run: where the
// resolved run says it runs (with the next release's bits or node image),
// on the process that runs the Serial specs (1), with the spec not left
// out by Ginkgo's focus either.
func (a *bitsAhead) begin() {
	if !theRun.Upgrade.Runs || !willRun(suitePreview, "upgrade") || ginkgo.GinkgoParallelProcess() != 1 || env.Cluster == nil {
		return
	}
	from := env.Rel
	to, ok := from.Next()
	if !ok || to.Minor != theRun.Upgrade.Next {
		return // the spec says why (wait)
	}
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		a.up, a.down, a.err = extractBoth(context.Background(), from, to)
		if a.err != nil {
			return
		}
		// Not the spec's error if it fails: the switch loads what is
		// missing itself, and says so if that fails.
		if err := env.Cluster.LoadReleaseImages(a.up); err != nil {
			a.preload = err.Error()
		}
	}()
}

// wait returns what begin extracted, or extracts now where it did not begin.
func (a *bitsAhead) wait(ctx context.Context) (up, down *nodesource.ReleaseBits, err error) {
	if a.done == nil {
		to, ok := env.Rel.Next()
		if !ok || to.Minor != theRun.Upgrade.Next {
			return nil, nil, fmt.Errorf("the run upgrades Kubernetes %s to %q, which is not its next release in the table", env.Rel.Minor, theRun.Upgrade.Next)
		}
		return extractBoth(ctx, env.Rel, to)
	}
	select {
	case <-a.done:
	default:
		framework.Logf("waiting for the next release's bits (%s)", "got by the runner beside the suite: "+env.UpgradeBits)
		start := time.Now()
		defer func() { framework.Logf("the next release's bits came after %s", time.Since(start).Round(time.Second)) }()
	}
	select {
	case <-a.done:
		if a.preload != "" {
			framework.Logf("loading the %s images ahead failed, the switch loads them: %s", a.up.Release.Minor, a.preload)
		}
		return a.up, a.down, a.err
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// extractBoth gets the release bits of the next release (see releaseBits)
// and takes the cluster's own release's out of its node image; each step
// is bounded by restoreTimeout, as a cleanup that puts the cluster back is,
// and the wait for bits got beside the suite by bitsBesideTimeout.
func extractBoth(ctx context.Context, from, to release.Release) (up, down *nodesource.ReleaseBits, err error) {
	dir := filepath.Join(theRun.Layout.Output, "release-bits")
	// The cluster's own first: the next release's may still be compiling.
	if down, err = fromImage(ctx, env.NodeImage, from, filepath.Join(dir, from.Minor)); err != nil {
		return nil, nil, err
	}
	up, err = besideBits(ctx, env.UpgradeBits, to)
	return up, down, err
}

// fromImage takes release r's bits out of node image ref into dir.
func fromImage(ctx context.Context, ref string, r release.Release, dir string) (*nodesource.ReleaseBits, error) {
	ctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	img, err := nodesource.Inspect(ctx, ref, r)
	if err != nil {
		return nil, err
	}
	return nodesource.ExtractReleaseBits(ctx, img, dir)
}

// besideBits waits for the status file of release r's bits that the
// runner gets beside the suite, and reads it.
func besideBits(ctx context.Context, status string, r release.Release) (bits *nodesource.ReleaseBits, err error) {
	var done bool
	start := time.Now()
	poll := wait.PollUntilContextTimeout(ctx, 2*time.Second, bitsBesideTimeout, true, func(context.Context) (bool, error) {
		bits, done, err = nodesource.ReadBitsStatus(status, r)
		// The runner started the getter before the node image's step, and
		// it writes the file first: none a minute into the suite means it
		// never ran.
		if errors.Is(err, nodesource.ErrNoBitsStatus) && time.Since(start) > time.Minute {
			return true, nil
		}
		return done, nil
	})
	switch {
	case poll != nil:
		what := "its getter still at work"
		if errors.Is(err, nodesource.ErrNoBitsStatus) {
			what = "no status file: the runner's getter never wrote one"
		}
		return nil, fmt.Errorf("the Kubernetes %s bits the runner gets beside the suite were not there after %s (%s, %s): %w", r.Minor, time.Since(start).Round(time.Second), status, what, poll)
	case err != nil:
		return nil, fmt.Errorf("getting the Kubernetes %s bits beside the suite failed: %w", r.Minor, err)
	}
	framework.Logf("the Kubernetes %s bits for the upgrade: %s", r.Minor, bits.Image)
	return bits, nil
}
