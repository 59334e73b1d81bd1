// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Jobs, ranks and pods (daemon/jobinfo.h): the environments torchrun, Slurm's
 * srun, Open MPI's mpirun and a PMIx launcher leave, the precedence between
 * them, the cgroup paths of both kubelet cgroup drivers, the kubelet's
 * etc-hosts and a downward API labels file, and a fake kubelet folder laid
 * out as the kubelet lays it out.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "daemon/jobinfo.h"

static const struct jobinfo_conf conf = { .job_env = "", .rank_env = "",
					  .kubelet_root = "/nonexistent", .pod_labels = "" };

/* "A=1\0B=2\0" from "A=1 B=2": environments are written here with spaces between. */
static size_t env_of(const char *s, char *buf)
{
	size_t n = strlen(s);

	memcpy(buf, s, n + 1);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == ' ')
			buf[i] = '\0';
	return n + 1;
}

static void parse(const char *s, const struct jobinfo_conf *c, struct jobinfo *j, char *host)
{
	char buf[4096];
	size_t n = env_of(s, buf);

	memset(j, 0, sizeof(*j));
	jobinfo__parse_env(buf, n, c, j, host, 64);
}

/* torch.distributed.run (torchrun) sets these for each worker. */
static const char TORCHRUN[] =
	"PATH=/usr/bin LOCAL_RANK=1 RANK=5 GROUP_RANK=1 ROLE_RANK=5 ROLE_NAME=default "
	"LOCAL_WORLD_SIZE=4 WORLD_SIZE=8 GROUP_WORLD_SIZE=2 ROLE_WORLD_SIZE=8 "
	"MASTER_ADDR=node-0 MASTER_PORT=29500 TORCHELASTIC_RESTART_COUNT=0 "
	"TORCHELASTIC_MAX_RESTARTS=0 TORCHELASTIC_RUN_ID=llama-7b-42 "
	"TORCHELASTIC_USE_AGENT_STORE=True OMP_NUM_THREADS=1 HOSTNAME=trainer-0";

/* srun: a job step's task. */
static const char SRUN[] =
	"SLURM_JOB_ID=123456 SLURM_JOBID=123456 SLURM_STEP_ID=2 SLURM_STEPID=2 SLURM_PROCID=3 "
	"SLURM_LOCALID=1 SLURM_NODEID=1 SLURM_NTASKS=8 SLURM_NPROCS=8 SLURM_NNODES=2 "
	"SLURM_TASKS_PER_NODE=4(x2) SLURM_JOB_NAME=train";

/* mpirun (Open MPI 4), which also speaks PMIx. */
static const char MPIRUN[] =
	"OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_LOCAL_RANK=0 "
	"OMPI_COMM_WORLD_LOCAL_SIZE=2 OMPI_COMM_WORLD_NODE_RANK=0 OMPI_MCA_ess_base_jobid=3512139777 "
	"OMPI_MCA_ess_base_vpid=2 PMIX_NAMESPACE=3512139777 PMIX_RANK=2 PMIX_SERVER_URI3=x";

