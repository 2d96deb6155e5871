#!/usr/bin/env bash
# The package as npm would publish it: packed, installed into an empty folder, and run from there
# (npm run test:pack; CI runs it after npm test). Proves the tarball holds the compiled CLI, the
# samples and templates, and that its runtime dependencies are declared as such.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
tgz=$(npm pack --silent --pack-destination "$work" | tail -n 1)
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "./$tgz"

npx --no-install payout-batch --help | grep -q 'payout-batch validate <file>'
test "$(npx --no-install payout-batch --version)" = "$(node -p "require('$root/package.json').version")"
npx --no-install payout-batch template --method SEPA >sepa.csv
npx --no-install payout-batch validate sepa.csv >/dev/null
npx --no-install payout-batch demo --rate 200 --dir demo >/dev/null
grep -q PENDING demo/*.results.csv
echo "pack: $tgz installs into an empty folder; --help, template, validate and demo run from it"
