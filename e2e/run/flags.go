package run

import (
	"path/filepath"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/variables"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// built is what the steps before the suite made for one release.
type built struct {
	// nodeImage is the release's node image ("none" on an existing
	// cluster).
	nodeImage string
	// upgradeBits is the status file of the next release's bits, got
	// beside the steps (empty where the run needs none).
	upgradeBits string
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
// suite's flags: the variables' own, with the node image and the folder
// the steps before made of them, and what else those steps built.
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
	args = append(args, "--junit-report=junit.xml", "--json-report=ginkgo-report.json", "--output-dir="+dir, suite, "--")
	sc := c.With("NODE_IMAGE", b.nodeImage).With("ARTIFACTS", dir)
	args = append(args, variables.SuiteFlags(sc.Get, nil)...)
	args = append(args, "--upgrade-bits="+b.upgradeBits, "--testdriver-archive="+b.driverArchive, "--testdriver-tag="+b.driverTag,
		"--timeline-file="+b.timeline, "--source-root="+c.Root(), "--output-dir="+c.Out())
	if c.Existing() {
		args = append(args, "--kubeconfig="+c.Kubeconfig())
	}
	return args, nil
}
