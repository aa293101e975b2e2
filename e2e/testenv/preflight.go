// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// Checks of an existing cluster that refuse a run in one line, before any
// spec: it answers, serves DRA, and runs the release the run was given.

// Preflight checks an existing cluster before anything is built (make
// preflight): the kubeconfig's context kubeContext ("" its current one)
// answers, the cluster serves resource.k8s.io and runs each of releases.
// The suite's own processes check the same in Resolve, on their client set.
func Preflight(ctx context.Context, kubeconfig, kubeContext string, releases ...string) error {
	client, err := clientOf(kubeconfig, kubeContext)
	if err != nil {
		return err
	}
	name := KubeconfigName(kubeconfig, kubeContext)
	if err := answers(ctx, client, name); err != nil {
		return err
	}
	return servesRelease(client, name, releases...)
}

// servesRelease checks that the cluster serves resource.k8s.io and runs
// each of releases.
func servesRelease(client kubernetes.Interface, kubeconfig string, releases ...string) error {
	return serves(client, kubeconfig, func(gitVersion string) error {
		for _, r := range releases {
			if err := ReleaseMatches(r, gitVersion); err != nil {
				return err
			}
		}
		return nil
	})
}

// serves checks that the cluster serves resource.k8s.io and that its
// kube-apiserver's version matches.
func serves(client kubernetes.Interface, kubeconfig string, matches func(gitVersion string) error) error {
	if _, err := deploy.ResourceVersion(client); err != nil {
		return err
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("the cluster of kubeconfig %s does not say its version: %w", kubeconfig, err)
	}
	if err := matches(v.GitVersion); err != nil {
		return fmt.Errorf("the cluster of kubeconfig %s: %w", kubeconfig, err)
	}
	return nil
}

// ReleaseMatches refuses a K8S_VERSION that an existing cluster's
// kube-apiserver (gitVersion) contradicts: another minor, or, where a patch
// was given, another patch. Every expected text and declared skip comes from
// the release table's row, so a run must never check one release's promises
// against another.
func ReleaseMatches(given, gitVersion string) error {
	r, err := release.Get(given)
	if err != nil {
		return err
	}
	return rowMatches(r, given, gitVersion)
}

// rowMatches is ReleaseMatches on given's row r, resolved already (the
// suite's run).
func rowMatches(r release.Release, given, gitVersion string) error {
	at, err := r.AtPatch(gitVersion)
	if err != nil {
		return fmt.Errorf("it runs Kubernetes %s, not %s: run with K8S_VERSION=%s", gitVersion, given, minorOf(gitVersion))
	}
	// A patch or a pre-release given ("1.35.8", "1.38.0-rc.0") is one the
	// cluster must run; a minor, any of its patches.
	numbers, _, _ := strings.Cut(strings.TrimPrefix(given, "v"), "-")
	if strings.Count(numbers, ".") == 2 && at.Version != r.Version {
		return fmt.Errorf("it runs Kubernetes %s, not %s: run with K8S_VERSION=%s or %s", gitVersion, given, r.Minor, at.Version)
	}
	return nil
}

// minorOf is "1.36" of "v1.36.3".
func minorOf(gitVersion string) string {
	parts := strings.SplitN(strings.TrimPrefix(gitVersion, "v"), ".", 3)
	if len(parts) < 2 {
		return gitVersion
	}
	return parts[0] + "." + parts[1]
}

// CheckVendorArgs checks the names of a driver of the user's own, without
// a cluster: both or neither, and only with an existing cluster.
func CheckVendorArgs(kubeconfig, driver, class, adminCheck, workloadImage string) error {
	if driver == "" && class == "" {
		if adminCheck != "" || workloadImage != "" {
			return fmt.Errorf("ADMIN_CHECK and WORKLOAD_IMAGE go with a driver of your own: give DRIVER and DEVICE_CLASS too")
		}
		return nil
	}
	if adminCheck != "" && workloadImage == "" {
		return fmt.Errorf("ADMIN_CHECK=%q runs in the specs' containers, and the bundled workload image has no shell: give WORKLOAD_IMAGE, an image with sh and the command's tools", adminCheck)
	}
	if driver == "" || class == "" {
		return fmt.Errorf("DRIVER=%q DEVICE_CLASS=%q: a driver of your own needs both, the driver's name and a DeviceClass that selects its devices", driver, class)
	}
	if kubeconfig == "" {
		return fmt.Errorf("DRIVER=%s: a driver of your own runs on your cluster; give it with KUBECONFIG=path on the make command line", driver)
	}
	return nil
}

// clientOf is a client of the cluster a kubeconfig's context names.
func clientOf(kubeconfig, kubeContext string) (*kubernetes.Clientset, error) {
	cfg, err := kindcluster.ClientConfig(kubeconfig, kubeContext)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", KubeconfigName(kubeconfig, kubeContext), err)
	}
	return kubernetes.NewForConfig(cfg)
}
