#!/bin/bash
# side_by_side.sh FUNCTION A SEED: the authors' BKB, then this project's
# (fresh and incremental resampling, full scan and lazy), alternating,
# single-threaded, on one arm set; one JSON line each (docs/scaling.md).
#
#   PEER     folder holding the authors' bkb_lib.py and utils.py
#            (github.com/luigicarratino/batch-bkb; never copied here)
#   PEERCPU  ../shared/peers/batch_bkb_peer.py with a time.process_time()
#            "cpu_seconds" field around its loop
#   PEERBKB  this project's peerbkb binary (go build ./bench/peerbkb)
#   ARMS     folder of FUNCTION-A-SEED.csv files from make_arms.py
set -eu
f=$1 a=$2 s=$3
arms=$ARMS/$f-$a-$s.csv
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GOMAXPROCS=1
PYTHONPATH=$PEER /usr/bin/python3 "$PEERCPU" "$arms" 500 "$s" --lengthscale 0.2 --noise 0.1 --qbar 2 --fnorm 1 --delta 0.5
for v in "" "-lazy" "-incremental" "-incremental -lazy"; do
	# shellcheck disable=SC2086
	"$PEERBKB" -arms "$arms" -T 500 -seed "$s" $v
done