static void test_launchers(void **state)
{
	struct jobinfo j;
	char host[64];

	(void)state;
	parse(TORCHRUN, &conf, &j, host);
	assert_string_equal(j.job, "llama-7b-42");
	assert_string_equal(j.source, "torchelastic");
	assert_int_equal(j.rank, 5);
	assert_int_equal(j.local_rank, 1);
	assert_int_equal(j.world_size, 8);
	assert_string_equal(host, "trainer-0");

	parse(SRUN, &conf, &j, host);
	assert_string_equal(j.job, "123456.2");
	assert_string_equal(j.source, "slurm");
	assert_int_equal(j.rank, 3);
	assert_int_equal(j.local_rank, 1);
	assert_int_equal(j.world_size, 8);
	assert_string_equal(host, "");

	parse(MPIRUN, &conf, &j, host);
	assert_string_equal(j.job, "3512139777");
	assert_string_equal(j.source, "ompi");
	assert_int_equal(j.rank, 2);
	assert_int_equal(j.world_size, 4);
	assert_int_equal(j.local_rank, 0);

	parse("PMIX_NAMESPACE=slurm.pmix.77.0 PMIX_RANK=6", &conf, &j, host);
	assert_string_equal(j.job, "slurm.pmix.77.0");
	assert_int_equal(j.rank, 6);
	assert_int_equal(j.world_size, -1);

	/* MPICH's Hydra: PMI's rank and size; no job but the rendezvous torch was given. */
	parse("PMI_RANK=1 PMI_SIZE=2 MASTER_ADDR=10.0.0.1 MASTER_PORT=1234", &conf, &j, host);
	assert_string_equal(j.job, "10.0.0.1:1234");
	assert_string_equal(j.source, "master");
	assert_int_equal(j.rank, 1);
	assert_int_equal(j.world_size, 2);

	parse("PATH=/bin HOME=/root", &conf, &j, host);
	assert_string_equal(j.job, "");
	assert_null(j.source);
	assert_int_equal(j.rank, -1);
}

static void test_precedence(void **state)
{
	struct jobinfo_conf c = conf;
	struct jobinfo j;
	char env[2048];

	(void)state;
	/* torchrun inside a Slurm step: the run id and torchrun's global rank. */
	snprintf(env, sizeof(env), "%s %s", SRUN, TORCHRUN);
	parse(env, &c, &j, NULL);
	assert_string_equal(j.job, "llama-7b-42");
	assert_int_equal(j.rank, 5);
	assert_int_equal(j.world_size, 8);
	/* torchrun's default run id names nothing: Slurm's job does. */
	parse("TORCHELASTIC_RUN_ID=none RANK=0 WORLD_SIZE=2 SLURM_JOB_ID=9 MASTER_ADDR=a "
	      "MASTER_PORT=1", &c, &j, NULL);
	assert_string_equal(j.job, "9");
	assert_string_equal(j.source, "slurm");
	assert_int_equal(j.rank, 0);
	/* mpirun in a Slurm allocation: mpirun's job, MPI's rank. */
	snprintf(env, sizeof(env), "SLURM_JOB_ID=9 SLURM_PROCID=0 %s", MPIRUN);
	parse(env, &c, &j, NULL);
	assert_string_equal(j.job, "3512139777");
	assert_int_equal(j.rank, 2);
	/* The config's names win over all. */
	c.job_env = "MY_JOB";
	c.rank_env = "MY_RANK";
	snprintf(env, sizeof(env), "%s MY_JOB=exp-\"quoted\" MY_RANK=11", TORCHRUN);
	parse(env, &c, &j, NULL);
	assert_string_equal(j.job, "exp-\"quoted\"");
	assert_string_equal(j.source, "config");
	assert_int_equal(j.rank, 11);
	/* ... where they are set. */
	parse(TORCHRUN, &c, &j, NULL);
	assert_string_equal(j.source, "torchelastic");
	assert_int_equal(j.rank, 5);
	/* Not numbers: unknown; the next source's number stands. */
	parse("RANK=-1 OMPI_COMM_WORLD_RANK=3 WORLD_SIZE=4x", &conf, &j, NULL);
	assert_int_equal(j.rank, 3);
	assert_int_equal(j.world_size, -1);
	/* A value longer than the bound is cut, never overrun. */
	memset(env, 'a', 600);
	memcpy(env, "SLURM_JOB_ID=", 13);
	env[600] = '\0';
	parse(env, &conf, &j, NULL);
	assert_int_equal(strlen(j.job), JOBINFO_VALUE_MAX - 1);
}

