#!/usr/bin/env bash
# Runs every test: all Bazel tests, the ggml core again under AddressSanitizer and
# UndefinedBehaviorSanitizer, then the external-consumer check (tools/test_consumer.sh).
# Exits non-zero on the first failure. Extra arguments go to the first `bazel test`
# (e.g. tools/test.sh --test_output=all).
# Env: BAZEL (default "bazel"); SANITIZE_TARGETS (default "//ggml/...").
set -euo pipefail
cd "$(dirname "$0")/.."
bazel="${BAZEL:-bazel}"
read -r -a sanitize_targets <<<"${SANITIZE_TARGETS:-//ggml/...}"

echo "test: bazel test //... $*"
"$bazel" test "$@" -- //...
for config in asan ubsan; do
  echo "test: bazel test --config=$config ${sanitize_targets[*]}"
  "$bazel" test --config="$config" -- "${sanitize_targets[@]}"
done
tools/test_consumer.sh
echo "test: all passed"
