# shellcheck shell=bash
# Sourced by bench/*.sh: messages, and the tools every benchmark needs.
# The sourcing script sets NAME (for messages) first.

say() { echo "$NAME: $*" >&2; }
die() {
    say "$*"
    exit 1
}

# /usr/bin/time (GNU time, for peak RSS) from Debian's 'time' package when missing.
need_gnu_time() {
    [[ -x /usr/bin/time ]] && return 0
    say "/usr/bin/time is missing; installing Debian's 'time' package (apt-get install -y time)"
    if [[ $(id -u) -eq 0 ]]; then
        apt-get install -y time >&2 || { apt-get update >&2 && apt-get install -y time >&2; }
    else
        sudo apt-get install -y time >&2
    fi
    [[ -x /usr/bin/time ]] || die "could not install /usr/bin/time"
}
