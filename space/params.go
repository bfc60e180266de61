package space

import (
	"fmt"
	"slices"
	"strings"
)

// GetFloat returns the float parameter name, or an error that names the
// parameter when the point has no such parameter or it is not a number
// (Float returns 0 then, which hides a misspelt name). An int parameter is
// converted.
func (p Params) GetFloat(name string) (float64, error) {
	v, ok := p[name]
	if !ok {
		return 0, p.missing(name)
	}
	switch v := v.(type) {
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	}
	return 0, fmt.Errorf("study: parameter %q is %v (%T), not a number", name, v, v)
}

// GetInt returns the integer parameter name, or an error that names the
// parameter when the point has no such parameter or it is not an integer.
func (p Params) GetInt(name string) (int, error) {
	v, ok := p[name]
	if !ok {
		return 0, p.missing(name)
	}
	switch v := v.(type) {
	case int:
		return v, nil
	case float64:
		if v == float64(int(v)) {
			return int(v), nil
		}
	}
	return 0, fmt.Errorf("study: parameter %q is %v (%T), not an integer", name, v, v)
}

// GetString returns the categorical parameter name as a string, or an
// error that names the parameter when the point has no such parameter.
func (p Params) GetString(name string) (string, error) {
	if _, ok := p[name]; !ok {
		return "", p.missing(name)
	}
	return p.String(name), nil
}

// missing is the error for a parameter the point does not have.
func (p Params) missing(name string) error {
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	slices.Sort(names)
	return fmt.Errorf("study: no parameter %q (the parameters are %s)", name, strings.Join(names, ", "))
}
