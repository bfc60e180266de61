package study

// GetFloat is Params.GetFloat, whose error for a parameter of the space
// that is not active for this trial says so and when it is.
func (t *Trial) GetFloat(name string) (float64, error) {
	v, err := t.Params.GetFloat(name)
	return v, t.inactive(name, err)
}

// GetInt is Params.GetInt, whose error for a parameter of the space that
// is not active for this trial says so and when it is.
func (t *Trial) GetInt(name string) (int, error) {
	v, err := t.Params.GetInt(name)
	return v, t.inactive(name, err)
}

// GetString is Params.GetString, whose error for a parameter of the space
// that is not active for this trial says so and when it is.
func (t *Trial) GetString(name string) (string, error) {
	v, err := t.Params.GetString(name)
	return v, t.inactive(name, err)
}

// inactive replaces err, the error of a Params getter, by ErrInactive's
// when name is a parameter of the trial's space that its point does not
// activate.
func (t *Trial) inactive(name string, err error) error {
	if err == nil || t.Params.Has(name) || t.s == nil {
		return err
	}
	if e := t.s.cfg.Space.InactiveError(name); e != nil {
		return e
	}
	return err
}
