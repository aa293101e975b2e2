// SPDX-License-Identifier: Apache-2.0

// Package release is the one table of everything that differs between the
// Kubernetes releases the suite supports. Specs and cluster code read facts from
// it; nothing else branches on version numbers. Every row was checked against
// the k8s.io/kubernetes module source at the pinned patch (see the comments).
package release

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// GateState is the maturity of DRAAdminAccess in a release.
type GateState string

const (
	Alpha    GateState = "alpha"     // default off, may be switched
	Beta     GateState = "beta"      // default on, may be switched
	GALocked GateState = "GA-locked" // on, and a component refuses to start with it off
	// Removed: the gate is gone (planned for 1.39), its behaviour always
	// on; a component refuses to start with the gate named at all.
	Removed GateState = "removed"
)

// Gate is the feature gate this suite is about.
const Gate = "DRAAdminAccess"

// Release is one supported Kubernetes minor release.
type Release struct {
	Minor string // "1.35"
	// Version is the pinned patch, "1.35.8", or a pre-release of a minor
	// not yet released, "1.38.0-beta.0": carried whole, into the module
	// the node image is built from, the binaries' gitVersion, the image's
	// tag, the run and the report.
	Version string
	// Toolchain is the Go toolchain the release's module needs where it
	// asks for a newer Go than the project's own ("go1.27.3": the go
	// line of k8s.io/kubernetes' go.mod), taken from the module proxy as
	// the golang.org/toolchain module; "" builds it with the project's Go.
	Toolchain string
	// Published is kind's published node image for this minor (KindVersion's
	// release notes), pinned by digest; "" where kind publishes none. Its
	// patch may differ from Version, the patch the offline build pins.
	Published string
	// Served lists every resource.k8s.io version the cluster must serve with
	// the suite's runtime-config, oldest first; the last is the one discovery
	// prefers (the suite picks the newest by discovery).
	Served []string
	// ClaimQuotaVersion is the resource.k8s.io version whose ResourceClaims
	// kube-controller-manager's quota evaluator counts from its informer cache
	// (resourceapi in pkg/quota/v1/evaluator/core/resource_claims.go): v1beta1
	// in v1.33.13, v1 from v1.34.
	ClaimQuotaVersion string
	// RuntimeConfig is the apiserver --runtime-config the release needs for DRA.
	RuntimeConfig map[string]string
	// ExtraGates are switched on in every component (DRA itself is beta-off on 1.33).
	ExtraGates map[string]bool
	GateState  GateState
	// AdminLabel authorizes admin access in a namespace; StaleLabel is the other
	// release's key, which must not.
	AdminLabel string
	StaleLabel string
	// KubeletFailCgroupV1 is true where the kubelet refuses cgroup v1 unless its
	// configuration says failCgroupV1: false.
	KubeletFailCgroupV1 bool
	// KubeadmV1Beta4 is true where kind v0.33 renders kubeadm v1beta4 (extraArgs
	// as lists, so config patches must be JSON-6902 appends).
	KubeadmV1Beta4 bool
	Metrics        Metrics
	// OnByDefault are the allocator features kube-scheduler runs with when
	// only ExtraGates are set (pkg/features/kube_features.go); Allocators the
	// structured allocator's implementations, in the order it tries them.
	OnByDefault []Feature
	Allocators  []Allocator
	// DefaultAllocator is the implementation OnByDefault selects, as the
	// release's file states it; a test holds it to the rule (AllocatorFor).
	DefaultAllocator string
	// ExtendedResources: DRAExtendedResource is on by default (beta in
	// 1.36, GA in 1.37; pkg/features/kube_features.go).
	ExtendedResources bool
	// CountersWithDevices: a device that consumes counters must be in the
	// slice that defines its counter set, which the bundled driver's
	// partitionable layout must then publish beside its devices. v1.34.4's
	// kube-apiserver refuses a device whose counter set is in another slice
	// (pkg/apis/resource/validation/validation.go:670, 782-793) and its
	// allocator reads only the device's own slice's counters; 1.33's API
	// says the same ("unique in the ResourceSlice", v0.33.13). From 1.35 a
	// slice carries counters or devices, never both (validation.go:706 at
	// v1.35.4), and counter sets are the pool's.
	CountersWithDevices bool
	// EvictionEventOnce: kube-controller-manager's device taint eviction
	// puts its event (DeviceTaintEvictionReason) on the first pod it
	// evicts in its lifetime only: deletePodHandler hands every pod's
	// deletion one shared emitter, which the first deletion clears
	// (device_taint_eviction.go:254-258 at v1.34.4, the same at v1.34.11,
	// :262-265 at v1.33.13). 1.35 emits it for
	// each pod (addConditionAndDeletePod, :464 at v1.35.4). The condition
	// it writes before each deletion (DeviceTaintEvictionCondition) is
	// there on every release.
	EvictionEventOnce bool
	// FeatureMoves are the other feature sets the allocators group moves
	// kube-scheduler to (features.go says why these).
	FeatureMoves []FeatureMove
	// Sets are the cluster feature sets FEATURES takes besides the
	// defaults (featuresets.go); FeatureSetName is the one this value runs
	// ("" for the defaults; WithFeatures sets it).
	Sets           []ClusterSet
	FeatureSetName string
	// SchedulerIgnores are features an implementation supports that
	// kube-scheduler never passes to the allocator, so no gate of its
	// selects that implementation for them.
	SchedulerIgnores []Feature
	// Locked are the DRA gates besides DRAAdminAccess that the release
	// locks to true (LockToDefault in pkg/features/kube_features.go): a
	// component started with one of them false exits, so no move, feature
	// set or profile may turn one off. Removed are the DRA gates the release
	// no longer knows: a component given one at all exits ("unrecognized
	// feature gate"), so none may name one.
	Locked, Removed []string
	// Immutable is how the release's kube-apiserver prints the refusal of
	// a changed claim or template spec and of a changed allocation
	// (immutable.go).
	Immutable Immutability
	// Defects are the known upstream defects the release has (defects.go),
	// each under the allocators that have it.
	Defects []DefectAt
	// Unreachable are the allocator implementations no gate kube-scheduler
	// may be given selects for admin access, each with the reason: the
	// report and the sign-off name them, so that a column never reads as
	// if it had checked them.
	Unreachable map[string]string
}

