#!/usr/bin/env bash
# Type-checks every generated Grafana dashboard against Grafana's published schema, @grafana/schema
# (dashboards/README.md, "Schema check"); needs node and npm, not Maven.
#   dashboards/schema-check/run.sh          deploy/grafana/dashboards, then the self-test: each mutation of
#                                           selftest.mjs must be refused, so the check is shown able to fail
#   dashboards/schema-check/run.sh <dir>    the dashboards of <dir> only
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(cd "${1:-$here/../../deploy/grafana/dashboards}" && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
schema="$(node -p "require('./node_modules/@grafana/schema/package.json').version")"

node generate.mjs "$dir" build
npx --no-install tsc -p tsconfig.json
echo "schema-check: every dashboard of $dir type-checks against @grafana/schema $schema"

if [ $# -eq 0 ]; then
  node selftest.mjs "$dir" build-selftest >/dev/null
  set +e
  out="$(npx --no-install tsc -p tsconfig.selftest.json 2>&1)"
  set -e
  for f in build-selftest/*.ts; do
    if ! grep -q "^$f(" <<<"$out"; then
      echo "schema-check self-test: $f passed the check, but the mutation must be refused" >&2
      exit 1
    fi
  done
  echo "schema-check self-test: all $(ls build-selftest/*.ts | wc -l) mutations refused"
fi
