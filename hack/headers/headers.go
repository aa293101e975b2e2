// SPDX-License-Identifier: Apache-2.0

// Package headers holds the test that keeps the licence's SPDX line on
// every tracked Go file and script (hack/spdx-headers.sh writes it;
// CONTRIBUTING.md says why the line and no longer header).
package headers

// Line is the SPDX line, without its comment marker.
const Line = "SPDX-License-Identifier: Apache-2.0"
