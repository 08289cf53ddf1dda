#!/usr/bin/env bash
# `npm run breaking [REF]`: buf breaking of proto/ against a git ref (default: main).
# buf's own `.git#branch=` input cannot see node_modules (where the google/api imports live), so
# both sides are built into images with the same imports and the images are compared.
set -euo pipefail
ref=${1:-main}
root=$(git rev-parse --show-toplevel)
against=$(mktemp -d)
trap 'rm -rf "$against"' EXIT
git -C "$root" archive "$ref" proto buf.yaml | tar -x -C "$against"
ln -s "$root/node_modules" "$against/node_modules"
cd "$root"
npx buf build "$against" --exclude-source-info -o "$against/before.binpb"
npx buf build . --exclude-source-info -o "$against/after.binpb"
npx buf breaking "$against/after.binpb" --against "$against/before.binpb"
echo "no breaking changes against $ref"
