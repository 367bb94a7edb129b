#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests and the demo: `start DIR` creates one in DIR (initdb as an
# unprivileged user — PostgreSQL refuses to run as root), listening on 127.0.0.1 and a Unix socket in DIR, trust
# authentication for the `persistence` role plus a password role for the credential tests; prints the URL.
# `restart DIR` restarts it (fast shutdown: open connections are dropped). `stop DIR` stops it and removes DIR. Installs the `postgresql` package through apt when no server binaries exist.
set -euo pipefail

command=${1:-}
dir=${2:-}
port=${PERSISTENCE_POSTGRES_PORT:-55432}
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: $0 start|restart|stop DIR" >&2; exit 2; }

find_bin() {
    local candidate
    for candidate in /usr/lib/postgresql/*/bin "$(pg_config --bindir 2>/dev/null || true)"; do
        if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then echo "$candidate"; return 0; fi
    done
    return 1
}

as_server_user() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The server outlives this script: it must not inherit the caller's descriptors beyond 0-2 (Foundation's `Process`,
# for one, learns that its child ended when a socket it gave the child closes — a server holding it would hide that).
close_inherited_descriptors() {
    local fd
    for fd in /proc/$$/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
}

case "$command" in
start)
    close_inherited_descriptors
    if ! bin=$(find_bin); then
        if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo";
        else echo "error: installing postgresql needs root or sudo" >&2; exit 1; fi
        echo "==> postgres: installing postgresql (apt-get)" >&2
        $sudo apt-get update -q >&2
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
        bin=$(find_bin) || { echo "error: no initdb/pg_ctl after installing postgresql" >&2; exit 1; }
        # Debian starts a default cluster on install where services may start: this machine didn't run one before.
        if command -v pg_lsclusters >/dev/null 2>&1; then
            pg_lsclusters --no-header 2>/dev/null | awk '$4 == "online" { print $1, $2 }' |
                while read -r version cluster; do $sudo pg_ctlcluster "$version" "$cluster" stop >&2 || true; done
        fi
    fi
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    as_server_user "$bin/initdb" -D "$dir/data" -U persistence --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
    # max_connections also sizes PostgreSQL's table of SERIALIZABLE transactions (ten per connection). The test phase
    # runs ~200 stores at once, one write of ~70 s among them (the 100,000-record reconcile, debug build); with 200
    # the table filled, the server summarized old transactions, and short writes in other stores failed with 40001
    # ("conflict out to old pivot") over and over. 1,000 keeps them apart (~60 MB more shared memory).
    as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=1000" start >&2
    psql -h 127.0.0.1 -p "$port" -U persistence -d postgres -q -v ON_ERROR_STOP=1 \
        -c "CREATE DATABASE persistence_test" \
        -c "CREATE ROLE secret_user LOGIN PASSWORD 'correct horse'" >&2
    # The password role needs password authentication: prepend a rule and reload.
    as_server_user sh -c "printf 'host all secret_user 127.0.0.1/32 scram-sha-256\n' | cat - '$dir/data/pg_hba.conf' > '$dir/data/pg_hba.new' && mv '$dir/data/pg_hba.new' '$dir/data/pg_hba.conf'"
    as_server_user "$bin/pg_ctl" -D "$dir/data" reload >&2
    echo "postgres://persistence@127.0.0.1:$port/persistence_test"
    ;;
restart)
    close_inherited_descriptors
    bin=$(find_bin) || { echo "error: no pg_ctl" >&2; exit 1; }
    as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w restart >&2
    ;;
stop)
    if [ -d "$dir/data" ] && bin=$(find_bin); then
        as_server_user "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start|restart|stop DIR" >&2; exit 2
    ;;
esac
