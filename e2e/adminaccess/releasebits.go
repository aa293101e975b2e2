package adminaccess

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// releaseBits are the control-plane images and kubelets of both releases of
// the upgrade spec, taken out of the two node images (a container of each
// and an export of its images: 16 s on a 2-core VM when not cached) while
// the parallel specs run, so that the Serial part, which nothing shortens
// by running beside it, does not wait for them. The next release's images
// are then loaded onto the control-plane node as well (5-6 s that the
// switch would otherwise spend).
var releaseBits bitsAhead

// bitsAhead is an extraction begun early and waited for once.
type bitsAhead struct {
	done     chan struct{}
	up, down *nodesource.ReleaseBits
	err      error
	// preload is why loading the next release's images ahead failed, if
	// it did.
	preload string
}

// begin starts the extraction where the upgrade spec will run: on the
// process that runs the Serial specs (1), with the spec not filtered out,
// the next release's node image given and release switching not a declared
// skip. The extraction is bounded by restoreTimeout, as a cleanup that
// puts the cluster back is.
func (a *bitsAhead) begin() {
	if !willRun(suitePreview, "upgrade") || ginkgo.GinkgoParallelProcess() != 1 || env.UpgradeNodeImage == "" || env.Cluster == nil {
		return
	}
	if _, declared := env.Rel.DeclaredSkip(release.NeedReleaseSwitching, env.Mode()); declared {
		return
	}
	from := env.Rel
	to, ok := from.Next()
	if !ok {
		return
	}
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		defer cancel()
		a.up, a.down, a.err = extractBoth(ctx, from, to)
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
		if !ok {
			return nil, nil, fmt.Errorf("Kubernetes %s has no next release in the table", env.Rel.Minor)
		}
		return extractBoth(ctx, env.Rel, to)
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

// extractBoth takes the release bits out of the next release's node image
// and the cluster's own.
func extractBoth(ctx context.Context, from, to release.Release) (up, down *nodesource.ReleaseBits, err error) {
	dir := filepath.Join(cfg.OutputDir, "release-bits")
	upImage, err := nodesource.Inspect(ctx, env.UpgradeNodeImage, to)
	if err != nil {
		return nil, nil, err
	}
	if up, err = nodesource.ExtractReleaseBits(ctx, upImage, filepath.Join(dir, to.Minor)); err != nil {
		return nil, nil, err
	}
	downImage, err := nodesource.Inspect(ctx, env.NodeImage, from)
	if err != nil {
		return nil, nil, err
	}
	down, err = nodesource.ExtractReleaseBits(ctx, downImage, filepath.Join(dir, from.Minor))
	return up, down, err
}
