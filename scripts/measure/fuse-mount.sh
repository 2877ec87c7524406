# Sourced by the FUSE measurement scripts: a 1 GiB file on a fresh tmpfs, and libfuse's
# passthrough_hp (--nopassthrough: every read goes to the server) mounted over it.
#   fuse_setup PASSTHROUGH_HP   make the tmpfs and the file; unmounts and cleans up on exit
#   fuse_script_start "$@"      for scripts taking PASSTHROUGH_HP [RUNS]: the usage check, $runs
#                               (default 3) and fuse_setup
#   start_fs OPTIONS            mount ("" for /dev/fuse, "-o io_uring" for fuse-over-io-uring);
#                               with SERVER_SETSID=1 the server gets an autogroup of its own
#   stop_fs                     unmount and wait for the server
# The mount point is $mnt, the file $mnt/f.
fuse_script_start() {
    [ $# -ge 1 ] || { echo "usage: $0 PASSTHROUGH_HP [RUNS]" >&2; exit 2; }
    runs=${2:-3}
    fuse_setup "$1"
}
fuse_setup() {
    hp=$1
    work=$(mktemp -d /tmp/fuse-measure.XXXXXX)
    src=$work/src
    mnt=$work/mnt
    mkdir -p "$src" "$mnt"
    mount -t tmpfs -o size=2G tmpfs "$src"
    trap fuse_cleanup EXIT
    dd if=/dev/urandom of="$src/f" bs=1M count=1024 status=none
    [ -w /sys/module/fuse/parameters/enable_uring ] && echo Y > /sys/module/fuse/parameters/enable_uring
    return 0
}
fuse_cleanup() {
    fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
    sleep 0.5
    umount -l "$src" 2>/dev/null || true
    rm -rf "$work"
}
start_fs() {  # $1: extra options ("" or "-o io_uring")
    # SERVER_SETSID=1: the server in a session, so an autogroup, of its own (else it shares the
    # script's, with any bpftrace the script starts)
    local pre=()
    [ -z "${SERVER_SETSID:-}" ] || pre=(setsid)
    # shellcheck disable=SC2086
    "${pre[@]}" "$hp" --foreground --nopassthrough $1 "$src" "$mnt" >/dev/null 2>&1 &
    for _ in $(seq 50); do mountpoint -q "$mnt" && return 0; sleep 0.1; done
    echo "passthrough_hp did not mount" >&2
    exit 1
}
stop_fs() {
    fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt"
    wait || true
}
