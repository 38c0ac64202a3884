# Sourced by the shell tests here: expect(), a check of one command's exit code and output, and
# finish(), which reports the checks that failed and exits.
failures=0

expect() {  # expect WHAT EXIT_WANTED EXIT_GOT TEXT_WANTED TEXT_GOT
  if [[ "$3" != "$2" || "$5" != *"$4"* ]]; then
    echo "FAILED: $1: expected exit $2 and output containing '$4'; got exit $3:"
    echo "$5" | sed 's/^/  | /'
    failures=$((failures + 1))
  fi
}

finish() {
  if ((failures > 0)); then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
