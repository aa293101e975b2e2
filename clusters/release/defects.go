// SPDX-License-Identifier: Apache-2.0

package release

import (
	"fmt"
	"slices"
)

// A known upstream defect is a verdict, as a declared skip is. The spec that
// meets one still asserts the promise; where this table declares the defect
// for the release and the allocator kube-scheduler used, the spec expects
// the promise to fail exactly as declared and reports the defect instead of
// failing. Where the table declares it and the promise holds, the run fails
// ("declared defect not reproduced"), so that a fix upstream shows here and
// the row cannot go stale.

// DefectCase names one row. An upstream issue can hold more than one case
// (#140729's thread names the counters and the consumable capacity), each
// with its own spec, releases, allocators and outcome.
type DefectCase string

// Defect is one row.
type Defect struct {
	Case DefectCase
	// Issue is the upstream issue, "kubernetes/kubernetes#140729".
	Issue string
	// Title is the issue's title; Where, for a case the issue's own text
	// does not state, where in the issue it is named.
	Title, Where string
	// Minors are the releases that declare it (their DefectAt), every
	// patch of them; SeenAt the patches it was seen on; Allocators the
	// implementations with the defect: of one release where KnownDefect
	// gives the row, of every release in Defects.
	Minors, SeenAt []string
	Allocators     []string
	// Outcome is what the spec sees where the defect is present.
	Outcome string
	// Cause is the line the allocator logs (at AllocatorVModule's level)
	// when it passes over a device for the defect's reason: the spec
	// reports the defect only where kube-scheduler said that of the device
	// the admin-access request asked for, so that a refusal for any other
	// reason (a device in use, a selector, a taint) fails instead.
	Cause string
}

// DefectAdminConsumesCounters: the allocator checks a partitionable device's
// counters for an admin-access request too, so an admin claim cannot get a
// device whose counters an ordinary claim has used up. The API promises that
// admin access ignores "all ordinary claims to the device with respect to
// access modes and any resource allocations". Read in the modules
// (allocateDevice in structured/internal/*): at v0.35.4, v0.36.3 and v0.37.2
// every implementation calls checkAvailableCounters for an admin-access
// request as for any other; stable without exception, incubating and
// experimental skipping it only for a device that allows multiple
// allocations and already has capacity in use. (kube-scheduler does leave
// admin-access results out of the devices in use, allocateddevices.go, so an
// admin allocation does not take counters from later claims.) v0.34.4 does
// the same with the counters of the device's own slice (allocateDevice,
// allocator_experimental.go:1231-1242, allocator_incubating.go:1084-1095),
// and v1.34.4's allocateddevices.go:55 leaves admin results out as later
// releases do; 1.34's stable supports no feature, so it never allocates a
// partitionable device.
const DefectAdminConsumesCounters DefectCase = "kubernetes/kubernetes#140729 counters"

// DefectAdminConsumesCapacity: the same for a device that allows multiple
// allocations (consumable capacity, KEP-5075). Read in the modules
// (allocateDevice and the candidate loop in structured/internal/incubating
// and experimental, CmpRequestOverCapacity in consumable_capacity.go) at
// v0.34.4 and v0.35.4 (experimental) and v0.36.3 and v0.37.2 (incubating,
// experimental): an admin-access request's capacity, its own request or the
// request policy's default, is added to what the ordinary shares of the
// device already use and refused when that exceeds the device's capacity,
// as for any other request; stable supports no consumable capacity. kube-
// scheduler leaves admin-access results out of the capacity in use
// (allocateddevices.go), so an admin share takes nothing from later claims.
// The issue's thread names this case (thc1006, 2026-08-01: CmpRequestOverCapacity
// "runs for an admin request"); the fix proposed there covers only the counters.
const DefectAdminConsumesCapacity DefectCase = "kubernetes/kubernetes#140729 capacity"

// DefectDeviceTwiceInClaim: 1.33's allocator (structured/allocator.go at
// v0.33.13) skips its in-use check for an admin-access request, in its
// candidate loop (:823) and in allocateDevice (:997, the only check an
// allocationMode All request meets, :789), and never records the devices
// admin-access requests pick (:1054-1056), so one claim can get one device
// for two requests: two admin-access requests, or an ordinary and an
// admin-access one, in either order, and an admin-access request for every
// device after an ordinary or an admin-access one. Upstream settled that within a
// claim no device is used twice, with or without admin access, and fixed
// it for 1.34 (kubernetes/kubernetes#131299, allocatingDeviceForClaim in
// every implementation). The spec reads the cause in the claim's own
// allocation: its results name the device for both requests.
const DefectDeviceTwiceInClaim DefectCase = "kubernetes/kubernetes#131269"