/* An environment that does not end in NUL (a read cut at its bound). */
static void test_env_unterminated(void **state)
{
	char buf[] = { 'R', 'A', 'N', 'K', '=', '7', '\0', 'W', 'O', 'R', 'L', 'D', '_', 'S', 'I',
		       'Z', 'E', '=', '1', '6' };
	struct jobinfo j;

	(void)state;
	jobinfo__parse_env(buf, sizeof(buf), &conf, &j, NULL, 0);
	assert_int_equal(j.rank, 7);
	assert_int_equal(j.world_size, 16);
}

static void test_pod_uid(void **state)
{
	char uid[40];

	(void)state;
	/* systemd cgroup driver (kubelet --cgroup-driver=systemd), containerd. */
	assert_int_equal(jobinfo__pod_uid("/kubepods.slice/kubepods-burstable.slice/"
		"kubepods-burstable-pod6b3c5b4e_2f1a_4c3d_9e8f_0a1b2c3d4e5f.slice/cri-containerd-"
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope", uid,
		sizeof(uid)), 0);
	assert_string_equal(uid, "6b3c5b4e-2f1a-4c3d-9e8f-0a1b2c3d4e5f");
	/* Guaranteed QoS has no QoS slice. */
	assert_int_equal(jobinfo__pod_uid("/kubepods.slice/kubepods-pod0a1b2c3d_0000_1111_2222_"
		"333344445555.slice/crio-abc.scope", uid, sizeof(uid)), 0);
	assert_string_equal(uid, "0a1b2c3d-0000-1111-2222-333344445555");
	/* cgroupfs driver. */
	assert_int_equal(jobinfo__pod_uid("/kubepods/besteffort/pod7e0c2f9a-1111-2222-3333-"
		"444455556666/4f5e6d7c8b9a", uid, sizeof(uid)), 0);
	assert_string_equal(uid, "7e0c2f9a-1111-2222-3333-444455556666");
	assert_int_equal(jobinfo__pod_uid("/kubepods/pod7e0c2f9a-1111-2222-3333-444455556666/x",
		uid, sizeof(uid)), 0);
	/* Nested under another cgroup (a test's, a nested runtime's). */
	assert_int_equal(jobinfo__pod_uid("/t-1/kubepods.slice/kubepods-besteffort.slice/"
		"kubepods-besteffort-pod11111111_2222_3333_4444_555555555555.slice/cri-containerd-"
		"ab.scope", uid, sizeof(uid)), 0);
	assert_string_equal(uid, "11111111-2222-3333-4444-555555555555");
	/* Not pods. */
	assert_int_equal(jobinfo__pod_uid("/system.slice/docker-0123.scope", uid, sizeof(uid)),
			 -ENOENT);
	assert_int_equal(jobinfo__pod_uid("/pod7e0c2f9a-1111-2222-3333-444455556666/x", uid,
					  sizeof(uid)), -ENOENT);
	assert_int_equal(jobinfo__pod_uid("/kubepods/burstable/pod7e0c2f9a-1111-2222-3333-4444", uid,
					  sizeof(uid)), -ENOENT);
	assert_int_equal(jobinfo__pod_uid("/kubepods.slice/kubepods-burstable-podzz.slice", uid,
					  sizeof(uid)), -ENOENT);
	assert_int_equal(jobinfo__pod_uid("", uid, sizeof(uid)), -ENOENT);
}

/* What the kubelet writes (pkg/kubelet/kubelet_pods.go, managedHostsFileContent). */
static const char HOSTS[] = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"
	"::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n"
	"fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	"10.244.1.7\ttrainer-0.trainers.ml.svc.cluster.local\ttrainer-0\n\n"
	"# Entries added by HostAliases.\n10.0.0.1\tfoo.local\n";

