#!/usr/bin/env bash
# scripts/check-docs: the repository's pages pass, and a planted tree's broken links, anchors and
# count of labs are each found, while links in code and valid anchors (punctuation, repeated
# headings) are not reported.
#
#   check_docs_test.sh SOURCE_DIR
set -uo pipefail
script="$1/scripts/check-docs"
work=$(mktemp -d -t gpulab-check-docs.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

text=$("$script" 2>&1); expect "the repository's pages" 0 $? "" "$text"

mkdir -p "$work/docs" "$work/labs/lab01_a" "$work/labs/lab02_b" "$work/labs/lab03_c"
cat >"$work/README.md" <<'MD'
# Planted

Two labs exist today. See [the guide](docs/guide.md#grading-a-class---roster) and
[notes](docs/guide.md#notes-1), [a folder](labs/lab01_a), [the web](https://example.com/x).
MD
cat >"$work/docs/guide.md" <<'MD'
# Guide

## Grading a class: `--roster`

A [missing page](missing.md), a [missing heading](#no-such-heading), and
[another page's missing heading](../README.md#nowhere). In a code span: `[x](gone.md)`.

```md
[in a code block](also-gone.md)
```

## Notes

## Notes
MD
text=$("$script" "$work" 2>&1)
expect "a planted tree" 1 $? "check-docs: 4 problem(s)" "$text"
expect "a missing file" 1 1 "docs/guide.md:5: links to missing.md, which does not exist" "$text"
expect "a missing heading" 1 1 "docs/guide.md:5: links to #no-such-heading, which is no heading of docs/guide.md" "$text"
expect "another page's missing heading" 1 1 "docs/guide.md:6: links to #nowhere, which is no heading of README.md" "$text"
expect "the count of labs" 1 1 'README.md: says "two labs exist today"; labs/ has 3' "$text"
for quiet in gone.md also-gone.md roster notes-1 lab01_a example.com; do
  [[ "$text" != *"$quiet"* ]] || expect "nothing about $quiet" 1 1 "(not reported)" "$text"
done

finish
