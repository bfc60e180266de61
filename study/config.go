package study

import (
	"io"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/engine"
)

// The configuration and the model are package engine's; study keeps their
// names, so that a study's configuration reads and is written as before.
type (
	// Config is engine.Config: everything that determines a study.
	Config = engine.Config
	// Arms is engine.Arms: how the finite candidate set is built.
	Arms = engine.Arms
	// Kernel is engine.Kernel: the GP prior's covariance.
	Kernel = engine.Kernel
	// Direction is engine.Direction: minimize or maximize.
	Direction = engine.Direction
	// FitResult is engine.FitResult: one hyperparameter fit.
	FitResult = engine.FitResult
	// Warp is engine.Warp: the transform of the values the GP is told.
	Warp = engine.Warp
	// Rules is engine.Rules: what one configuration version does.
	Rules = engine.Rules
	// SnapshotMeta is engine.SnapshotMeta: a snapshot's readable part.
	SnapshotMeta = engine.SnapshotMeta
)

// Directions.
const (
	Minimize = engine.Minimize
	Maximize = engine.Maximize
)

// Defaults, modes and limits (package engine).
const (
	DefaultPolicy      = engine.DefaultPolicy
	DefaultArms        = engine.DefaultArms
	DefaultArmCount    = engine.DefaultArmCount
	DefaultKernel      = engine.DefaultKernel
	DefaultLengthScale = engine.DefaultLengthScale
	DefaultLambda      = engine.DefaultLambda
	DefaultQbar        = engine.DefaultQbar
	DefaultBeta        = engine.DefaultBeta
	CurrentVersion     = engine.CurrentVersion
	LatestVersion      = engine.LatestVersion
	DefaultFitEvery    = engine.DefaultFitEvery
	DefaultArmCountV2  = engine.DefaultArmCountV2
	CandidatesFixed    = engine.CandidatesFixed
	CandidatesGrow     = engine.CandidatesGrow
	FitNone            = engine.FitNone
	FitScalar          = engine.FitScalar
	FitARD             = engine.FitARD
	MOHypervolume      = engine.MOHypervolume
	MOScalarize        = engine.MOScalarize
	WarpAuto           = engine.WarpAuto
	WarpNone           = engine.WarpNone
	WarpLog            = engine.WarpLog
	MaxAbsValue        = engine.MaxAbsValue
	MaxArmsFile        = engine.MaxArmsFile
	MaxConstraints     = engine.MaxConstraints
	MaxObjectives      = engine.MaxObjectives
)

// Version 2 and 3 defaults (package engine).
var (
	DefaultBetaV2   = engine.DefaultBetaV2
	DefaultKernelV2 = engine.DefaultKernelV2
	DefaultBetaV3   = engine.DefaultBetaV3
)

// Errors of outcomes (package engine).
var (
	ErrNoFeasible = engine.ErrNoFeasible
	ErrOutcome    = engine.ErrOutcome
)

// PolicyNames returns the policies a Config may name.
func PolicyNames() []string { return engine.PolicyNames() }

// ArmKinds returns the arm sets a Config may name.
func ArmKinds() []string { return engine.ArmKinds() }

// KernelNames returns the kernels a Config may name.
func KernelNames() []string { return engine.KernelNames() }

// MOAcquisitions returns the acquisitions of several objectives.
func MOAcquisitions() []string { return engine.MOAcquisitions() }

// Feasible reports whether every constraint value is <= 0.
func Feasible(c []float64) bool { return engine.Feasible(c) }

// VersionRules returns the rules of configuration version v.
func VersionRules(v int) (Rules, bool) { return engine.VersionRules(v) }

// ReadPoints reads a CSV of points of the space (engine.ReadPoints).
func ReadPoints(r io.Reader, sp Space, name string) (*mat.Dense, error) {
	return engine.ReadPoints(r, sp, name)
}
