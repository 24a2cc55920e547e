# Sourced by scripts/bench/service-load and scripts/bench/service-bench: start saml-server instances on free loopback
# ports and stop them on exit. Needs $binary (the saml-server executable).
pids=()
# Waits for its own instances only: a caller's other background jobs (a sink, a proxy) keep running.
stop_instances() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
trap stop_instances EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
# start_instance CPU STORE: one instance on the bundled TestVectors/, pinned to CPU ("-": unpinned), with
# STORE (memory or a postgres:// URL); sets $port and $instance_pid once it is ready (fails after 10 s).
# Every instance gets the same request-ID key (a throw-away one made per run), as instances sharing a
# store must. Set instance_prefix (a command the server runs under, e.g. faketime) and instance_log (where
# its output goes; default none) to change the next instances.
instance_prefix=()
: "${SAML_SERVICE_REQUEST_KEYS:=1:$(python3 -c 'import secrets; print(secrets.token_hex(32))')}"
export SAML_SERVICE_REQUEST_KEYS
start_instance() {
    local pin=()
    port=$(free_port)
    [ "$1" = - ] || pin=(taskset -c "$1")
    SAML_SERVICE_LOG_LEVEL=${SAML_SERVICE_LOG_LEVEL:-warning} "${instance_prefix[@]}" "${pin[@]}" "$binary" serve --config "${SAML_SERVICE_CONFIG:-TestVectors/exchange/service.json}" --allow-development-keys --port "$port" --store "$2" \
        >>"${instance_log:-/dev/null}" 2>&1 &
    instance_pid=$!
    pids+=($!)
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "instance on $port did not become ready" >&2
    return 1
}
