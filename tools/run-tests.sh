#!/usr/bin/env bash
# Runs the Catch2 suite and ends with the line "N passed, N failed, N skipped"
# (test cases). A test that cannot run here (no Chromium, no MPI build, no
# python3…) prints "attn-test-skipped<TAB>NAME<TAB>REASON" (tests/support.h
# ATTN_SKIP); Catch2 v2 counts it as passed, so it is moved from passed to
# skipped here and listed with what would enable it. A test that ran without
# some ISA path this CPU lacks prints "attn-test-partial<TAB>NAME<TAB>REASON"
# and is listed apart, still counted. Exit status: the suite's.
set -uo pipefail
binary=$1; shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$binary" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
summary=$(grep -E '^(All tests passed|test cases:)' "$log" | tail -n 1)
passed=0; failed=0
if [[ $summary =~ All\ tests\ passed.*in\ ([0-9]+)\ test\ case ]]; then
  passed=${BASH_REMATCH[1]}
elif [[ $summary =~ test\ cases:\ *([0-9]+)\ \|\ *([0-9]+)\ passed\ \|\ *([0-9]+)\ failed ]]; then
  passed=${BASH_REMATCH[2]}; failed=${BASH_REMATCH[3]}
elif [[ $summary =~ test\ cases:\ *([0-9]+)\ \|\ *([0-9]+)\ failed ]]; then
  failed=${BASH_REMATCH[2]}
fi
[ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
# The test names and reasons reported with one status, one per line (sorted, unique).
status_lines() { grep -P "^attn-test-$1\t" "$log" | cut -f2- | sort -u; }
# list HEADING LINES: the heading, then "  NAME: REASON" per line.
list() { echo "$1"; printf '%s\n' "$2" | sed 's/^/  /; s/\t/: /'; }
skips=$(status_lines skipped)
skipped=0
if [ -n "$skips" ]; then
  skipped=$(printf '%s\n' "$skips" | cut -f1 | sort -u | wc -l)
  passed=$((passed > skipped ? passed - skipped : 0))
  list "skipped (not counted as passed):" "$skips"
fi
partial=$(status_lines partial)
[ -z "$partial" ] || list "ran in part (counted; what this machine could not cover):" "$partial"
echo "$passed passed, $failed failed, $skipped skipped"
exit "$status"
