#!/usr/bin/env bash
# Runs `make <stage>` for each stage in order, stops at the first failure, and prints how
# long each stage took at the end (also when one failed), so a CI log shows where the time
# goes. Extra `VAR=value` arguments before the stages are passed to every make.
#
#   scripts/stages.sh E2E_BUILD=0 setup fmt-check lint test-rust
set -uo pipefail

make_vars=()
stages=()
for arg in "$@"; do
  case "$arg" in
    *=*) make_vars+=("$arg") ;;
    *) stages+=("$arg") ;;
  esac
done

names=()
times=()
status=0
total_start=$SECONDS
for stage in "${stages[@]}"; do
  start=$SECONDS
  echo "=== make $stage"
  if ! "${MAKE:-make}" --no-print-directory "${make_vars[@]}" "$stage"; then
    status=1
  fi
  names+=("$stage")
  times+=($((SECONDS - start)))
  [ "$status" -eq 0 ] || break
done

echo
echo "stage times:"
for i in "${!names[@]}"; do
  printf '  %-14s %4d:%02d\n' "${names[$i]}" $((times[i] / 60)) $((times[i] % 60))
done
total=$((SECONDS - total_start))
printf '  %-14s %4d:%02d\n' total $((total / 60)) $((total % 60))
if [ "$status" -ne 0 ]; then
  echo "failed at: ${names[-1]}" >&2
fi
exit "$status"
