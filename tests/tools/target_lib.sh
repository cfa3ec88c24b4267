# tests/tools/target_lib.sh: the preamble of the integration tests that drive the reference
# target (tests/target): sourced from the repository root. It defines ok/bad/check (TAP
# lines, counted in n and fail), checks the tools, and installs the target's npm packages
# from its lockfile when they are missing.
FLOOD=${FLOOD:-build/flood}
TARGET_DIR=tests/target
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
check() { if eval "$1"; then ok "$2"; else bad "$2"; fi; }

# pick_port: a port for a listener whose number must be named before it starts (the target
# and the crowd each name the other's). Drawn below the kernel's ephemeral range, where no
# port-0 listener or outgoing connection of another process lands, and not listening now:
# only a process that drew the same number at the same moment can take it first.
pick_port() {
    local lo p
    lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    [ -n "$lo" ] && [ "$lo" -gt 12000 ] || lo=32768
    for _ in $(seq 50); do
        p=$((10000 + RANDOM % (lo - 10000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

for tool in node curl jq; do
    command -v "$tool" >/dev/null || { echo "not ok 1 - $tool is not installed"; exit 1; }
done
if [ ! -d "$TARGET_DIR/node_modules/@fedify/fedify" ]; then
    (cd "$TARGET_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        { echo "not ok 1 - npm ci in tests/target"; exit 1; }
fi
