// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"

	draclient "k8s.io/dynamic-resource-allocation/client"
)

// PreflightVendorDriver checks a driver of the user's own on its cluster
// before anything is built (make preflight), each failure in one line: the
// class exists and selects devices the driver publishes, none sharing
// counters; DRIVER_NAMESPACE, where given, holds pods; and some node has
// every device of the class free. The suite checks the first two again in
// Resolve and the last in Setup, where no spec of its own can hold a device yet.
func PreflightVendorDriver(ctx context.Context, kubeconfig, kubeContext, driver, class, namespace string) error {
	if driver == "" {
		return nil
	}
	client, err := clientOf(kubeconfig, kubeContext)
	if err != nil {
		return err
	}
	dra := draclient.New(client)
	devices, err := readVendorDriver(ctx, dra, driver, class)
	if err != nil {
		return err
	}
	if err := checkDriverNamespace(ctx, client, driver, namespace); err != nil {
		return err
	}
	_, err = checkIdle(ctx, dra, class, devices)
	return err
}
