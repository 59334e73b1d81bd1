# Two "hosts" for the fleet tests (test_fleet.sh, tests/real/torch_fleet.sh): network
# namespaces joined to this one by veth pairs in 198.18.0.0/15, the benchmarking
# range, each with a default route back through its veth, and a cgroup each.
#   hosts_init TAG   names them: NS, IPS, GWS (this side of each veth), CG2, CGS
#   hosts_up         makes them (1 where one part failed)
#   hosts_down       kills what their cgroups hold, then removes them
hosts_init() {
	NS=("$11-$$" "$12-$$") IPS=(198.18.0.2 198.18.1.2) GWS=(198.18.0.1 198.18.1.1)
	CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	CGS=("$CG2/cuprobe-$1-0-$$" "$CG2/cuprobe-$1-1-$$")
}

hosts_up() {
	local i
	for i in 0 1; do
		ip netns add "${NS[$i]}" &&
		ip link add "vh$i-$$" type veth peer name eth0 netns "${NS[$i]}" &&
		ip addr add "${GWS[$i]}/24" dev "vh$i-$$" && ip link set "vh$i-$$" up &&
		ip -n "${NS[$i]}" addr add "${IPS[$i]}/24" dev eth0 &&
		ip -n "${NS[$i]}" link set eth0 up && ip -n "${NS[$i]}" link set lo up &&
		ip -n "${NS[$i]}" route add default via "${GWS[$i]}" || return 1
		mkdir "${CGS[$i]}" || return 1
	done
}

hosts_down() {
	local cg p i
	for cg in "${CGS[@]}"; do
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	done
	wait 2>/dev/null
	sleep 0.2
	for cg in "${CGS[@]}"; do rmdir "$cg" 2>/dev/null; done
	for i in 0 1; do
		ip link del "vh$i-$$" 2>/dev/null
		ip netns del "${NS[$i]}" 2>/dev/null
	done
}
