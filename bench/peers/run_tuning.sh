#!/bin/bash
# run_tuning.sh SUITE FROM TO OUT [SAMPLERS]: tuning.py on one half of its
# suites, seed by seed (every problem and sampler of seed s before seed
# s+1, so that a run cut short still covers every problem), single-threaded
# and niced, one JSON line per run appended to OUT. SUITE is tasks-tune,
# tasks-heldout (T = 30/60), hd-tune or hd-heldout (T = 100/250); SAMPLERS
# defaults to all five (docs/tuning.md). Then:
#   /usr/bin/python3 bench/peers/tuning.py table OUT...
#   /usr/bin/python3 bench/peers/tuning.py diag OUT...
set -eu
suite=$1 from=$2 to=$3 out=$4 samplers=${5:-bkb,tpe,mtpe,cmaes,random}
here=$(cd "$(dirname "$0")" && pwd)
bkb=$(mktemp -d)/bkb
(cd "$here/../.." && go build -o "$bkb" ./cmd/bkb)
# The halves of tuning.py (TUNING_TASKS, HELDOUT_TASKS, TUNING_HD, HELDOUT_HD).
case $suite in
tasks-tune) problems=hgb-diabetes,svc-breast,knn-wine,mlp-breast ts=30/60 ;;
tasks-heldout) problems=logreg-wine,svr-housing,hgb-breast,rf-wine ts=30/60 ;;
hd-tune) problems=rosen-20,hart3-in-50,styb-50,levy-100 ts=100/250 ;;
hd-heldout) problems=branin-in-20,levy-50,hart6-in-100,styb-100 ts=100/250 ;;
*) echo "SUITE is tasks-tune, tasks-heldout, hd-tune or hd-heldout" >&2; exit 2 ;;
esac
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GOMAXPROCS=1
for s in $(seq "$from" "$to"); do
	nice -n 10 /usr/bin/python3 "$here/tuning.py" run "$bkb" "$problems" "$s-$s" "$ts" "$samplers" >>"$out"
done
