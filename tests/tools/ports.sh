# tests/tools/ports.sh: pick_port, for the integration tests (sourced).
#
# pick_port: a port for a listener whose number must be named before it starts (the target
# and the crowd each name the other's; capacity's steps listen on the same port one after
# the other). Drawn below the kernel's ephemeral range, where no port-0 listener or
# outgoing connection of another process lands, and not listening now: only a process that
# drew the same number at the same moment can take it first. A port-0 probe
# (bind, read the number, close) is not enough: the number is in the ephemeral range and
# any outgoing connection of a suite running beside it may take it before the listener.
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
