# Sourced by the scripts that install a Debian package they need when it is missing (install-dependencies,
# postgres-bin.sh, observability-check, store-bench,
# container-check): the one way they do it.
#   apt_install [APT-GET OPTION...] PACKAGE...   updates the package lists first (a fresh machine may have
#                                                none), then installs; as root, or through sudo otherwise
apt_install() {
    local as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    echo "installing: $(printf '%s ' "$@" | sed -E 's/(^| )-[^ ]*//g; s/^ +//; s/ +$//')" >&2
    # env inside sudo: sudo resets the environment, and apt must not stop to ask.
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
