# Sourced by scripts/postgres/postgres-failover and scripts/bench/service-bench: a throw-away PostgreSQL primary with a
# streaming, synchronous standby on loopback (never as root: as the postgres user), fsync on and
# synchronous_commit on, as a production pair runs. Installs Debian's PostgreSQL when it is missing.
#   cluster_start PRIMARY_PORT STANDBY_PORT [REPLICATION_PORT]
#                                             start both; sets $cluster_url (the multi-host URL, libpq's
#                                             target_session_attrs=read-write) and $primary_url; the
#                                             standby streams from REPLICATION_PORT (default the primary's:
#                                             a fault proxy's port in scripts/postgres/grey-failures)
#   cluster_primary_data=DIR                  (before cluster_start) the primary's data directory: an empty
#                                             one the postgres user owns (a small tmpfs: the disk-full case)
#   cluster_kill_primary                      SIGKILL the primary's postmaster (no shutdown, no checkpoint)
#   cluster_promote                           promote the standby (pg_ctl promote, waits until it writes)
#   cluster_stop                              stop both and delete their files (also on exit)
# shellcheck source=scripts/postgres/postgres-bin.sh
. "$(dirname "${BASH_SOURCE[0]}")/postgres-bin.sh"
cluster_dir=""

cluster_stop() {
    [ -n "$cluster_dir" ] || return 0
    for node in primary standby; do
        [ ! -d "$cluster_dir/$node" ] || "${as_postgres[@]}" "$postgres_bin/pg_ctl" -D "$cluster_dir/$node" -m immediate stop >/dev/null 2>&1 || true
    done
    [ -z "${cluster_primary_data:-}" ] || "${as_postgres[@]}" find "$cluster_primary_data" -mindepth 1 -delete 2>/dev/null || true
    rm -rf "$cluster_dir"
    cluster_dir=""
}

cluster_start() {
    cluster_primary_port=$1
    cluster_standby_port=$2
    local replication_port=${3:-$1}
    cluster_dir=$(postgres_dir /tmp/saml-cluster.XXXXXX)
    [ -z "${cluster_primary_data:-}" ] || ln -s "$cluster_primary_data" "$cluster_dir/primary"
    "${as_postgres[@]}" "$postgres_bin/initdb" -D "$cluster_dir/primary" -A trust -U saml >/dev/null
    # Replication connections from loopback (initdb's pg_hba.conf has them for 127.0.0.1 already; stated
    # here so that the script does not depend on the package's template).
    echo "host replication all 127.0.0.1/32 trust" | "${as_postgres[@]}" tee -a "$cluster_dir/primary/pg_hba.conf" >/dev/null
    local common="-h 127.0.0.1 -k $cluster_dir -c max_connections=200 -c fsync=on -c synchronous_commit=on -c wal_level=replica"
    common="$common -c max_wal_senders=5 -c hot_standby=on -c shared_buffers=128MB"
    # synchronous_standby_names in postgresql.auto.conf, not on the command line (which would override
    # ALTER SYSTEM): after a promotion the new primary has no standby and must not wait for one.
    cluster_primary_options="$common -p $cluster_primary_port"
    cluster_standby_options="$common -p $cluster_standby_port"
    echo "synchronous_standby_names = 'standby'" | "${as_postgres[@]}" tee -a "$cluster_dir/primary/postgresql.auto.conf" >/dev/null
    "${as_postgres[@]}" "$postgres_bin/pg_ctl" -D "$cluster_dir/primary" -o "$cluster_primary_options" -l "$cluster_dir/primary.log" -w start >/dev/null
    # The standby: a base backup with standby.signal and primary_conninfo (-R), named "standby" so that the
    # primary's synchronous_standby_names waits for its flush before a commit returns.
    "${as_postgres[@]}" "$postgres_bin/pg_basebackup" -h 127.0.0.1 -p "$cluster_primary_port" -U saml -D "$cluster_dir/standby" -R -X stream >/dev/null
    # The copy carries the primary's synchronous_standby_names: the standby, once promoted, must not wait.
    "${as_postgres[@]}" sed -i "/^synchronous_standby_names/d" "$cluster_dir/standby/postgresql.auto.conf"
    echo "primary_conninfo = 'host=127.0.0.1 port=$replication_port user=saml application_name=standby'" |
        "${as_postgres[@]}" tee -a "$cluster_dir/standby/postgresql.auto.conf" >/dev/null
    "${as_postgres[@]}" "$postgres_bin/pg_ctl" -D "$cluster_dir/standby" -o "$cluster_standby_options" -l "$cluster_dir/standby.log" -w start >/dev/null
    # Until the standby streams synchronously, a commit on the primary would wait: wait for it here.
    for _ in $(seq 100); do
        state=$(cluster_sql "$cluster_primary_port" "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'" 2>/dev/null || true)
        [ "$state" = sync ] && break
        sleep 0.1
    done
    [ "$state" = sync ] || { echo "the standby did not become synchronous" >&2; return 1; }
    primary_url="postgres://saml@127.0.0.1:$cluster_primary_port/postgres"
    cluster_url="postgres://saml@127.0.0.1:$cluster_primary_port,127.0.0.1:$cluster_standby_port/postgres?target_session_attrs=read-write"
}

cluster_kill_primary() {
    local pid
    pid=$(head -1 "$cluster_dir/primary/postmaster.pid")
    kill -KILL "$pid"
    # The postmaster's children end once they notice it gone; wait until the port is free.
    for _ in $(seq 100); do
        "$postgres_bin/pg_isready" -q -h 127.0.0.1 -p "$cluster_primary_port" || break
        sleep 0.1
    done
}

cluster_promote() {
    "${as_postgres[@]}" "$postgres_bin/pg_ctl" -D "$cluster_dir/standby" -w promote >/dev/null
}

# Runs SQL on the node at PORT; prints the first column.
cluster_sql() { "$postgres_bin/psql" -h 127.0.0.1 -p "$1" -U saml -d postgres -Atc "$2"; }
