// SPDX-License-Identifier: Apache-2.0

// Package expect holds the Gomega matchers of the suite's exact, version-aware
// outcomes.
package expect

import (
	"errors"
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MatchForbiddenAt matches the apiserver's denial of a field: a 422 Invalid
// whose causes include a FieldValueForbidden at exactly that path with
// exactly that message.
func MatchForbiddenAt(path, message string) types.GomegaMatcher {
	return &forbiddenAt{path: path, message: "Forbidden: " + message}
}

type forbiddenAt struct{ path, message string }

func (m *forbiddenAt) Match(actual any) (bool, error) {
	if actual == nil {
		return false, nil
	}
	err, ok := actual.(error)
	if !ok {
		return false, fmt.Errorf("MatchForbiddenAt expects an error, got %T", actual)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false, nil
	}
	s := status.Status()
	if s.Code != 422 || s.Reason != metav1.StatusReasonInvalid || s.Details == nil {
		return false, nil
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseType(field.ErrorTypeForbidden) && c.Field == m.path && c.Message == m.message {
			return true, nil
		}
	}
	return false, nil
}

func (m *forbiddenAt) FailureMessage(actual any) string {
	return fmt.Sprintf("expected the apiserver to deny with 422 Invalid, cause FieldValueForbidden at %q: %q\nseen: %s", m.path, m.message, describe(actual))
}

func (m *forbiddenAt) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("expected no denial at %q, seen: %s", m.path, describe(actual))
}

// CauseFields lists the field of every cause of an API error, so a spec can
// assert that a denial names exactly one field. Nil for any other error.
func CauseFields(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field)
	}
	return out
}

func describe(actual any) string {
	err, ok := actual.(error)
	if !ok || err == nil {
		return "no error (the request was allowed)"
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		out := fmt.Sprintf("%d %s: %s", s.Code, s.Reason, s.Message)
		if s.Details != nil {
			for _, c := range s.Details.Causes {
				out += fmt.Sprintf("\n  cause %s at %q: %q", c.Type, c.Field, c.Message)
			}
		}
		return out
	}
	return err.Error()
}

// MatchInvalidAt matches a refusal as the promise of an immutable field
// states it, whichever validator wrote it: 422 Invalid with exactly one
// cause, a FieldValueInvalid at exactly path. What the cause says is the
// validator's (MatchInvalidMessage).
func MatchInvalidAt(path string) types.GomegaMatcher {
	return &invalidAt{path: path}
}

type invalidAt struct{ path string }

func (m *invalidAt) Match(actual any) (bool, error) {
	if actual == nil {
		return false, nil
	}
	err, ok := actual.(error)
	if !ok {
		return false, fmt.Errorf("MatchInvalidAt expects an error, got %T", actual)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false, nil
	}
	s := status.Status()
	if s.Code != 422 || s.Reason != metav1.StatusReasonInvalid || s.Details == nil || len(s.Details.Causes) != 1 {
		return false, nil
	}
	c := s.Details.Causes[0]
	return c.Type == metav1.CauseTypeFieldValueInvalid && c.Field == m.path, nil
}

func (m *invalidAt) FailureMessage(actual any) string {
	return fmt.Sprintf("expected the apiserver to refuse with 422 Invalid, exactly one cause, FieldValueInvalid at %q\nseen: %s", m.path, describe(actual))
}

func (m *invalidAt) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("expected no refusal at %q, seen: %s", m.path, describe(actual))
}

// MatchInvalidMessage matches what the validator that refused a field
// printed: the status message `<kind>.resource.k8s.io "<name>" is invalid:
// <path>: Invalid value: <value>: <detail>` and its one cause's
// `Invalid value: <value>: <detail>`, the value equal to value where exact,
// else containing it. validator names it in the failure message.
func MatchInvalidMessage(kind, name, path, value string, exact bool, detail, validator string) types.GomegaMatcher {
	return &invalidMessage{kind: kind, name: name, path: path, value: value, exact: exact, detail: detail, validator: validator}
}

type invalidMessage struct {
	kind, name, path, value string
	exact                   bool
	detail, validator       string
}

// printed is the value between the cause message's "Invalid value: " and
// ": <detail>", and whether the cause and the status message are shaped so.
func (m *invalidMessage) printed(err error) (string, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "", false
	}
	s := status.Status()
	if s.Details == nil || len(s.Details.Causes) != 1 {
		return "", false
	}
	cause := s.Details.Causes[0].Message
	const before = "Invalid value: "
	after := ": " + m.detail
	if !strings.HasPrefix(cause, before) || !strings.HasSuffix(cause, after) || len(cause) < len(before)+len(after) {
		return "", false
	}
	prefix := fmt.Sprintf("%s.resource.k8s.io %q is invalid: %s: ", m.kind, m.name, m.path)
	if s.Message != prefix+cause {
		return "", false
	}
	return cause[len(before) : len(cause)-len(after)], true
}

func (m *invalidMessage) Match(actual any) (bool, error) {
	err, ok := actual.(error)
	if !ok || err == nil {
		return false, nil
	}
	v, ok := m.printed(err)
	if !ok {
		return false, nil
	}
	if m.exact {
		return v == m.value, nil
	}
	return strings.Contains(v, m.value), nil
}

func (m *invalidMessage) FailureMessage(actual any) string {
	how := "containing"
	if m.exact {
		how = "exactly"
	}
	return fmt.Sprintf("expected the message of %s: %s.resource.k8s.io %q is invalid: %s: Invalid value: <value>: %s, the value %s %q\nseen: %s",
		m.validator, m.kind, m.name, m.path, m.detail, how, m.value, describe(actual))
}

func (m *invalidMessage) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("expected another message than %s's, seen: %s", m.validator, describe(actual))
}
