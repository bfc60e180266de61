package serve

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/bkb-go/bkb/study"
)

// Server files and commands. A study's configuration may name a file of
// the machine that loads it (csv arms: Arms.File, read when the study is
// created and every time it is loaded) and a command (an objective of
// kind "plugin": Objective.command, which a later `bkb worker` or
// `bkb optimize --resume` on the study runs). Over HTTP that would let any
// client read the server's files (a malformed file's lines come back in
// errors) and plant a command for the next worker to run. So a
// configuration sent to POST /api/studies is refused (400) if it names a
// file or a command, unless the server was started with
// Options.AllowServerFiles (`--allow-server-files`): its clients are then
// trusted with the server's files and its workers' commands. The refusal
// names the field, never anything read from a file.

// serverFiles returns why cfg names a file or a command of the server's
// machine, nil if it names none.
func serverFiles(cfg *study.Config) error {
	if strings.EqualFold(strings.TrimSpace(cfg.Arms.Kind), "csv") || cfg.Arms.File != "" {
		return badf(`config.arms: csv arms are read from a file on the server's machine, which a client of the API may not name (use sobol, lhs, random or grid arms, or start the server with --allow-server-files)`)
	}
	raw := bytes.TrimSpace(cfg.Objective)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return badf("config.objective: want a JSON object")
	}
	var kind string
	if k, ok := obj["kind"]; ok {
		if err := json.Unmarshal(k, &kind); err != nil {
			return badf("config.objective.kind: want a string")
		}
	}
	_, command := obj["command"]
	_, dir := obj["dir"]
	switch {
	case command || dir || kind == "plugin":
		return badf(`config.objective: an objective that runs a command (kind "plugin", "command", "dir") would be run by the workers of this study on their machines: a client of the API may not set one (evaluate the objective in the client, or start the server with --allow-server-files)`)
	case kind != "builtin" && kind != "external":
		return badf(`config.objective.kind: want "builtin" or "external" over the API`)
	}
	return nil
}
