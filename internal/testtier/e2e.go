//go:build e2e

package testtier

// E2E is true in the end-to-end tier (the e2e build tag).
const E2E = true
