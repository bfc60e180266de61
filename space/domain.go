package space

import (
	"math"

	"github.com/bkb-go/bkb/candidates"
)

// maxDomainLevels is the most levels a discrete parameter is given as a
// candidates.Coord level list; one with more is searched as a continuous
// coordinate and rounded to its grid by Decode.
const maxDomainLevels = 4096

// Domain returns the encoded space (Encode's coordinates) as a
// candidates.Domain: floats continuous, integers and stepped floats as the
// levels of their values' encodings (continuous, rounded by Decode, beyond
// maxDomainLevels values), categoricals one-hot groups.
func (s Space) Domain() candidates.Domain {
	var d candidates.Domain
	for i, p := range s.Params {
		switch {
		case p.Type == TypeCategorical:
			d.Coords = append(d.Coords, candidates.OneHot(i, len(p.Choices))...)
		case p.Levels() > 0 && p.Levels() <= maxDomainLevels:
			n := p.Levels()
			lv := make([]float64, 0, n)
			for k := 0; k < n; k++ {
				u := p.unit(p.levelValue(k))
				if len(lv) == 0 || u > lv[len(lv)-1] {
					lv = append(lv, math.Min(math.Max(u, 0), 1))
				}
			}
			d.Coords = append(d.Coords, candidates.Discrete(lv...))
		default:
			d.Coords = append(d.Coords, candidates.Continuous())
		}
	}
	return d
}

// levelValue is the k-th value of an integer or stepped float.
func (p Param) levelValue(k int) float64 {
	if p.Type == TypeInt {
		return p.Low + float64(k)
	}
	return p.StepValue(k)
}

// Decode writes to dst the valid point nearest (on each parameter's scale)
// to the encoded coordinates u (length EncodedDim): the inverse of Encode
// on encoded points, the nearest integer or step of other values, the
// largest coordinate of a one-hot block.
func (s Space) Decode(dst, u []float64) {
	k := 0
	for i, p := range s.Params {
		if p.Type == TypeCategorical {
			best := 0
			for c := range p.Choices {
				if u[k+c] > u[k+best] {
					best = c
				}
			}
			dst[i] = float64(best)
			k += len(p.Choices)
			continue
		}
		v := math.Min(math.Max(u[k], 0), 1)
		k++
		var x float64
		if p.Log {
			x = math.Exp(math.Log(p.Low) + v*(math.Log(p.High)-math.Log(p.Low)))
		} else {
			x = p.Low + v*(p.High-p.Low)
		}
		switch {
		case p.Type == TypeInt:
			x = math.Round(x)
		case p.Step > 0:
			j := int(math.Round((x - p.Low) / p.Step))
			x = p.StepValue(min(max(j, 0), p.Levels()-1))
		}
		dst[i] = math.Min(math.Max(x, p.Low), p.High)
	}
}
