#!/bin/bash
# run_suite.sh HALF SEEDS OUT: Optuna's TPE, multivariate TPE and CMA-ES on
# a half of the held-out suite (tune or heldout, bench.RobustSuite), seeds
# 1..SEEDS, single-threaded, one JSON line per run appended to OUT; then
# compare with `bkb bench --regret --regret-suite HALF --regret-peers OUT`
# (docs/robust.md). Needs Debian's python3-optuna and python3-cmaes.
set -eu
half=$1 seeds=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
peerfn=$(mktemp -d)/peerfn
(cd "$here/../.." && go build -o "$peerfn" ./bench/peerfn)
# The halves of bench.RobustTune and bench.RobustHeldOut (TestRobustSuite
# checks that they agree).
case $half in
tune) problems="goldsteinprice:100/300 threehumpcamel:100/300 matyas:100/300 colville:100/300 zakharov:4:100/300 rastrigin:3:100/300" ;;
heldout) problems="beale:100/300 booth:100/300 mccormick:100/300 dixonprice:4:100/300 powell:100/300 sumsquares:4:100/300 trid:4:100/300" ;;
*) echo "HALF is tune or heldout" >&2; exit 2 ;;
esac
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GOMAXPROCS=1
for p in $problems; do
	name=${p%:*} ts=${p##*:}
	for s in $(seq 1 "$seeds"); do
		for samp in tpe mtpe cmaes; do
			/usr/bin/python3 "$here/optuna_suite.py" "$samp" "$peerfn" "$name" "$ts" "$s" >>"$out"
		done
	done
done
