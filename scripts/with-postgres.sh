#!/usr/bin/env bash
# Runs a command with PERSISTENCE_POSTGRES_URL pointing at a PostgreSQL server: the one that variable already names,
# or a throw-away cluster started here (scripts/postgres-server.sh, in a fresh temporary directory, on a free
# loopback port) and stopped and removed when the command ends — also when it fails or is interrupted.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ -n "${PERSISTENCE_POSTGRES_URL:-}" ]; then
    echo "==> postgres: using the server PERSISTENCE_POSTGRES_URL names (not started here)" >&2
    exec "$@"
fi

# A free port: nothing answers on it.
port=${PERSISTENCE_POSTGRES_PORT:-}
if [ -z "$port" ]; then
    for candidate in $(seq 55432 55531); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
    done
    [ -n "$port" ] || { echo "error: no free port in 55432-55531 for a test server" >&2; exit 1; }
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/persistence-postgres.XXXXXX")
trap 'PERSISTENCE_POSTGRES_PORT=$port "$here/postgres-server.sh" stop "$dir"' EXIT
trap 'exit 130' INT TERM
echo "==> postgres: starting a throw-away server in $dir on port $port" >&2
PERSISTENCE_POSTGRES_URL=$(PERSISTENCE_POSTGRES_PORT=$port "$here/postgres-server.sh" start "$dir")
export PERSISTENCE_POSTGRES_URL
"$@"