static void test_hosts(void **state)
{
	char name[64];

	(void)state;
	assert_int_equal(jobinfo__hosts_name(HOSTS, name, sizeof(name)), 0);
	assert_string_equal(name, "trainer-0");
	assert_int_equal(jobinfo__hosts_name("# Kubernetes-managed hosts file.\n127.0.0.1\t"
					     "localhost\n10.1.2.3\tnginx\n", name, sizeof(name)), 0);
	assert_string_equal(name, "nginx");
	assert_int_equal(jobinfo__hosts_name("127.0.0.1\tlocalhost\n# Entries added by "
					     "HostAliases.\n1.2.3.4\tx\n", name, sizeof(name)), -ENOENT);
}

static void test_labels(void **state)
{
	char out[256] = "";

	(void)state;
	jobinfo__labels("app=\"trainer\"\npod-template-hash=\"7c9d\"\nteam=\"ml \\\"infra\\\"\"\n"
			"app.kubernetes.io/name=\"llama\"", "team,app,app.kubernetes.io/name", out,
			sizeof(out));
	assert_string_equal(out, "app=trainer\nteam=ml \"infra\"\napp.kubernetes.io/name=llama\n");
	out[0] = '\0';
	jobinfo__labels("app=trainer\nx=\"", "app,x", out, sizeof(out));
	assert_string_equal(out, "");
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * A kubelet folder as the kubelet makes it: pods/<uid>/etc-hosts, the
 * service-account token's projected volume (its files links into ..data),
 * a downward API volume with the labels.
 */
static void test_kubelet_folder(void **state)
{
	char root[] = "/tmp/cuprobe-kubelet-XXXXXX", p[512], cg[512];
	const char *uid = "6b3c5b4e-2f1a-4c3d-9e8f-0a1b2c3d4e5f";
	struct jobinfo_conf c = conf;
	struct jobinfo j;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "mkdir -p %s/pods/%s/volumes/kubernetes.io~projected/"
		 "kube-api-access-x7k2p/..2024_01_01_00_00_00.1 %s/pods/%s/volumes/"
		 "kubernetes.io~downward-api/podinfo/..2024_01_01_00_00_00.2", root, uid, root, uid);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/pods/%s/etc-hosts", root, uid);
	put(p, HOSTS);
	snprintf(p, sizeof(p), "%s/pods/%s/volumes/kubernetes.io~projected/kube-api-access-x7k2p/"
		 "..2024_01_01_00_00_00.1/namespace", root, uid);
	put(p, "ml-team");
	snprintf(p, sizeof(p), "cd %s/pods/%s/volumes/kubernetes.io~projected/kube-api-access-x7k2p"
		 " && ln -s ..2024_01_01_00_00_00.1 ..data && ln -s ..data/namespace namespace",
		 root, uid);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/pods/%s/volumes/kubernetes.io~downward-api/podinfo/"
		 "..2024_01_01_00_00_00.2/labels", root, uid);
	put(p, "app=\"trainer\"\nteam=\"ml\"\n");
	snprintf(p, sizeof(p), "cd %s/pods/%s/volumes/kubernetes.io~downward-api/podinfo"
		 " && ln -s ..2024_01_01_00_00_00.2 ..data && ln -s ..data/labels labels", root, uid);
	assert_int_equal(system(p), 0);

	c.kubelet_root = root;
	c.pod_labels = "team";
	snprintf(cg, sizeof(cg), "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-"
		 "pod6b3c5b4e_2f1a_4c3d_9e8f_0a1b2c3d4e5f.slice/cri-containerd-ab.scope");
	jobinfo__read(getpid(), cg, &c, &j);
	assert_string_equal(j.pod_uid, uid);
	assert_string_equal(j.pod, "trainer-0");
	assert_string_equal(j.ns, "ml-team");
	assert_string_equal(j.labels, "team=ml\n");
	/* Outside a pod: none of it. */
	jobinfo__read(getpid(), "/user.slice", &c, &j);
	assert_string_equal(j.pod_uid, "");
	assert_string_equal(j.pod, "");
	snprintf(p, sizeof(p), "rm -rf %s", root);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launchers),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_env_unterminated),
		cmocka_unit_test(test_pod_uid),
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_kubelet_folder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
