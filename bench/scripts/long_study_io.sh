#!/usr/bin/env bash
# What a long study writes and what its commands cost (docs/long-studies.md,
# "What a long study writes"). CPU seconds and blocks written come from
# /usr/bin/time (getrusage: %U+%S, %O in 512-byte blocks); the PostgreSQL
# server's CPU from its processes' /proc/PID/stat (utime+stime and, for the
# postmaster, its reaped backends' cutime+cstime); its WAL from
# pg_current_wal_lsn() before and after. Run single-threaded on both sides:
#
#   bench/scripts/long_study_io.sh build BKB T STUDY.jsonl
#       bytes written while `bkb optimize -f hartmann6 -T T` builds STUDY.jsonl,
#       and the final journal + snapshot size
#   bench/scripts/long_study_io.sh commands STUDY.jsonl BKB...
#       on a fresh copy of STUDY.jsonl per binary, in turn: status -q, then
#       3 x (ask --budget N+100, tell), then status -q
#   bench/scripts/long_study_io.sh pg-commands NAME BKB...
#       the same on the study NAME in $BKB_POSTGRES_URL (copied there with
#       bkb copy --from STUDY.jsonl --to "$BKB_POSTGRES_URL" --study NAME),
#       with the server's CPU and the WAL of each command
#   bench/scripts/long_study_io.sh pg-fresh STUDY.jsonl NAME BKB...
#       pg-commands on a fresh copy of STUDY.jsonl as NAME per binary (bkb
#       copy by the first binary), each with an empty local cache
#       ($BKB_CACHE_DIR in a temporary directory)
#   bench/scripts/long_study_io.sh pg-build BKB T NAME
#       WAL, server CPU and table sizes while building NAME on PostgreSQL
set -euo pipefail
export GOMAXPROCS=1
tick=$(getconf CLK_TCK)
server_ticks() {
	local p
	for p in $(pgrep -u postgres || true); do cat "/proc/$p/stat" 2>/dev/null || true; done |
		awk '{s+=$14+$15+$16+$17} END {print s+0}'
}
sql() { psql -qAt "$BKB_POSTGRES_URL" -c "$1"; }
# timed LABEL CMD...: one line of CPU, wall, peak RSS, blocks written and,
# with PostgreSQL, the server's CPU and the WAL.
timed() {
	local label=$1 a w0 b w1
	shift
	if [ -n "${PG:-}" ]; then a=$(server_ticks); w0=$(sql "select pg_current_wal_lsn()"); fi
	/usr/bin/time -f "$label: %U user %S sys %e wall %M KB %O blocks" "$@" 2>&1 >/tmp/long_study_io.out | grep -v '^bkb:' || true
	if [ -n "${PG:-}" ]; then
		b=$(server_ticks); w1=$(sql "select pg_current_wal_lsn()")
		echo "  server CPU $(awk -v a="$a" -v b="$b" -v t="$tick" 'BEGIN {print (b-a)/t}') s, WAL $(sql "select pg_wal_lsn_diff('$w1','$w0')") bytes"
	fi
}
loop() { # loop BKB STUDY-ARGS...
	local bin=$1 trials tr
	shift
	trials=$("$bin" status "$@" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["trials"])')
	timed status "$bin" status "$@" -q
	for _ in 1 2 3; do
		timed ask "$bin" ask "$@" --budget $((trials + 100))
		tr=$(python3 -c 'import json; print(json.load(open("/tmp/long_study_io.out"))["trial"])')
		timed tell "$bin" tell "$@" --trial "$tr" --value -1.5
	done
	timed status "$bin" status "$@" -q
}
case ${1:-} in
build)
	bin=$2 T=$3 study=$4
	rm -rf "$study" "$study".snapshot*
	timed "build T=$T" "$bin" optimize -f hartmann6 -T "$T" --study "$study" -q
	du -scb "$study" "$study".snapshot* | tail -1 | awk '{print "final journal + snapshot: " $1 " bytes"}'
	;;
commands)
	study=$2
	shift 2
	for bin in "$@"; do
		d=$(mktemp -d)
		cp -r "$study" "$study".snapshot* "$d/"
		echo "== $bin"
		loop "$bin" --study "$d/$(basename "$study")"
		rm -rf "$d"
	done
	;;
pg-commands)
	name=$2
	shift 2
	for bin in "$@"; do
		echo "== $bin"
		PG=1 loop "$bin" --storage "$BKB_POSTGRES_URL" --study "$name"
	done
	;;
pg-fresh)
	study=$2 name=$3
	shift 3
	for bin in "$@"; do
		sql "delete from bkb_studies where name = '$name'" >/dev/null
		"$1" copy --from "$study" --to "$BKB_POSTGRES_URL" --study "$name" >/dev/null
		cache=$(mktemp -d)
		echo "== $bin"
		BKB_CACHE_DIR=$cache PG=1 loop "$bin" --storage "$BKB_POSTGRES_URL" --study "$name"
		rm -rf "$cache"
	done
	;;
pg-build)
	bin=$2 T=$3 name=$4
	sql "delete from bkb_studies where name = '$name'" >/dev/null
	PG=1 timed "build T=$T" "$bin" optimize -f hartmann6 -T "$T" --storage "$BKB_POSTGRES_URL" --study "$name" -q
	sql "select 'records: ' || count(*) || ' rows, ' || sum(pg_column_size(r.*)) || ' bytes' from bkb_records r join bkb_studies s on s.id = r.study_id where s.name = '$name'"
	sql "select 'snapshot chunks: ' || count(*) || ' rows, ' || sum(length(c.data)) || ' bytes' from bkb_snapshot_chunks c join bkb_studies s on s.id = c.study_id where s.name = '$name'"
	;;
*)
	sed -n '2,26p' "$0" >&2
	exit 2
	;;
esac
