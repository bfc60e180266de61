package objectives

import "context"

// NoisyValue is f at x with Gaussian noise of standard deviation noise
// (none when noise is 0), drawn from a stream of seed and trial, so that
// the same trial of the same study sees the same noise in every process.
func NoisyValue(ctx context.Context, f *Function, noise float64, seed uint64, trial int, x []float64) (float64, error) {
	if noise == 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return f.Value(x), nil
	}
	r, err := NewReward(f, noise, seed^(uint64(trial+1)*0x9e3779b97f4a7c15))
	if err != nil {
		return 0, err
	}
	y, err := r.Evaluate(ctx, x)
	return -y, err // Reward maximizes -f
}
