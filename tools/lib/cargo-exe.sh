# Sourced by the tools/*-h100.sh scripts (needs $root, the repository root).
# cargo_exe test|bench PACKAGE TARGET: builds (release) and prints the executable of one
# test or bench target, read from cargo's JSON messages; prints nothing when it fails.
cargo_exe() {
  local kind="$1" package="$2" target="$3" flag
  case "$kind" in
    test) flag="--test" ;;
    bench) flag="--bench" ;;
    *) echo "cargo_exe: test or bench, not $kind" >&2; return 2 ;;
  esac
  (cd "$root" && if [ "$kind" = test ]; then
      cargo test --release -p "$package" "$flag" "$target" --no-run --message-format=json 2>/dev/null
    else
      cargo bench -p "$package" "$flag" "$target" --no-run --message-format=json 2>/dev/null
    fi) |
    python3 -c '
import sys, json
target = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == target:
        print(m["executable"])
' "$target" | tail -1
}
