// SPDX-License-Identifier: Apache-2.0

package release

import "fmt"

// SpecPrint is how kube-apiserver prints the new spec in the refusal of an
// update that changes a claim's or template's spec ("spec: Invalid value:
// <value>: field is immutable"; ValidateImmutableField at "spec" on every
// release here). Read in the modules and produced with each release's own
// registry code (rest.BeforeUpdate):
type SpecPrint string

const (
	// SpecPrintGo: v1.33.13's field errors print the internal type with %#v;
	// requests are pointers there, so adminAccess never shows.
	SpecPrintGo SpecPrint = "Go"
	// SpecPrintJSON: from v1.34.4 they marshal it, Go field names and all
	// ({"Devices":{"Requests":[{... "AdminAccess":true ...}]}}).
	SpecPrintJSON SpecPrint = "JSON"
	// SpecPrintNull: v1.37.2 validates a claim's spec declaratively
	// (DeclarativeValidationBeta, on by default) and its immutability
	// error carries no value: "Invalid value: null". Templates keep the
	// hand-written check.
	SpecPrintNull SpecPrint = "null"
)

// Immutability is which print each refusal of the release carries: a
// changed claim spec, a changed template spec, a changed allocation
// (AllocationRefusal says what each print means there).
type Immutability struct {
	ClaimSpec, TemplateSpec, Allocation SpecPrint
}

// immutableSpecPrint is the release's SpecPrint for kind (ResourceClaim or
// ResourceClaimTemplate).
func (r Release) immutableSpecPrint(kind string) SpecPrint {
	if kind == "ResourceClaimTemplate" {
		return r.Immutable.TemplateSpec
	}
	return r.Immutable.ClaimSpec
}

// ImmutableSpecValidator names the validator whose message the refusal of
// a changed spec of kind carries, for failure messages: on v1.37.2 a
// claim's is the declarative +k8s:immutable on ResourceClaim.Spec (beta,
// enforced), which replaces the hand-written one it covers; elsewhere the
// hand-written ValidateImmutableField at "spec".
func (r Release) ImmutableSpecValidator(kind string) string {
	switch r.immutableSpecPrint(kind) {
	case SpecPrintNull:
		return "the declarative +k8s:immutable (beta, enforced)"
	case SpecPrintGo:
		return "the hand-written ValidateImmutableField, value printed with %#v"
	default:
		return "the hand-written ValidateImmutableField, value printed as JSON"
	}
}

// ImmutableSpecValue is what the refusal's value must contain for a spec
// whose first request's adminAccess is now v ("true", "false" or "null"):
// with the value printed as JSON, that field; in Go, the internal type's
// name; as null, exactly null.
func (r Release) ImmutableSpecValue(kind, v string) (text string, exact bool) {
	switch r.immutableSpecPrint(kind) {
	case SpecPrintGo:
		spec := "ResourceClaimSpec"
		if kind == "ResourceClaimTemplate" {
			spec = "ResourceClaimTemplateSpec"
		}
		return "resource." + spec + "{", false
	case SpecPrintNull:
		return "null", true
	default:
		return fmt.Sprintf(`"AdminAccess":%s`, v), false
	}
}

// AllocationRefusal is how kube-apiserver refuses a status update that
// changes a claim's status.allocation once it is set: 422 Invalid, one
// cause at "status.allocation", whatever the release. Which validator
// writes the cause, and so its value and detail, differs:
//
//   - v1.33.13-v1.36.3: the hand-written ValidateResourceClaimStatusUpdate
//     (pkg/apis/resource/validation/validation.go, "Updates to a populated
//     status.Allocation are not allowed": ValidateImmutableField at
//     status.allocation), "field is immutable", with the new allocation
//     printed as the release prints an internal type (SpecPrint: %#v on
//     1.33, JSON with Go field names from 1.34). 1.35 and 1.36 also run the
//     declarative +k8s:update=NoModify on status.allocation, but only in the
//     shadow (1.35: DeclarativeValidationTakeover off by default; 1.36: the
//     tag is alpha), so the hand-written error is the one returned.
//   - v1.37.2: the tag is beta and DeclarativeValidationBeta is on by
//     default, so the declarative error replaces the hand-written one, which
//     is marked as covered by it (validate.FilterCoveredHandwrittenErrors):
//     validate.UpdatePointer's NoModify, "field cannot be modified once set",
//     with no value ("Invalid value: null").
//
// The refusal is the promise; the value and the detail only say which
// validator kept it.
type AllocationRefusal struct {
	// Value is what the printed value must contain (Exact: be).
	Value string
	Exact bool
	// Detail is the text after the value.
	Detail string
	// Validator names the validator that printed it, for failure messages.
	Validator string
}

// ImmutableAllocation is the release's refusal of a status update whose
// new allocation, printed as JSON with Go field names, contains shows (a
// fragment that tells the rewritten allocation from the granted one:
// `"Device":"gpu-1"`, `"AdminAccess":false`, `"Results":null`).
func (r Release) ImmutableAllocation(shows string) AllocationRefusal {
	switch r.Immutable.Allocation {
	case SpecPrintGo:
		// %#v of the dereferenced *resource.AllocationResult: its results
		// are values, but adminAccess is a pointer (printed as an address),
		// so only the type shows reliably.
		return AllocationRefusal{Value: "resource.AllocationResult{", Detail: "field is immutable", Validator: "the hand-written ValidateImmutableField, value printed with %#v"}
	case SpecPrintNull:
		return AllocationRefusal{Value: "null", Exact: true, Detail: "field cannot be modified once set", Validator: "the declarative +k8s:update=NoModify (beta, enforced)"}
	default:
		return AllocationRefusal{Value: shows, Detail: "field is immutable", Validator: "the hand-written ValidateImmutableField, value printed as JSON"}
	}
}
