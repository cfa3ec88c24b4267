#!/bin/sh
# scripts/kubernetes/set-shards.sh N: set the shard count of job.yaml (completions,
# parallelism and FLOOD_SHARDS, which must agree) to N.
set -eu
n=${1:?usage: set-shards.sh N}
case "$n" in '' | *[!0-9]* | 0) echo "set-shards.sh: N must be 1..4096" >&2; exit 2 ;; esac
f=$(dirname "$0")/job.yaml
sed -i -e "s/^  completions: [0-9]*$/  completions: $n/" \
    -e "s/^  parallelism: [0-9]*$/  parallelism: $n/" \
    -e "/name: FLOOD_SHARDS/{n;s/value: \"[0-9]*\"/value: \"$n\"/}" "$f"
grep -E '^  (completions|parallelism):|FLOOD_SHARDS' -A1 "$f" | grep -E 'completions|parallelism|value' 