// DefectNoExecuteToleranceLost: 1.34's allocator never copies a request's
// tolerations into its allocation result (the DeviceRequestAllocationResult
// built in Allocate, allocator_experimental.go:365-373 and its incubating
// and stable twins at v0.34.4, and still at v0.34.11), and kube-controller-
// manager's device taint eviction reads tolerations only there
// (pkg/controller/devicetainteviction/device_taint_eviction.go:619-670 at
// v1.34.4: allocatedDevice.Tolerations). So a NoExecute taint evicts every
// pod of a claim on the device, whether its request tolerates the taint or
// not: the tolerating admin-access pod is marked for deletion beside the one
// that does not tolerate it. Allocation itself honours the tolerations
// (allTaintsTolerated), so the claim does get the device. Fixed for 1.35 by
// kubernetes/kubernetes#134479 (results carry the request's tolerations,
// allocator_experimental.go:373 at v0.35.4). 1.33's allocator has it too,
// but no 1.33 run has device taints on. The spec reads the cause in the
// claim: its results carry no tolerations though its request has some.
const DefectNoExecuteToleranceLost DefectCase = "kubernetes/kubernetes#134434"

// DefectImplicitExtendedResourceIgnored: 1.34 takes a class's implicit
// extended resource, deviceclass.resource.kubernetes.io/<class>, for a
// native resource, because it contains "kubernetes.io/"
// (IsExtendedResourceName, pkg/apis/core/v1/helper/helpers.go:36-60 at
// v1.34.4). kube-scheduler then makes no claim for it
// (hasDeviceClassMappedExtendedResource, plugins/dynamicresources/
// dynamicresources.go:432-446 and 489-492), its noderesources plugin leaves
// the request to that plugin (fit.go:639-645, no class mapping) and the
// kubelet admits the pod on the same rule (pkg/scheduler/eventhandlers.go:
// 678, removeMissingExtendedResources in pkg/kubelet/lifecycle/
// predicate.go:321-333): the pod runs with no claim and no device. A class's
// explicit extendedResourceName works. Fixed for 1.35 by
// kubernetes/kubernetes#133363 (IsDRAExtendedResourceName,
// pkg/scheduler/util/utils.go:149 at v1.35.4); no issue names it. Not an
// allocator's defect: the row lists the implementations a 1.34 run with
// extended resources can have, so that KnownDefect finds it under either.
const DefectImplicitExtendedResourceIgnored DefectCase = "kubernetes/kubernetes#133363"

// DefectGateOffFalseIsAdmin: kube-scheduler without DRAAdminAccess refuses
// a request that says adminAccess: false as one that asks for admin access.
// Every implementation's gate check reads the field's presence, not its
// value: validateDeviceRequest refuses `!features.AdminAccess &&
// request.hasAdminAccess()`, and exactDeviceRequestAccessor.hasAdminAccess
// is `Exactly.AdminAccess != nil` (v0.35.8: allocator_stable.go:409 and
// 1372-1374, allocator_incubating.go:421 and 1476-1478,
// allocator_experimental.go:503 and 1672-1674; v0.33.13's one
// implementation, allocator.go:408 and 1271-1273; v0.34.4 and v0.34.11
// alike; unchanged at v0.37.2 and v0.38.0-beta.0, where the gate is locked
// on, so no kube-scheduler is without it). The API says admin access "is
// disabled if this field is unset or set to false", and
// kube-controller-manager's own gate check reads ptr.Deref(adminAccess,
// false) (needsAdminAccess). Reachable wherever kube-apiserver has the gate
// (it keeps the false as sent) and kube-scheduler has not: an upgrade's
// skew, a rollback of kube-scheduler first. The cause is kube-scheduler's
// own error for the pod, which it logs ("Error scheduling pod; retrying",
// schedule_one.go) and puts in the FailedScheduling event, for the request
// that says false. No upstream issue names it (docs/upstream-defects.md).
const DefectGateOffFalseIsAdmin DefectCase = "adminAccess: false in a kube-scheduler without the gate"

// CauseGateOffRequested is what the allocator says of a request it
// refuses because the gate is off (validateDeviceRequest, every
// implementation, 1.33 to 1.38): for DefectGateOffFalseIsAdmin, of a
// request whose stored adminAccess is false.
const CauseGateOffRequested = "admin access is requested, but the feature is disabled"

// gateOffFalseIssue is where DefectGateOffFalseIsAdmin is written up, for
// want of an upstream issue.
const gateOffFalseIssue = "docs/upstream-defects.md#adminaccess-false-waits-in-a-kube-scheduler-without-the-gate"

