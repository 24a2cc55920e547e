# Sourced by scripts/postgres/postgres-tests and scripts/postgres/postgres-cluster.sh: where Debian's PostgreSQL programs
# are (installed when missing; the newest major version when several are), and how to run them. Sets
#   postgres_bin    the directory of initdb, pg_ctl, pg_basebackup, psql
#   as_postgres     the command prefix that runs them as the postgres user when this shell is root
#                   (initdb and the server refuse to run as root), empty otherwise
#   postgres_dir TEMPLATE   makes a fresh directory (mktemp TEMPLATE) those programs may write, prints it
# shellcheck source=scripts/ci/apt-install.sh
. "$(dirname "${BASH_SOURCE[0]}")/../ci/apt-install.sh"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || apt_install postgresql
postgres_bin=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
as_postgres=()
[ "$(id -u)" -ne 0 ] || as_postgres=(runuser -u postgres --)
postgres_dir() {
    local dir
    dir=$(mktemp -d "$1")
    chmod 755 "$dir"
    [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$dir"
    echo "$dir"
}
