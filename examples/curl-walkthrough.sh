#!/usr/bin/env bash
# The README's "Try it" with nothing but curl: version, createResource from an external URI,
# queryResource, getData whole, with Range and with If-None-Match, a signed link, then delete.
#   CMS_URL=http://127.0.0.1:9082 ./examples/curl-walkthrough.sh https://example.org/logo.png
# With auth on, set ACCESS_TOKEN (see the README) and every call carries it.
set -euo pipefail
CMS_URL=${CMS_URL:-http://127.0.0.1:9082}
EXTERNAL_URI=${1:?usage: $0 <external http(s) URI to register>}
TENANT=${TENANT:-zaq12345}
AUTH=()
[ -n "${ACCESS_TOKEN:-}" ] && AUTH=(-H "Authorization: Bearer $ACCESS_TOKEN")
api() { curl -sS --fail-with-body "${AUTH[@]}" "$@"; }
json() { node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8'))$1"; }

echo "== apiversion"
api "$CMS_URL/apiversion" -H 'accept: application/json'; echo

echo "== createResource"
CREATED=$(api -X POST "$CMS_URL/cms/v1.0/createResource" -H 'Content-Type: application/json' -H 'accept: */*' \
  -d "{\"resourceAuthor\":\"Test Author\",\"resourceExternalURI\":\"$EXTERNAL_URI\",
       \"resourceMediaType\":\"text/plain\",\"resourceName\":\"walkthrough.txt\",\"resourceTenantId\":\"$TENANT\"}")
echo "$CREATED"
UID_=$(echo "$CREATED" | json .resourceUID)
URI=$(echo "$CREATED" | json .resourceURI)
AUTHOR=$(echo "$CREATED" | json .author)

echo "== queryResource"
api -X POST "$CMS_URL/cms/v1.0/queryResource" -H 'Content-Type: application/json' -d "{\"queryUID\":\"$UID_\"}"; echo

echo "== getData"
api "$CMS_URL/cms/v1.0/getData/$URI" -o walkthrough.txt
echo "saved walkthrough.txt ($(wc -c < walkthrough.txt) bytes)"

echo "== getData with Range: bytes=0-4"
api "$CMS_URL/cms/v1.0/getData/$URI" -H 'Range: bytes=0-4' -D headers.txt; echo
grep -i '^content-range' headers.txt
ETAG=$(grep -i '^etag:' headers.txt | cut -d' ' -f2 | tr -d '\r')

echo "== getData with If-None-Match: $ETAG"
api "$CMS_URL/cms/v1.0/getData/$URI" -H "If-None-Match: $ETAG" -o /dev/null -w 'status %{http_code}\n'

echo "== createDataLink (no token needed to fetch it)"
LINK=$(api -X POST "$CMS_URL/cms/v1.0/createDataLink" -H 'Content-Type: application/json' -d "{\"resourceURI\":\"$URI\",\"expiresIn\":600}" | json .url)
curl -sS --fail-with-body "$LINK" -o /dev/null -w 'signed link: status %{http_code}\n'

echo "== lockResourceDTO, deleteResource"
LOCKED=$(api -X POST "$CMS_URL/cms/v1.0/lockResourceDTO" -H 'Content-Type: application/json' -d "{\"resourceUID\":\"$UID_\",\"author\":\"$AUTHOR\"}")
api -X POST "$CMS_URL/cms/v1.0/deleteResource" -H 'Content-Type: application/json' -d "$LOCKED" -o /dev/null -w 'deleted: status %{http_code}\n'
curl -sS "${AUTH[@]}" "$CMS_URL/cms/v1.0/getData/$URI" -o /dev/null -w 'after delete: status %{http_code}\n'
rm -f headers.txt