const (
	issue140729 = "kubernetes/kubernetes#140729"
	title140729 = "DRA: AdminAccess consumes counters"
)

// DefectAt is one release's declaration of a known defect, in that
// release's file: the allocators that have it there, and the patches it
// was seen on.
type DefectAt struct {
	Case       DefectCase
	Allocators []string
	SeenAt     []string
}

// cases are the defects as upstream has them; which releases have each,
// under which allocators, their files say (Release.Defects).
var cases = []Defect{{
	Case:  DefectAdminConsumesCounters,
	Issue: issue140729,
	Title: title140729,
	Outcome: "the admin-access claim for a partitionable device that no claim holds, whose counters ordinary claims of its partitions have used up, " +
		"stays unallocated (kube-scheduler: FailedScheduling \"" + CannotAllocate + "\"; its allocator: \"" + CauseCounters + "\" for that device), " +
		"and is allocated once the ordinary claims are gone",
	Cause: CauseCounters,
}, {
	Case:  DefectAdminConsumesCapacity,
	Issue: issue140729,
	Title: title140729,
	Where: "the capacity case, named in the issue's thread (comment of 2026-08-01)",
	Outcome: "the admin-access claim for a device that allows multiple allocations, whose capacity ordinary claims have used up, " +
		"stays unallocated (kube-scheduler: FailedScheduling \"" + CannotAllocate + "\"; its allocator: \"" + CauseCapacity + "\" for that device), " +
		"and is allocated once the ordinary claims are gone",
	Cause: CauseCapacity,
}, {
	Case:  DefectDeviceTwiceInClaim,
	Issue: "kubernetes/kubernetes#131269",
	Title: "DRA: with admin access, within a claim, the same device should not be used twice",
	Outcome: "a claim whose two requests ask for the same device, one or both with admin access, is allocated " + CauseDeviceTwice +
		" (its status.allocation.devices.results name the device for both requests), and two admin-access requests that could have two devices share one",
	Cause: CauseDeviceTwice,
}, {
	Case:  DefectNoExecuteToleranceLost,
	Issue: "kubernetes/kubernetes#134434",
	Title: "DRA: Device Taints: tolerating NoExecute is broken",
	Outcome: "the pod whose admin-access claim tolerates the device's NoExecute taint is evicted (kube-controller-manager writes its DisruptionTarget condition " +
		DeviceTaintEvictionCondition + " and deletes it) as the one that does not tolerate it is, " +
		"since its claim's allocation has " + CauseTolerationsLost,
	Cause: CauseTolerationsLost,
}, {
	Case:  DefectImplicitExtendedResourceIgnored,
	Issue: "kubernetes/kubernetes#133363",
	Title: "Allow implicit extended resource name to be used no matter explicit extendedResourceName field is set or not in device class",
	Where: "the pull request that fixed it for 1.35; no issue names it (docs/upstream-defects.md)",
	Outcome: "a pod asking for the class's implicit extended resource (deviceclass.resource.kubernetes.io/<class>) runs with " + CauseNoExtendedClaim +
		" and no DRA_ variable; asked through the class's explicit extendedResourceName, it gets every device the admin-access claim has, without admin access",
	Cause: CauseNoExtendedClaim,
}, {
	Case:  DefectGateOffFalseIsAdmin,
	Issue: gateOffFalseIssue,
	Title: "adminAccess: false waits in a kube-scheduler without the gate",
	Where: "found here; no upstream issue names it",
	Outcome: "a pod whose claim's request says adminAccess: false (stored so: kube-apiserver has the gate) is not scheduled by a kube-scheduler without the gate: " +
		"its FailedScheduling event and its log's \"Error scheduling pod; retrying\" say \"claim <ns>/<claim>, request req-0: " + CauseGateOffRequested + "\", " +
		"and the claim stays unallocated, where an unset field is allocated as ordinary",
	Cause: CauseGateOffRequested,
}}

// The allocator's lines for a device passed over (structured/internal/*/
// allocator_*.go, V(7), the device as driver/pool/device): for its counters
// (allocateDevice, after checkAvailableCounters: at v0.35.4, v0.36.3 and
// v0.37.2 in each implementation) and for its consumable capacity
// (allocateOne, after CmpRequestOverCapacity: incubating from v0.36.3,
// experimental from v0.35.4). "Device in use", the reason an ordinary
// request is refused a held device, is never logged for an admin-access
// request: every implementation skips that check for one.
const (
	CauseCounters = "Insufficient counters"
	CauseCapacity = "Device capacity not enough"
)