// DeviceTaintEvictionReason and DeviceTaintEvictionMessage are the event
// kube-controller-manager's device taint eviction controller puts on a pod
// it deletes for an untolerated NoExecute device taint
// (pkg/controller/devicetainteviction, emitPodDeletionEvent; the same in
// v1.36.3 and v1.37.2).
const (
	DeviceTaintEvictionReason  = "DeviceTaintManagerEviction"
	DeviceTaintEvictionMessage = "Marking for deletion"
)

// DeviceTaintEvictionCondition is the reason of the DisruptionTarget
// condition kube-controller-manager's device taint eviction writes into a
// pod's status just before it deletes the pod (addConditionAndDeletePod:
// device_taint_eviction.go:265 at v1.34.4, :470 at v1.35.4, :486 at
// v1.36.3, :484 at v1.37.2), with DeviceTaintEvictionConditionMessage.
const (
	DeviceTaintEvictionCondition        = "DeletionByDeviceTaintManager"
	DeviceTaintEvictionConditionMessage = "Device Taint manager: deleting due to NoExecute taint"
)

// KindVersion is the kind release whose node images and Go module the suite uses.
const KindVersion = "v0.33.0"

const (
	labelAlpha = "resource.k8s.io/admin-access"
	labelBeta  = "resource.kubernetes.io/admin-access"
)

// table holds every supported release, keyed by minor. Each release is
// one file of this package (r1_37.go), whose init registers its row: adding
// a release is adding its file (docs/adding-a-release.md), and nothing else
// here names a minor.
var table = map[string]Release{}

// register adds one release's row; a minor twice is a mistake in the files.
func register(r Release) {
	if _, dup := table[r.Minor]; dup {
		panic("release " + r.Minor + " is registered twice")
	}
	table[r.Minor] = r
}

// Default is the release `make e2e` uses: the newest where the gate can still be switched.
const Default = "1.35"

