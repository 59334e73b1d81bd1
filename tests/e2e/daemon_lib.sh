# Shared by the daemon's end-to-end tests (after lib.sh): a free port and a
# cgroup of the test's own, so that a daemon started with
# --cgroup /$CGNAME samples only the test's workloads.

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# cgroup_setup NAME: makes $CG (named $CGNAME) and in_cg, with which
# "${in_cg[@]}" CMD... & runs CMD in it ($! is CMD's pid: sh moves itself in,
# then execs CMD). Fails when there is no writable cgroup2 mount.
cgroup_setup() {
	CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	CGNAME=$1-$$
	CG=$CG2/$CGNAME
	[ -n "$CG2" ] && mkdir "$CG" || return 1
	in_cg=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG")
}

# cgroup_kill: kills what the test's cgroup holds, then removes it.
cgroup_kill() {
	[ -n "${CG:-}" ] && [ -d "$CG" ] || return 0
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
	rmdir "$CG" 2>/dev/null
}
