#!/bin/sh
# Rebuild ../sigma.mjs from the pinned npm packages (needs node and the npm registry).
set -e
cd "$(dirname "$0")"
npm install --no-audit --no-fund
npx esbuild entry.js --bundle --format=esm --minify --target=es2020 --legal-comments=none \
  --banner:js="/* sigma 3.0.3 + graphology 0.26.0 (MIT; see LICENSES.txt), built by recipe/build.sh */" \
  --outfile=../sigma.mjs
rm -rf node_modules package-lock.json
