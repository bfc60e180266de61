// Package testtier tells a test which tier of the test suite runs it (see
// docs/testing.md):
//
//   - the short tier, go test -short ./..., the README's quick check, in
//     about a minute on two cores;
//   - the end-to-end tier, go test -tags e2e -short ./..., which .ci/run
//     also runs: every short test, the tests of files built only with the
//     e2e tag (kill -9 loops, worker fleets, the Python client, the
//     dashboard in chromium, the documented commands), and the full -short
//     size of the few randomized or experimental tests that the short tier
//     runs smaller (ShortTier);
//   - the long tier, go test -tags e2e ./... (without -short): every
//     test at full size, the paper-size tables.
//
// Only tests import it.
package testtier

import "testing"

// ShortTier reports whether the test runs in the short tier: with -short
// and without the e2e build tag. A test that runs a smaller form of itself
// then (fewer random sequences, one stream of two) runs its full -short
// form in the end-to-end tier, so that the two tiers together check what
// the short tier alone checked before the tiers were split.
func ShortTier() bool { return testing.Short() && !E2E }
