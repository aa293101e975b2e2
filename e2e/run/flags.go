// SPDX-License-Identifier: Apache-2.0

package run

import (
	"path/filepath"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/e2e/variables"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// built is what the steps before the suite made for one release.
type built struct {
	// nodeImage is the release's node image ("none" on an existing
	// cluster).
	nodeImage string
	// run is the release's run, resolved at its start (resolve): the
	// upgrade's decision and where its bits go are known before any step;
	// runFile is where the suite's step wrote it, with what the steps
	// built (theRun).
	run     resolved.Run
	runFile string
	// stopBeside end what still runs beside the steps, and wait for it:
	// the bits' getter, the builds beside (buildsBeside).
	stopBeside []func()
	// driver waits for the bundled driver's image, built beside the steps
	// before it, and says how long its build took; suiteCompiled waits for
	// the suite's compile beside them.
	driver        func() (image.Built, time.Duration, error)
	suiteCompiled func()
	// suiteBinary is the suite's test binary built beside, which Ginkgo
	// runs ("": Ginkgo compiles ./e2e itself).
	suiteBinary string
	// driverTag and driverArchive are the bundled driver's image (no
	// archive where the nodes pull TESTDRIVER_IMAGE).
	driverTag, driverArchive string
	// timeline is the file of the steps' times, for the report.
	timeline string
}

// releaseDir is where one release's reports go: ARTIFACTS/<release>.
func (c Config) releaseDir() string { return filepath.Join(c.Get("ARTIFACTS"), c.Get("K8S_VERSION")) }

// GinkgoCommand is the command line (after "go") that runs one release's
// suite: Ginkgo in parallel with the variables' Ginkgo flags and
// GINKGO_ARGS, its reports in the release's folder, and after "--" the
// suite's one flag, the resolved run the steps before wrote (b.runFile),
// which holds the variables' values and what those steps built.
func (c Config) GinkgoCommand(b built) ([]string, error) {
	extra, err := ginkgoArgs(c)
	if err != nil {
		return nil, err
	}
	dir := c.releaseDir()
	args := append([]string{"tool", "ginkgo", "-p"}, variables.GinkgoFlags(c.Get, "--", nil)...)
	args = append(args, "--fail-on-empty", "--tags=e2e")
	args = append(args, extra...)
	suite := "./e2e"
	if b.suiteBinary != "" {
		suite = b.suiteBinary // built beside the node image
	}
	return append(args, "--junit-report=junit.xml", "--json-report=ginkgo-report.json", "--output-dir="+dir, suite, "--", "--run="+b.runFile), nil
}

// inputs are what resolved.New resolves the release's run from: the
// variables' values, and where the steps will put what they make (the
// timeline; the status file of the next release's bits, on clusters the
// suite makes unless UPGRADE=0, as releaseSteps gets them).
func (c Config) inputs(timeline string) resolved.Inputs {
	in := resolved.Inputs{Get: c.Get, Root: c.Root(), Output: c.Out(), Artifacts: c.releaseDir(), Timeline: timeline}
	if !c.Existing() && c.Get("UPGRADE") != "0" {
		in.UpgradeBits = filepath.Join(c.Out(), "upgrade-bits-"+c.Get("K8S_VERSION")+".json")
	}
	return in
}

// theRun is the release's resolved run with what the steps built: the
// node image ("none" on an existing cluster) and the driver's image.
func (b *built) theRun() resolved.Run {
	r := b.run
	r.Cluster.NodeImage = b.nodeImage
	r.Driver.Archive, r.Driver.Tag = b.driverArchive, b.driverTag
	return r
}
