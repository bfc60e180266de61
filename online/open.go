package online

// OpenData reads the dataset name or path as the regress command finds
// it (see ResolveData): a file, ../shared/data/<name>.csv.gz, or the copy
// of elevators or german built into the package.
func OpenData(name string) (*Dataset, error) {
	path, err := ResolveData(name, "")
	if err != nil {
		return nil, err
	}
	return openDataset(path)
}
