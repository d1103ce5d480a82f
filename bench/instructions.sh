#!/usr/bin/env bash
# Instructions per request of a Node server bundle, counted by callgrind: a figure the machine's
# load does not move (bench/NOTES.md, "eighth pass"). Needs valgrind and ab (apache2-utils).
#
#   bench/instructions.sh <bundle> <port> <label>
#   e.g. npm run build && bench/instructions.sh dist/node/server.mjs 4601 main
#   RUNTIME=bun bench/instructions.sh <checkout> <port> <label>: `bun src/bun.ts` in that checkout
#
# Starts the bundle under callgrind with instrumentation off, creates one 4 KiB resource, warms up
# with WARM requests, then counts WINDOWS windows of N requests each (a dump per window). Prints
# each window's instructions ÷ N; read the later windows (the first after switching on is always
# 25–30 % high). Each window's dump is kept in the printed directory for callgrind_annotate.
# Settings, the same for every bundle compared:
# - node --single-threaded: compiles and GC run on the main thread, so all work is counted;
# - --no-memory-reducer: V8 starts major GCs when the allocation rate is low, which under
#   valgrind's slowdown it always is; a fixed 16 MB young generation: its size otherwise varies per
#   process and with it the scavenges per window;
# - no background pass in a window (webhook poll, blob collection).
# Bun runs as `bun src/bun.ts` (as bench --compare runs it) with its defaults: JavaScriptCore's
# compiler and collector threads are counted too, so its windows vary more than Node's.
# Environment: WARM (60000), N (3000), WINDOWS (4), HEAD (1: `ab -i`; 0: GET), SIZE (the resource's
# bytes, 4096; past the small-blob cache's limit a GET reads its file), RANGE (a Range header's
# value for every request, e.g. bytes=65536-131071 with SIZE=1048576), MIXED (that many GETs the
# app answers, `?via=app`, before the warm-up: the fast path after the app has run), CONDITIONAL (1:
# every request carries If-None-Match with the resource's ETag, a 304), NODE_FLAGS (added,
# e.g. --perf-basic-prof to name JIT code from /tmp/perf-PID.map), VALGRIND_FLAGS (e.g. --cache-sim=yes).
set -euo pipefail
bundle=$1 port=$2 label=$3
warm=${WARM:-60000} n=${N:-3000} windows=${WINDOWS:-4}
ab_method=$([ "${HEAD:-1}" = 1 ] && echo -i || true)
dir=$(mktemp -d /tmp/instructions-XXXX)
base="http://127.0.0.1:$port"

if [ "${RUNTIME:-node}" = bun ]; then
  command=(node_modules/.bin/bun src/bun.ts)
  workdir=$bundle
else
  command=(node --single-threaded --no-memory-reducer --min-semi-space-size=16 --max-semi-space-size=16
    ${NODE_FLAGS:-} "$(realpath "$bundle")")
  workdir=$dir # files V8 may write (--perf-basic-prof's isolate logs) stay with the dumps
fi
(cd "$workdir" && CMS_PORT=$port CMS_HOST=127.0.0.1 CMS_VOLUME=$dir/volume CMS_DATABASE_URL=file:$dir/db \
  CMS_LOG_LEVEL=info CMS_WEBHOOK_POLL_MS=3600000 CMS_GC_INTERVAL_SECONDS=86400 \
  exec valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file ${VALGRIND_FLAGS:-} \
  --callgrind-out-file="$dir/callgrind.out" "${command[@]}" >"$dir/server.log" 2>"$dir/valgrind.log") &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT

for _ in $(seq 1 1200); do curl -sf -o /dev/null "$base/healthz" && break; sleep 0.5; done
printf '{"resourceAuthor":"a","resourceBinary":"%s","resourceMediaType":"application/octet-stream","resourceName":"s.bin","resourceTenantId":"t"}' \
  "$(head -c "${SIZE:-4096}" /dev/urandom | base64 -w0)" >"$dir/create.json"
uri=$(curl -sf -X POST -H 'content-type: application/json' "$base/cms/v1.0/createResource" --data-binary @"$dir/create.json" |
  sed -E 's/.*"resourceURI":"([^"]+)".*/\1/')
range=(${RANGE:+-H "Range: $RANGE"})
url="$base/cms/v1.0/getData/$uri"
curl -sf -o /dev/null -D "$dir/head.txt" ${ab_method:+-I} "${range[@]}" "$url"
if [ "${CONDITIONAL:-0}" = 1 ]; then
  etag=$(grep -i '^etag:' "$dir/head.txt" | cut -d' ' -f2- | tr -d '\r')
  range+=(-H "If-None-Match: $etag")
fi
[ "${MIXED:-0}" = 0 ] || ab -k -q -c 8 -n "$MIXED" "$url?via=app" >"$dir/mixed.txt"
ab -k $ab_method "${range[@]}" -q -c 8 -n "$warm" "$url" >"$dir/warm-up.txt"
callgrind_control -i on $server >/dev/null 2>&1
line="$label"
for w in $(seq 1 "$windows"); do
  ab -k $ab_method "${range[@]}" -q -c 8 -n "$n" "$url" >"$dir/ab-$w.txt"
  callgrind_control -d "window-$w" $server >/dev/null 2>&1
  sleep 1
  dump=$(ls -t "$dir"/callgrind.out.* | head -1)
  mv "$dump" "$dir/window-$w.out"
  ir=$(grep -E '^(summary|totals):' "$dir/window-$w.out" | head -1 | awk '{print $2}')
  failed=$(awk '/Failed requests/ {print $3}' "$dir/ab-$w.txt")
  line="$line w$w=$((ir / n))"
  [ "${failed:-0}" = 0 ] || line="$line (failed: $failed)"
done
callgrind_control -i off $server >/dev/null 2>&1
echo "$line pid=$server dir=$dir"
