// SPDX-License-Identifier: Apache-2.0

package adminaccess

// The suite's environment reaches a spec through its context, as upstream's
// newer DRA tests (test/e2e_dra) hand their phases a context: the
// registration paths (it, inEnv) put the process's env into the context of
// each body once, the body takes it out with envOf at its top and hands the
// fixtures what they use. Only the suite's own set-up, teardown and report
// (suite.go and what it calls) read the package's env.

import (
	"context"

	"github.com/onsi/ginkgo/v2"

	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
)

type envKey struct{}

// withEnv is ctx carrying the suite's environment e.
func withEnv(ctx context.Context, e *testenv.Env) context.Context {
	return context.WithValue(ctx, envKey{}, e)
}

// envOf is the suite's environment ctx carries; without one the spec fails
// saying which registration path forgot it (a body registered with
// ginkgo.It, ginkgo.BeforeEach, ... directly, not through it or inEnv).
func envOf(ctx context.Context) *testenv.Env {
	e, _ := ctx.Value(envKey{}).(*testenv.Env)
	if e == nil {
		ginkgo.Fail("e2e: this node's context carries no suite environment: register its body with it(...) or wrap it in inEnv(...)", 1)
	}
	return e
}

// inEnv is body with the process's environment in its context, for the
// nodes it does not register (BeforeEach, AfterEach, BeforeAll, AfterAll,
// DeferCleanup): Ginkgo gives each node a context of its own. The
// environment is read when the node runs, after the suite's set-up made it.
func inEnv(body func(context.Context)) func(context.Context) {
	return func(ctx context.Context) { body(withEnv(ctx, env)) }
}