// Minors lists the supported minor releases in order.
func Minors() []string {
	out := make([]string, 0, len(table))
	for m := range table {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Get finds a release by minor ("1.35") or patch ("1.35.8", "v1.35.8",
// "1.38.0-rc.0"): the pinned one, or another patch or pre-release of that
// minor to build or boot instead.
func Get(name string) (Release, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "v")
	if r, ok := table[name]; ok {
		return r, nil
	}
	// Any other patch of a supported minor: the row's facts were read at its
	// pinned patch, and a patch release does not change them.
	if parts := strings.SplitN(name, ".", 3); len(parts) == 3 {
		if r, ok := table[parts[0]+"."+parts[1]]; ok {
			if at, err := r.AtPatch(name); err == nil && at.Version == name {
				// kind's image runs its own patch: asked for another, the
				// suite builds the patch asked for (or, with NODE_IMAGE=pull,
				// refuses), never boots one patch under another's name.
				if at.PublishedPatch() != at.Version {
					at.Published = ""
				}
				return at, nil
			}
		}
	}
	return Release{}, fmt.Errorf("unknown Kubernetes release %q: supported releases are %s (or a patch of one, or a pre-release such as %s)",
		name, strings.Join(Minors(), ", "), examplePreRelease())
}

// examplePreRelease is a pre-release name Get takes, for its refusal.
func examplePreRelease() string {
	minors := Minors()
	return minors[len(minors)-1] + ".0-rc.0"
}

// PublishedPatch is the patch kind's published image runs ("1.35.8"), or "".
func (r Release) PublishedPatch() string {
	_, tag, ok := strings.Cut(r.Published, ":v")
	if !ok {
		return ""
	}
	patch, _, _ := strings.Cut(tag, "@")
	return patch
}

// preRelease matches the pre-release part Kubernetes' own releases carry
// ("-alpha.1", "-beta.0", "-rc.2"); a vendor's suffix ("-gke.1200",
// "-eks-4a8f", "+k3s1") is none.
var preRelease = regexp.MustCompile(`^-(alpha|beta|rc)\.[0-9]+`)

// AtPatch is the release as a node image of another patch of the same minor
// runs it: every version check then expects the version that booted
// ("v1.35.8" from kind's published image, "v1.38.0-rc.0" from a pre-release
// built offline). A Kubernetes pre-release stays whole; a vendor's suffix
// and build metadata go.
func (r Release) AtPatch(gitVersion string) (Release, error) {
	v := strings.TrimPrefix(strings.TrimSpace(gitVersion), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) != 3 || parts[0]+"."+parts[1] != r.Minor {
		return r, fmt.Errorf("Kubernetes %q is not a patch of %s", gitVersion, r.Minor)
	}
	patch, rest := parts[2], ""
	if i := strings.IndexAny(patch, "-+"); i >= 0 { // 1.35.4-rc.1, 1.35.4+build, 1.35.4-gke.1
		patch, rest = patch[:i], patch[i:]
	}
	n, err := strconv.Atoi(patch)
	if err != nil {
		return r, fmt.Errorf("Kubernetes %q is not a patch of %s", gitVersion, r.Minor)
	}
	if patch != strconv.Itoa(n) { // "08", "+8"
		return r, fmt.Errorf("Kubernetes %q is not a patch of %s", gitVersion, r.Minor)
	}
	rest, _, _ = strings.Cut(rest, "+")
	v = parts[0] + "." + parts[1] + "." + patch
	// A build after a pre-release ("-beta.0.45+abc123", git describe's)
	// is still that pre-release's, never the release's.
	v += preRelease.FindString(rest)
	r.Version = v
	return r, nil
}

// PreRelease is the pre-release the release runs ("rc.0" of
// "1.38.0-rc.0"), or "" for a release: a sign-off of one is never a
// sign-off of the release it precedes.
func (r Release) PreRelease() string {
	_, pre, _ := strings.Cut(r.Version, "-")
	return pre
}

// PreferredVersion is the resource.k8s.io version discovery prefers.
func (r Release) PreferredVersion() string { return r.Served[len(r.Served)-1] }

// ClaimQuotaMayMissDeletes is true where kube-controller-manager's quota
// controller can miss a ResourceClaim's deletion until its full resync (five
// minutes by default). Its monitor watches claims at the version discovery
// prefers (pkg/controller/resourcequota/resource_quota_monitor.go), its
// evaluator counts them from the ClaimQuotaVersion cache; where the two differ
// they are two informers, and a deletion the monitor sees first is recounted
// from a cache that still holds the claim. Nothing recounts it after that.
// Seen on v1.33.13 (v1beta2 watched, v1beta1 counted): a deleted claim stayed
// counted after the 3rd of 15 create-and-delete rounds.
func (r Release) ClaimQuotaMayMissDeletes() bool {
	return r.PreferredVersion() != r.ClaimQuotaVersion
}

// GitVersion is the version string the binaries report, "v1.35.4".
func (r Release) GitVersion() string { return "v" + r.Version }

// GateDefault is DRAAdminAccess's default in this release.
func (r Release) GateDefault() bool { return r.GateState != Alpha }

// GateSwitchable is false where the gate is locked to its default or gone.
func (r Release) GateSwitchable() bool { return r.GateState != GALocked && r.GateState != Removed }

// AdminAccessFieldPath is where the apiserver reports a denied request
// (pkg/registry/resource/utils.go, AuthorizedForAdmin).
func (r Release) AdminAccessFieldPath(request int) string {
	return fmt.Sprintf("spec.devices.requests[%d].adminAccess", request)
}

// AdminAccessStatusFieldPath is where a denied status update is reported (AuthorizedForAdminStatus).
func (r Release) AdminAccessStatusFieldPath(result int) string {
	return fmt.Sprintf("status.allocation.devices.results[%d].adminAccess", result)
}

// OrdinaryResultAdminAccess is the adminAccess a stored allocation result
// of a request without admin access (unset or false) has, as
// observe.AdminAccessField says it: "unset" on every release. Each
// allocator writes the field only for an admin-access request
// (allocateDevice: structured/allocator.go:1064-1065 at v0.33.13,
// allocator_stable.go:1094-1095 at v0.35.4 and the same lines of every
// implementation from v0.34.4), and kube-apiserver neither defaults it
// (pkg/apis/resource/v1*/defaults.go) nor, with the gate on, drops it
// (dropDisabledDRAAdminAccessFields, or ...StatusFields from 1.35,
// pkg/registry/resource/resourceclaim/strategy.go). A stored false or
// true would be another allocator's writing.
func (r Release) OrdinaryResultAdminAccess() string { return "unset" }

// AdminAccessDenial is the apiserver's exact denial text.
func (r Release) AdminAccessDenial() string {
	return fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace", r.AdminLabel)
}

// ControllerGateOffMessage is the Warning event message kube-controller-manager
// puts on a pod whose template asks for admin access while its gate is off
// (pkg/controller/resourceclaim/controller.go).
func (r Release) ControllerGateOffMessage(podClaimName string) string {
	return fmt.Sprintf("PodResourceClaim %s: admin access is requested, but the feature is disabled", podClaimName)
}

// ControllerGateOffReason is that event's reason.
const ControllerGateOffReason = "FailedResourceClaimCreation"

// SchedulerGateOffMessage is what the structured allocator says when the
// scheduler's gate is off (k8s.io/dynamic-resource-allocation structured allocator).
func (r Release) SchedulerGateOffMessage(namespace, claim, request string) string {
	return fmt.Sprintf("claim %s/%s, request %s: %s", namespace, claim, request, CauseGateOffRequested)
}

// LockedGateError is what a 1.36 component logs when started with the gate off.
func (r Release) LockedGateError() string {
	return fmt.Sprintf("cannot set feature gate %s to false, feature is locked to true", Gate)
}

// GateOffError is what a component of a release whose gate cannot be
// switched logs when started with --feature-gates=DRAAdminAccess=false
// (component-base featuregate, Set): the lock's refusal while the gate is
// locked, "unrecognized feature gate" once it is gone, which any value
// of it then meets. "" where the gate may be switched.
func (r Release) GateOffError() string {
	switch r.GateState {
	case GALocked:
		return r.LockedGateError()
	case Removed:
		return "unrecognized feature gate: " + Gate
	}
	return ""
}

// Next is the release after r in the table: the one an in-place upgrade from
// r goes to (and is downgraded from). The newest release has none.
func (r Release) Next() (Release, bool) {
	minors := Minors()
	for i, m := range minors {
		if m == r.Minor && i+1 < len(minors) {
			return table[minors[i+1]], true
		}
	}
	return Release{}, false
}
