#!/usr/bin/env bash
# Drive a bkb study from a shell loop with ask and tell: here the "experiment"
# is the Branin function computed with awk; replace it with your own command.
#
#   examples/asktell.sh [STUDY_FILE] [EVALUATIONS]
#
# Run it from anywhere. Without STUDY_FILE the study goes to a new temporary
# directory (printed at the end), never into the repository. It builds bkb
# from this repository unless $BKB names a bkb binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=
study=${1:-}
if [ -z "$study" ]; then
  tmp=$(mktemp -d)
  study=$tmp/branin-study.jsonl
fi
n=${2:-50}
bkb=${BKB:-}
if [ -z "$bkb" ]; then
  [ -n "$tmp" ] || tmp=$(mktemp -d)
  (cd "$here/.." && go build -o "$tmp/bkb" ./cmd/bkb)
  bkb=$tmp/bkb
fi
if [ ! -e "$study" ]; then
  "$bkb" create-study --study "$study" --space "$here/space.json" --budget "$n"
fi
for _ in $(seq "$n"); do
  # ask prints "trial<TAB>x1<TAB>x2" with --format tsv (JSON by default).
  read -r trial x1 x2 < <("$bkb" ask --study "$study" --format tsv) || break
  y=$(awk -v x1="$x1" -v x2="$x2" 'BEGIN { pi = atan2(0, -1); b = 5.1 / (4 * pi * pi); c = 5 / pi; t = 1 / (8 * pi);
    u = x2 - b * x1 * x1 + c * x1 - 6; printf "%.17g", u * u + 10 * (1 - t) * cos(x1) + 10 }')
  "$bkb" tell --study "$study" --trial "$trial" --value "$y"
done
"$bkb" status --study "$study"
echo "study: $study"
