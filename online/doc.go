// Package online holds the online (prequential) kernel regression and
// classification learners of Jézéquel et al. (NeurIPS 2019), Dai et al. (NIPS 2014), Li and Liao (ICML 2023) and Wen et al. (IJCAI 2024), built as special cases of the
// module's sketching core: a kernel (package kernel), a dictionary (the
// Cholesky-form Nystrom embedding gp.Nystrom) or an explicit feature map
// (kernel.TaylorGaussian, kernel.RandomFourier), and a second-order
// (internal/chol factor of the curvature matrix) or first-order update.
//
// Every learner implements Learner: at round t it receives x_t, predicts
// (Predict, a real score for classification), then learns y_t (Learn).
// Prequential runs a learner over a Stream and reports the online mean
// squared error or mistake rate and the time per pass.
//
// Learners:
//
//   - Exact: online kernel ridge regression (KRR) and Kernel-AWV, the exact
//     O(t^2)-per-round references of Jézéquel et al. (NeurIPS 2019) (eq. 3).
//   - PKAWVFeatures: PKAWV on a fixed embedding (Jézéquel et al., NeurIPS 2019, Algorithm 1), with
//     the Taylor basis of the Gaussian kernel (Section 3.1, eq. 6).
//   - PKAWVNystrom: PKAWV on a Nystrom dictionary grown by KORS leverage
//     sampling (Jézéquel et al., NeurIPS 2019, Section 3.2, Algorithm 2).
//   - AOGDALD and NONSALD: Li and Liao (ICML 2023), Algorithms 1 and 3, with the Cholesky
//     basis in which the NONS-ALD state transfer (Lemmas 4.2, 4.3) is a
//     zero-padding.
//   - FORKS: Wen et al. (IJCAI 2024), Algorithm 1: incremental sketching (Eq. 11),
//     truncated incremental SVD (Algorithm 2, Eqs. 6-9) and the online Newton
//     step with slab projection (Eq. 10).
//   - DSG: doubly stochastic functional gradients (Dai et al., NIPS 2014, Algorithms 1-2),
//     random features regenerated from seeds, never stored.
//   - FOGD and NOGD: the random-Fourier and Nystrom online gradient descent
//     baselines of Lu et al. (JMLR 2016) used by the tables of Li and Liao (ICML 2023) and Wen et al. (IJCAI 2024).
//   - KONS: PROS-N-KONS and CON-KONS (Calandriello et al. 2017a), the
//     remaining baselines of Li and Liao's (ICML 2023) Table 3.
//   - RunningMean: the baseline every learner must beat.
//
// Wrappers: Centered (running mean plus the learner, learned on the
// residuals), WidthMix (online selection of the kernel width by
// exponential weights over a grid) and Relevance (relevance experts in the
// mix, on inputs rescaled by per-input length scales fitted by marginal
// likelihood with package gp/hyper on past rows only; Setting.ARD). Experiment applies the papers'
// settings only to their named datasets; other data gets defaults chosen
// from the data (for regression a WidthMix over widths around the median
// distance and two ridges, for classification the median distance; robust
// target scaling, detected task, dictionary budget; see GenericDefaults
// and docs/online.md).
//
// Streams: a Dataset in a seeded random order (with the papers'
// preprocessing, features to [-1, 1] and targets to [0, 1]), the block
// streams of Wen et al. (IJCAI 2024) (Section 5.2), the greedy adversary of Jézéquel et al. (NeurIPS 2019)
// (Appendix G) and noisy evaluations of a synthetic objective.
//
// Learners are not safe for concurrent use. All randomness comes from
// explicit seeds: the same seed gives the same run.
package online
