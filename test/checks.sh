#!/usr/bin/env bash
# The static checks (`npm run check`; CI runs them before `npm test`), at once: the typecheck, ESLint (type-aware) and the Prettier
# check each take a core for a while, and none needs another's output. Fails if any one fails.
set -u
cd "$(dirname "$0")/.."
npx tsc --noEmit &
tsc=$!
npx eslint -c test/eslint.config.js src test &
lint=$!
npx prettier --check --log-level warn . &
format=$!
status=0
wait "$tsc" || { echo 'typecheck failed (tsc --noEmit)' >&2; status=1; }
wait "$lint" || { echo 'lint failed (npm run lint)' >&2; status=1; }
wait "$format" || { echo 'formatting differs (npm run format rewrites it)' >&2; status=1; }
exit "$status"
