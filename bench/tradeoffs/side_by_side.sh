#!/bin/sh
# Runs this project's policy and Optuna 3.1's samplers on the constrained
# and multi-objective problems of bench/tradeoffs, alternating per seed,
# single-threaded on both sides, and appends one JSON line per run to OUT.
# Then: python3 bench/tradeoffs/summarize.py OUT
#
#   bench/tradeoffs/side_by_side.sh OUT [constrained|multi|multi100|all] [SEEDS] [TOOLS]
#
# TOOLS (default "bkb random-bkb optuna") selects what runs: bkb is the
# default study, bkb-scalarize the default study with several objectives
# asked by random scalarizations (the rule before the hypervolume
# improvement), random-bkb this project's random search, optuna the peers
# (constrained: TPE with constraints_func, NSGA-II with constraints_func,
# random; several objectives: NSGA-II, MOTPE, multi-objective TPE, random).
# multi runs 300 trials (checkpoints 100 and 300); multi100 runs bkb and
# bkb-scalarize with a budget of 100 trials (bkb's exploration follows its
# budget; the peers' samplers do not know theirs).
set -eu
out=$1
which=${2:-all}
seeds=${3:-"1 2 3 4 5 6 7 8 9 10"}
tools=${4:-"bkb random-bkb optuna"}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d)/tradeoffs
(cd "$here/../.." && go build -o "$bin" ./bench/tradeoffs)
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
has() { case " $tools " in *" $1 "*) return 0;; esac; return 1; }
run() { # problem T checkpoints peers
	p=$1 T=$2 at=$3 peers=$4
	for s in $seeds; do
		if has bkb; then "$bin" -problem "$p" -policy bkb -T "$T" -seed "$s" -at "$at" >>"$out"; fi
		case $p in branin-currin | zdt1 | zdt2 | dtlz2)
			if has bkb-scalarize; then "$bin" -problem "$p" -policy bkb -T "$T" -seed "$s" -at "$at" -mo-acquisition scalarize >>"$out"; fi
		esac
		if has random-bkb; then "$bin" -problem "$p" -policy random -T "$T" -seed "$s" -at "$at" >>"$out"; fi
		if has optuna; then
			for sampler in $peers; do
				pT=$T pat=$at
				# MOTPE and multi-objective TPE: minutes per run beyond 100 trials.
				if [ "$T" -gt 150 ] && { [ "$sampler" = motpe ] || [ "$sampler" = tpe ]; }; then pT=100 pat=100; fi
				/usr/bin/python3 "$here/optuna_tradeoffs.py" "$sampler" "$p" "$pT" "$s" "$pat" >>"$out"
			done
		fi
	done
}
if [ "$which" = constrained ] || [ "$which" = all ]; then
	for p in branin-disk gardner1 gardner2; do run "$p" 150 50,150 "tpe nsga2 random"; done
fi
if [ "$which" = multi ] || [ "$which" = all ]; then
	for p in branin-currin zdt1 zdt2 dtlz2; do run "$p" 300 100,300 "nsga2 motpe tpe random"; done
fi
if [ "$which" = multi100 ]; then
	tools=$(echo " $tools " | sed 's/ random-bkb / /; s/ optuna / /')
	for p in branin-currin zdt1 zdt2 dtlz2; do run "$p" 100 100 ""; done
fi
