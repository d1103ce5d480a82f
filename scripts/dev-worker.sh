#!/bin/sh
# `npm run dev:worker [-- <wrangler dev options>]`: migrates the local D1 that wrangler dev will
# serve, then becomes wrangler dev. The options go to both, so `--persist-to <dir>` migrates the
# database in <dir> rather than the repository's .wrangler/ (which wrangler dev would then not read).
# `exec`: npm's Ctrl-C and SIGTERM reach wrangler itself, not a shell waiting on it.
node scripts/d1-migrate.mjs "$@" || exit $?
CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false exec wrangler dev "$@"
