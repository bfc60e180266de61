#!/usr/bin/env bash
# The CPU seconds of the first ask on a long study over HTTP (bkb serve)
# against bkb ask on a copy of the same storage, alternating, ROUNDS times.
#
#   bkb optimize -f hartmann6 -T 1000 --study h6.jsonl -q      # the study (about 10 s)
#   bench/scripts/first_ask.sh BKB h6.jsonl [ROUNDS] [PORT]
#
# Each round copies the journal and its snapshot twice: `bkb ask --budget
# N+100` on one copy (its user+system time from /usr/bin/time), then a
# `bkb serve --dir` on the other, whose process's CPU time is read from
# /proc before and after the extension (POST .../budget) and the ask.
set -euo pipefail
BIN=${1:?bkb binary}; STUDY=${2:?journal}; ROUNDS=${3:-3}; PORT=${4:-18723}
name=$(basename "$STUDY" .jsonl)
trials=$(grep -c '"kind":"ask"' "$STUDY" || true)
budget=$((trials + 100))
tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14+$15)/t}' "/proc/$1/stat"; }
for r in $(seq "$ROUNDS"); do
	d=$(mktemp -d); cp "$STUDY" "$STUDY.snapshot" "$d/" 2>/dev/null || cp "$STUDY" "$d/"
	c=$({ /usr/bin/time -f "%U %S" "$BIN" ask --study "$d/$(basename "$STUDY")" --budget "$budget" >/dev/null; } 2>&1 | tail -1 | awk '{print $1+$2}')
	d2=$(mktemp -d); cp "$STUDY" "$STUDY.snapshot" "$d2/" 2>/dev/null || cp "$STUDY" "$d2/"
	"$BIN" serve --dir "$d2" --addr "127.0.0.1:$PORT" >/dev/null 2>&1 & pid=$!
	for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$PORT/api/info" && break; sleep 0.05; done
	b=$(cpu "$pid")
	curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data "{\"budget\":$budget}" "http://127.0.0.1:$PORT/api/studies/$name/budget"
	curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data '{"n":1}' "http://127.0.0.1:$PORT/api/studies/$name/ask"
	a=$(cpu "$pid")
	kill "$pid"; wait "$pid" 2>/dev/null || true
	echo "round $r: bkb ask $c s CPU, first ask over HTTP $(echo "$a - $b" | bc) s CPU"
	rm -rf "$d" "$d2"
done
