// Package gp computes Gaussian-process posteriors over a finite set of
// candidate points, updated one observation at a time, for the bandit
// policies of package bandit:
//
//   - Exact is the exact posterior (Rasmussen and Williams, Gaussian
//     Processes for Machine Learning, MIT Press 2006, Eq. 2.25-2.26) on a
//     growable Cholesky factor: O(t^2) per observation, O(A t) to update the
//     means and variances of A candidates, and the log marginal likelihood
//     that package gp/hyper maximizes.
//   - DTC is the deterministic-training-conditional (Nystrom) posterior on
//     a dictionary of inducing points, the posterior of BKB (Calandriello,
//     Carratino, Lazaric, Valko and Rosasco, COLT 2019, Eq. 4), with
//     dictionary resampling by posterior variance (their Algorithm 1) and
//     incremental updates of every candidate's embedding; with every
//     observed point in the dictionary it equals the exact posterior.
//
// Both condition variances on pending points (ConditionalVariances) for
// asynchronous parallel evaluations, draw joint samples for Thompson
// sampling, and report their numerical health (Numerics). Neither is safe
// for concurrent use. docs/how-it-works.md describes the algorithms and
// where they depart from the papers; docs/references.md lists the papers.
package gp
