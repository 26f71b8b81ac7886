#!/usr/bin/env bash
# Two builds of Rookery side by side in one run (docs/benchmarks.md, "Node 20 against Node 24"): each
# benchmark runs old then new, round after round (A B A B ...), so a machine's drift in load lands on
# both. Every stdout JSON line goes to $OUT/<name>-<old|new>-<round>.json, stderr to the same name with
# .err; one line per run in $OUT/runs.tsv (name, side, round, exit code, wall seconds, load average
# before the run). A file $STOP stops everything at once (the running benchmark's process group is
# killed). Tables: node scripts/bench-compare/summarise.mjs $OUT.
#
# Each tree is a `git worktree add` of its commit, installed and built with its own Node first on PATH
# (pnpm install --frozen-lockfile && npx turbo run build); each side runs with its own TMPDIR, so
# cached datasets never cross SQLite or code versions.
#
# Usage: OLD_TREE=… NEW_TREE=… OLD_NODE_BIN=… NEW_NODE_BIN=… scripts/bench-compare/compare.sh [bench ...]
#        (default: all, in the order below; ROUNDS_<bench>=n overrides a benchmark's rounds)
set -u

OLD_TREE=${OLD_TREE:?set OLD_TREE to the old build's worktree}
NEW_TREE=${NEW_TREE:?set NEW_TREE to the new build's worktree}
OLD_PATH="${OLD_NODE_BIN:?set OLD_NODE_BIN to the old side's node directory}:$PATH"
NEW_PATH="${NEW_NODE_BIN:?set NEW_NODE_BIN to the new side's node directory}:$PATH"
OUT=${OUT:-/tmp/bench}
STOP=${STOP:-/tmp/bench-stop}
mkdir -p "$OUT" /tmp/bench-tmp/old /tmp/bench-tmp/new

# Reduced sizes (say so in the report): queries and the index-build database at 200,000 documents
# instead of 1,000,000.
QUERIES_DOCS=200000
INDEX_DOCS_DIR=/tmp/bench-tmp/index-build-docs   # kept by one bench:queries --dir run (old tree)

# bench name -> "rounds|arguments"
declare -A PLAN=(
  [codec]="3|"
  [writes]="2|"
  [backup]="2|"
  [mirror]="2|"
  [fulltext]="1|"
  [client]="1|"
  [queries]="1|--docs $QUERIES_DOCS"
  [index-build-map]="2|--docs-dir $INDEX_DOCS_DIR --index map --rounds 1"
  [index-build-mapreduce]="2|--docs-dir $INDEX_DOCS_DIR --index mapreduce --rounds 1"
  [cold-start]="1|"
  [gateway]="1|"
)
ORDER=(codec writes backup mirror fulltext client queries index-build-map index-build-mapreduce cold-start gateway)

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$OUT/compare.log" >&2; }

stopped() { [ -e "$STOP" ]; }

# run_one NAME SIDE ROUND SCRIPT ARGS... : one benchmark run in its own session (process group).
run_one() {
  local name=$1 side=$2 round=$3 script=$4; shift 4
  local tree path tmp
  if [ "$side" = old ]; then tree=$OLD_TREE path=$OLD_PATH tmp=/tmp/bench-tmp/old
  else tree=$NEW_TREE path=$NEW_PATH tmp=/tmp/bench-tmp/new; fi
  local base="$OUT/$name-$side-$round"
  local load; load=$(cut -d' ' -f1-3 /proc/loadavg)
  log "start $name $side round $round: (cd $tree && PATH=${path%%:*}:… TMPDIR=$tmp pnpm -s run $script $*)  load $load"
  local started; started=$(date +%s.%N)
  ( cd "$tree" && exec setsid env PATH="$path" TMPDIR="$tmp" pnpm -s run "$script" "$@" ) \
    >"$base.json" 2>"$base.err" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if stopped; then
      log "STOP file seen: killing $name $side round $round (process group $pid)"
      kill -TERM -- "-$pid" 2>/dev/null; sleep 2; kill -KILL -- "-$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$side" "$round" killed - "$load" >>"$OUT/runs.tsv"
      return 1
    fi
    sleep 1
  done
  wait "$pid"; local rc=$?
  local secs; secs=$(echo "$(date +%s.%N) - $started" | bc)
  # Anything the run left behind in its process group (a stray tenant or indexer) ends with it.
  kill -TERM -- "-$pid" 2>/dev/null
  printf '%s\t%s\t%s\t%s\t%.1f\t%s\n' "$name" "$side" "$round" "$rc" "$secs" "$load" >>"$OUT/runs.tsv"
  log "end   $name $side round $round: exit $rc, ${secs%.*} s, last line: $(tail -n1 "$base.json" | cut -c1-200)"
  return 0
}

prepare_index_docs() {
  [ -e "$INDEX_DOCS_DIR/docs.db" ] && return 0
  log "preparing the index-build database ($QUERIES_DOCS documents, old tree, not a measured round)"
  run_one index-build-prep old 0 bench:queries --docs "$QUERIES_DOCS" --iterations 5 --dir "$INDEX_DOCS_DIR"
}

benches=("$@"); [ ${#benches[@]} -eq 0 ] && benches=("${ORDER[@]}")
for name in "${benches[@]}"; do
  spec=${PLAN[$name]:-}
  [ -z "$spec" ] && { log "unknown benchmark $name"; continue; }
  rounds=${spec%%|*}; args=${spec#*|}
  override="ROUNDS_${name//-/_}"; rounds=${!override:-$rounds}
  script=bench:$name
  case $name in index-build-*) script=bench:index-build; prepare_index_docs || exit 1 ;; esac
  for round in $(seq 1 "$rounds"); do
    for side in old new; do
      stopped && { log "stopped before $name $side round $round"; exit 1; }
      # shellcheck disable=SC2086
      run_one "$name" "$side" "$round" "$script" $args || exit 1
    done
  done
done
log "done: ${benches[*]}"
