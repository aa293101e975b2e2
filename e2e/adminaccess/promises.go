// SPDX-License-Identifier: Apache-2.0

package adminaccess

// Spec bodies as tables: each body with its sentence and KEP requirement, so
// that a group registers its own and the allocators group registers them
// again under each other allocator implementation.

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"
)

// allocationPromise is one spec body with its sentence and KEP requirement.
type allocationPromise struct {
	text, kep string
	labels    ginkgo.Labels
	run       func(context.Context, *framework.Framework)
}

// featurePromise is a spec body of a feature group that uses a driver
// instance of its own (partitionable devices, consumable capacity).
type featurePromise struct {
	text, kep string
	run       func(ctx context.Context, f *framework.Framework, parts *featureDriver, seen func(context.Context))
}

// itEach registers one spec per promise, each on the driver instance d.
// begin, when given, runs first in each spec and returns the check the
// body calls before it ends (the allocators group's: which implementation
// allocated); without it the body gets none.
func itEach(f *framework.Framework, d *featureDriver, promises []featurePromise, begin func(context.Context) func(context.Context)) {
	for _, p := range promises {
		it(p.text, kep(p.kep), func(ctx context.Context) {
			var seen func(context.Context)
			if begin != nil {
				seen = begin(ctx)
			}
			p.run(ctx, f, d, seen)
		})
	}
}
