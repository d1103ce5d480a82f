#!/usr/bin/env bash
# Where a server's CPU goes under load, with its JavaScript named: `perf record -e cpu-clock` (this
# VM has no hardware counters) of one server process in a checkout, µs per request by thread, object
# and symbol. bench/NOTES.md, twelfth and fourteenth passes.
#
#   bench/perf.sh <checkout> <label>   e.g. bench/perf.sh . main; bench/perf.sh ../b72 b72
#
# RUNTIME=node (default): `node --perf-basic-prof dist/node/server.mjs` of the checkout (build it
# first); V8 writes /tmp/perf-<pid>.map, which perf reads by itself. RUNTIME=bun: `bun src/bun.ts`,
# JavaScriptCore writing a JITDump (BUN_JSC_useJITDump) that `perf inject --jit` turns into symbols;
# Bun's own code has no symbols in the npm build: it shows as addresses, comparable between runs of
# the same binary.
# Starts the service (fresh volume and database), creates one 4 KiB resource, warms up 3 s, then
# records DURATION seconds (8) of the same load: wrk -c64 (CONNECTIONS), or `ab -k -i` for HEAD
# (wrk waits for a HEAD answer's body). Prints user and system CPU per request; leaves in
# /tmp/perf-<runtime>-<label>: perf.data, by-thread.txt, by-dso.txt and by-symbol.txt (per-request
# µs: samples × 250 µs ÷ requests).
# Environment: SIGNED=1 loads a signed link of the resource instead (CMS_LINK_SECRET is set);
# METHOD=HEAD sends HEADs. Needs perf (linux-perf), wrk, ab (apache2-utils) and python3.
set -euo pipefail
checkout=$(realpath "$1") label=$2 runtime=${RUNTIME:-node}
bun=$(realpath "$(dirname "$0")/../node_modules/.bin/bun")
dir=/tmp/perf-$runtime-$label
rm -rf "$dir" && mkdir -p "$dir/jit"
port=$((5200 + RANDOM % 500))
base="http://127.0.0.1:$port"
connections=${CONNECTIONS:-64}

if [ "$runtime" = bun ]; then
  command=("$bun" src/bun.ts) workdir=$checkout
  export BUN_JSC_useJITDump=1 BUN_JSC_jitDumpDirectory=$dir/jit
else
  # Run from $dir: --perf-basic-prof also writes V8's isolate log into the working directory.
  command=(node --perf-basic-prof "$checkout/dist/node/server.mjs") workdir=$dir
fi
(cd "$workdir" && CMS_PORT=$port CMS_HOST=127.0.0.1 CMS_VOLUME=$dir/volume CMS_DATABASE_URL=file:$dir/db \
  CMS_LOG_LEVEL=info CMS_LINK_SECRET=bench-link-secret-0123456789abcdef CMS_WEBHOOK_POLL_MS=3600000 \
  CMS_GC_INTERVAL_SECONDS=86400 exec "${command[@]}" >"$dir/server.log" 2>&1) &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f /tmp/perf-$server.map' EXIT
for _ in $(seq 1 300); do curl -sf -o /dev/null "$base/healthz" && break; sleep 0.1; done

printf '{"resourceAuthor":"a","resourceBinary":"%s","resourceMediaType":"application/octet-stream","resourceName":"s.bin","resourceTenantId":"t"}' \
  "$(head -c 4096 /dev/urandom | base64 -w0)" >"$dir/create.json"
uri=$(curl -sf -X POST -H 'content-type: application/json' "$base/cms/v1.0/createResource" --data-binary @"$dir/create.json" |
  sed -E 's/.*"resourceURI":"([^"]+)".*/\1/')
url="$base/cms/v1.0/getData/$uri"
if [ "${SIGNED:-0}" = 1 ]; then
  link=$(curl -sf -X POST -H 'content-type: application/json' "$base/cms/v1.0/createDataLink" \
    --data-binary "{\"resourceURI\":\"$uri\",\"expiresIn\":3600}" | sed -E 's/.*"url":"([^"]+)".*/\1/')
  url="$base/${link#*://*/}"
fi
load() { # load <seconds> <output file>
  if [ "${METHOD:-GET}" = HEAD ]; then
    ab -k -i -q -c "$connections" -t "$1" -n 100000000 "$url" >"$2"
  else
    wrk -t1 -c"$connections" -d"$1s" "$url" >"$2"
  fi
}

load 3 /dev/null
read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$server/stat")
# -k 1: CLOCK_MONOTONIC time stamps, the clock the JITDump's records carry.
perf record -k 1 -e cpu-clock -F 4000 -p "$server" -o "$dir/perf.raw" >/dev/null 2>&1 &
perf_pid=$!
sleep 0.3
load "${DURATION:-8}" "$dir/load.txt"
kill -INT $perf_pid && wait $perf_pid || true
read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$server/stat")
requests=$(awk '/requests in/ {print $1} /Complete requests:/ {print $3}' "$dir/load.txt")

if [ "$runtime" = bun ]; then
  # JavaScriptCore names its dump jit-<n>-<pid>.dump; perf inject only takes jit-<pid>.dump. The
  # recorded mmap of the dump is renamed in place (same length, NUL-padded) and a link made to match.
  dump=$(ls "$dir"/jit/jit-*-"$server".dump)
  ln -sf "$dump" "$dir/jit/jit-$server.dump"
  python3 - "$dir/perf.raw" "$dump" "$dir/jit/jit-$server.dump" <<'PY'
import sys
data, old, new = open(sys.argv[1], "rb").read(), sys.argv[2].encode(), sys.argv[3].encode()
open(sys.argv[1], "wb").write(data.replace(old, new.ljust(len(old), b"\0")))
PY
  perf inject --jit -i "$dir/perf.raw" -o "$dir/perf.data" 2>/dev/null
  rm -f "$dir/perf.raw"
else
  mv "$dir/perf.raw" "$dir/perf.data"
fi

per_request() { # perf report --sort $1, as µs per request (while /tmp/perf-<pid>.map still names Node's JIT code)
  perf report -i "$dir/perf.data" --sort "$1" --stdio -n 2>/dev/null | grep -v '^#' | grep -v '^$' |
    awk -v n="$requests" '{ $1 = sprintf("%8.3f", $2 * 250 / n); $2 = ""; print }'
}
per_request comm >"$dir/by-thread.txt"
per_request dso >"$dir/by-dso.txt"
per_request dso,sym >"$dir/by-symbol.txt"
kill $server && wait $server 2>/dev/null || true
awk -v l="$label" -v n="$requests" -v u=$((u1 - u0)) -v s=$((s1 - s0)) \
  'BEGIN { printf "%s: %d requests, user %.2f µs, system %.2f µs per request\n", l, n, u * 1e4 / n, s * 1e4 / n }'
echo "profiles (µs per request) in $dir:"
head -5 "$dir/by-dso.txt"
