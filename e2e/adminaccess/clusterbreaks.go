// SPDX-License-Identifier: Apache-2.0

package adminaccess

// The cluster the run relies on, watched for the whole run
// (e2e/clusterwatch). One process watches: process 1, which makes the
// cluster, runs the Serial specs that move it (Ginkgo runs them there,
// alone) and writes the report; one set of watches and one writer of the
// breaks, where every process watching would load kube-apiserver N times
// and could disagree on when a break began. Every process announces the
// moves it makes (kindcluster's Cluster.Moves) in a file the watcher
// reads, and follows the breaks the watcher writes: a spec that would
// start while a break is open fails at once, and the shared waits end as
// soon as one opens, each with the break in its message. The report counts
// a spec that ran while the cluster was broken as "cluster broke"
// (report.ClusterBroke), not as a failed requirement.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterwatch"
)

var (
	// clusterWatcher runs on process 1 from the set-up to the teardown.
	clusterWatcher *clusterwatch.Watcher
	// clusterBreaks are the run's breaks once the watch stopped (process 1).
	clusterBreaks []clusterwatch.Break
	// breaks follows the breaks file on every process.
	breaks breakFollower
)

func breaksFile() string { return filepath.Join(theRun.Layout.Artifacts, clusterwatch.BreaksFile) }
func movesFile() string  { return filepath.Join(theRun.Layout.Artifacts, clusterwatch.MovesFile) }

// clearClusterRecord removes a former run's moves and breaks (process 1,
// before any process starts a spec).
func clearClusterRecord() {
	os.MkdirAll(theRun.Layout.Artifacts, 0o755)
	os.Remove(breaksFile())
	os.Remove(movesFile())
}

// watchCluster starts, on every process, the announcing of its moves and
// the following of the breaks, and on process 1 the watch itself. The
// watch outlives the suite node that starts it (its context ends with the
// node).
func watchCluster() {
	if env.Cluster != nil {
		env.Cluster.Moves = announceMove
	}
	if ginkgo.GinkgoParallelProcess() == 1 {
		ns := env.Driver.Namespace
		if env.Vendor != nil {
			ns = env.Vendor.DriverNamespace // "" where not given: no driver pods watched
		}
		clusterWatcher = clusterwatch.Start(context.Background(), clusterwatch.Config{Client: env.Client, DriverNamespace: ns,
			Dir: theRun.Layout.Artifacts, Logf: func(format string, args ...any) { framework.Logf(format, args...) }})
	}
	breaks.start()
}

// stopWatching ends the watch before the teardown, which would read as
// every node gone, and keeps the breaks for the report (process 1).
func stopWatching() {
	if clusterWatcher != nil {
		clusterBreaks = clusterWatcher.Stop()
		clusterWatcher = nil
	}
}

// announceMove is Cluster.Moves: the move's lines in the shared file.
func announceMove(what string) func() {
	end, err := clusterwatch.BeginMove(movesFile(), what)
	if err != nil {
		framework.Logf("cluster watch: the move %q could not be announced, the watcher may take it for a break: %v", what, err)
	}
	return end
}

// failIfBroken fails a spec that would start while a break is open, with
// the break in its message, before the framework makes its namespace.
func failIfBroken() {
	all, err := clusterwatch.ReadBreaks(breaksFile())
	if err != nil {
		framework.Logf("cluster watch: reading %s: %v", breaksFile(), err)
	}
	if say := clusterwatch.Say(all); say != "" {
		ginkgo.Fail(say + "; this spec did not start")
	}
}

// untilBroken is ctx, ended with the break for its cause as soon as one
// opens: a wait given it fails at once, and gomega's message says "Context
// was cancelled (cause: the cluster broke under the run ...)".
func untilBroken(ctx context.Context) (context.Context, context.CancelFunc) {
	bctx := breaks.current()
	out, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(bctx, func() { cancel(context.Cause(bctx)) })
	return out, func() { stop(); cancel(nil) }
}

// breakFollower reads the breaks file each second (a local file: the
// watches are process 1's) and keeps a context that ends while a break is
// open; a cluster whole again gets a new one.
type breakFollower struct {
	once   sync.Once
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func (b *breakFollower) current() context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil {
		b.ctx, b.cancel = context.WithCancelCause(context.Background())
	}
	return b.ctx
}

func (b *breakFollower) start() {
	b.once.Do(func() {
		go func() {
			for range time.Tick(time.Second) {
				all, _ := clusterwatch.ReadBreaks(breaksFile())
				say := clusterwatch.Say(all)
				ctx := b.current()
				b.mu.Lock()
				switch {
				case say != "" && ctx.Err() == nil:
					b.cancel(errors.New(say))
				case say == "" && ctx.Err() != nil:
					b.ctx = nil
				}
				b.mu.Unlock()
			}
		}()
	})
}