// Why the allocator (v0.34.4 to v0.37.2, every implementation) passes over
// a device for a request of the claim it is allocating: an admin-access
// request, a device another request of the same claim took
// (allocatingDeviceForClaim); an ordinary request, a device in use, by
// other claims or by any request of this allocation, admin access or not.
// Each is logged from two places: the candidate loop of allocateOne, for an
// ExactCount request, and allocateDevice, the only check an allocationMode
// All request meets (allocateOne hands it its known devices with
// must=true): at v0.35.4 stable allocator_stable.go:844/848 and
// :1014/1018, the All path :808; the same lines in every implementation
// and release from v0.34.4. "Device in use" is what an explicit
// adminAccess: false meets as well: a request's admin access is
// ptr.Deref(adminAccess, false) (exactDeviceRequestAccessor.adminAccess,
// allocator_stable.go:1369 at v0.35.4), never whether the field is set.
const (
	CauseInUseInClaim = "Device in use in same claim"
	CauseInUse        = "Device in use"
)

// CauseDeviceTwice is DefectDeviceTwiceInClaim's cause as the spec sees it
// in the claim's allocation; 1.33's allocator logs nothing for it.
const CauseDeviceTwice = "one device for two requests of the claim"

// CauseTolerationsLost is DefectNoExecuteToleranceLost's cause as the spec
// sees it in the claim: the allocator logs nothing of it.
const CauseTolerationsLost = "no tolerations in status.allocation.devices.results though its request has some"

// CauseNoExtendedClaim is DefectImplicitExtendedResourceIgnored's cause as
// the spec sees it in the running pod: kube-scheduler made no claim.
const CauseNoExtendedClaim = "no status.extendedResourceClaimStatus"

// CannotAllocate is what kube-scheduler's FailedScheduling event says of a
// node where the DynamicResources plugin found no allocation for the pod's
// claims (pkg/scheduler/framework/plugins/dynamicresources).
const CannotAllocate = "cannot allocate all claims"

// KnownDefect says whether the defect is declared for this release under the
// allocator kube-scheduler uses.
func (r Release) KnownDefect(c DefectCase, allocator string) (Defect, bool) {
	for _, at := range r.Defects {
		if at.Case != c || !slices.Contains(at.Allocators, allocator) {
			continue
		}
		d, ok := caseOf(c)
		d.Minors, d.SeenAt, d.Allocators = []string{r.Minor}, at.SeenAt, at.Allocators
		return d, ok
	}
	return Defect{}, false
}

// caseOf is the upstream row of c.
func caseOf(c DefectCase) (Defect, bool) {
	for _, d := range cases {
		if d.Case == c {
			return d, true
		}
	}
	return Defect{}, false
}

// Defects lists every case with the releases that declare it, the
// allocators that have it in any of them (in the order the first release
// names them) and the patches it was seen on, for docs/verdicts.md; a
// case no release declares any more is left out.
func Defects() []Defect {
	var out []Defect
	for _, d := range cases {
		for _, m := range Minors() {
			for _, at := range table[m].Defects {
				if at.Case != d.Case {
					continue
				}
				d.Minors = append(d.Minors, m)
				d.SeenAt = append(d.SeenAt, at.SeenAt...)
				for _, a := range at.Allocators {
					if !slices.Contains(d.Allocators, a) {
						d.Allocators = append(d.Allocators, a)
					}
				}
			}
		}
		if len(d.Minors) > 0 {
			slices.SortStableFunc(d.Allocators, func(a, b string) int { return allocatorRank(a) - allocatorRank(b) })
			out = append(out, d)
		}
	}
	return out
}

// allocatorRank orders implementations as NewAllocator tries them.
func allocatorRank(name string) int {
	return slices.Index([]string{"stable", "incubating", "experimental"}, name)
}

// Verdict is the line a spec that met the defect ends with.
func (d Defect) Verdict(seen string) string {
	return fmt.Sprintf("known upstream defect %s (%s): %s", d.Issue, d.title(), seen)
}

// title is the issue's title and, for a case its thread names, where.
func (d Defect) title() string {
	if d.Where == "" {
		return d.Title
	}
	return d.Title + "; " + d.Where
}

// NotReproduced is the failure where the table declares the defect and the
// promise held.
func (d Defect) NotReproduced(release, allocator string) string {
	return fmt.Sprintf("declared defect not reproduced: fixed upstream? update the release table (clusters/release/defects.go): "+
		"%s (%s) is declared for Kubernetes %s with the %s allocator, but the promise held", d.Issue, d.title(), release, allocator)
}
