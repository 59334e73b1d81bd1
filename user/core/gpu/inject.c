// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include "core/gpu/inject.h"
#include "core/proc/procmaps.h"
#include "core/proc/remote.h"
#include "util/clock.h"
#include "util/log.h"

static int say(char *msg, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int say(char *msg, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return err;
}

/* Whether a mapped object's name is that of the agent. */
static bool agent_name(const char *path, const struct stat *agent_st, const struct map_entry *me)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strcmp(b, "libcuprobe-agent.so") ||
	       (agent_st && me->inode == agent_st->st_ino && me->dev == agent_st->st_dev);
}

int inject_has_agent(pid_t pid, const char *agent)
{
	struct procmaps m;
	struct stat st;
	bool have_st = agent && !stat(agent, &st);
	int err = procmaps__read(pid, &m), found = 0;

	if (err)
		return err;
	for (size_t i = 0; i < m.n && !found; i++)
		if (m.v[i].path && agent_name(m.v[i].path, have_st ? &st : NULL, &m.v[i]))
			found = 1;
	procmaps__free(&m);
	return found;
}

/* Whether pid maps a CUDA library: the runtime or the driver. */
static int maps_cuda(pid_t pid)
{
	struct procmaps m;
	int err = procmaps__read(pid, &m), found = 0;

	if (err)
		return err;
	for (size_t i = 0; i < m.n && !found; i++) {
		const char *b = m.v[i].path ? strrchr(m.v[i].path, '/') : NULL;

		b = b ? b + 1 : "";
		found = !strncmp(b, "libcudart", 9) || !strncmp(b, "libcuda.so", 10);
	}
	procmaps__free(&m);
	return found;
}

#if defined(__x86_64__)

#include <cpuid.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>

/*
 * The trampoline: page 0 of the two the target maps (r-x), its data in page
 * 1 (rw-). Entered with every register as the interrupted thread had it but
 * rip, rsp (below the red zone) and rax (the value to resume with), it saves
 * all, XSAVEs the extended state on the thread's stack, calls dlopen (and
 * dlerror on failure), restores all and jumps to where the thread resumes.
 */
__asm__(".pushsection .rodata.cuprobe_tramp,\"a\"\n"
	".balign 4096\n"
	".globl cuprobe_tramp_start\n.hidden cuprobe_tramp_start\n"
	".globl cuprobe_tramp_end\n.hidden cuprobe_tramp_end\n"
	"cuprobe_tramp_start:\n"
	"	pushfq\n"
	"	push %rax\n push %rbx\n push %rcx\n push %rdx\n push %rsi\n push %rdi\n"
	"	push %rbp\n push %r8\n push %r9\n push %r10\n push %r11\n push %r12\n"
	"	push %r13\n push %r14\n push %r15\n"
	"	mov %rsp, %rbp\n"
	"	cld\n"
	"	mov $0xd, %eax\n xor %ecx, %ecx\n cpuid\n" /* ebx: XSAVE size for XCR0 */
	"	sub %rbx, %rsp\n"
	"	and $-64, %rsp\n"
	"	lea 512(%rsp), %rdi\n xor %eax, %eax\n mov $8, %ecx\n rep stosq\n" /* header */
	"	mov $-1, %eax\n mov $-1, %edx\n xsave (%rsp)\n"
	"	mov %rsp, %r12\n"
	"	lea cuprobe_tramp_path(%rip), %rdi\n"
	"	mov cuprobe_tramp_mode(%rip), %rsi\n"
	"	call *cuprobe_tramp_dlopen(%rip)\n"
	"	mov %rax, cuprobe_tramp_result(%rip)\n"
	"	test %rax, %rax\n jnz 1f\n"
	"	call *cuprobe_tramp_dlerror(%rip)\n"
	"	mov %rax, cuprobe_tramp_error(%rip)\n"
	"1:	movq $1, cuprobe_tramp_done(%rip)\n"
	"	mov $-1, %eax\n mov $-1, %edx\n xrstor (%r12)\n"
	"	mov %rbp, %rsp\n"
	"	pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %r11\n pop %r10\n pop %r9\n"
	"	pop %r8\n pop %rbp\n pop %rdi\n pop %rsi\n pop %rdx\n pop %rcx\n pop %rbx\n"
	"	pop %rax\n"
	"	popfq\n"
	"	mov cuprobe_tramp_rsp(%rip), %rsp\n"
	"	jmp *cuprobe_tramp_resume(%rip)\n"
	"cuprobe_tramp_end:\n"
	"	.org cuprobe_tramp_start + 4096\n"
	"cuprobe_tramp_dlopen: .quad 0\n"
	"cuprobe_tramp_dlerror: .quad 0\n"
	"cuprobe_tramp_mode: .quad 0\n"
	"cuprobe_tramp_resume: .quad 0\n"
	"cuprobe_tramp_rsp: .quad 0\n"
	"cuprobe_tramp_result: .quad 0\n"
	"cuprobe_tramp_error: .quad 0\n"
	"cuprobe_tramp_done: .quad 0\n"
	"cuprobe_tramp_path: .zero 4032\n"
	".popsection\n");

extern const unsigned char cuprobe_tramp_start[], cuprobe_tramp_end[];

/* Page 1 of the trampoline, as the labels above lay it out. */
struct tramp_data {
	uint64_t dlopen, dlerror, mode, resume, rsp, result, error, done;
	char path[4032];
};
_Static_assert(sizeof(struct tramp_data) == 4096, "one page");

#define PAGE 4096
#define RED_ZONE 128
#define RTLD_NOW_ 2
#define ERESTARTSYS_ 512
#define ERESTARTNOINTR_ 513
#define ERESTARTNOHAND_ 514
#define ERESTART_RESTARTBLOCK_ 516
#define NR_restart_syscall 219

/*
 * Syscalls a thread waits in that libc makes with none of its locks held and
 * that the kernel restarts after a ptrace stop as if nothing happened.
 */
static bool safe_syscall(long nr)
{
	switch (nr) {
	case 7:   /* poll */
	case 23:  /* select */
	case 35:  /* nanosleep */
	case 61:  /* wait4 */
	case 230: /* clock_nanosleep */
	case 247: /* waitid */
		return true;
	default:
		return false;
	}
}

/* A field of /proc/PID[/task/TID]/status as a number; -1 when absent. */
static long status_field(const char *path, const char *name)
{
	char line[256];
	size_t n = strlen(name);
	long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static char status_state(pid_t pid)
{
	char path[64], line[256], c = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return c;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "State:", 6)) {
			sscanf(line + 6, " %c", &c);
			break;
		}
	fclose(f);
	return c;
}

/*
 * The largest value of a status field over pid's threads (TracerPid: any
 * thread traced; Seccomp: any thread filtered), 0 when none.
 */
static long any_thread(pid_t pid, const char *field)
{
	char path[128];
	struct dirent *d;
	long most = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		int tid = atoi(d->d_name);
		long v;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, tid);
		v = status_field(path, field);
		if (v > most)
			most = v;
	}
	closedir(dir);
	return most;
}

/* Whether pid runs a 64-bit program (a 32-bit one has other registers and syscalls). */
static bool is_64bit(pid_t pid)
{
	unsigned char ident[EI_NIDENT];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, ident, sizeof(ident));
	close(fd);
	return n == (ssize_t)sizeof(ident) && !memcmp(ident, ELFMAG, SELFMAG) &&
	       ident[EI_CLASS] == ELFCLASS64;
}

/* Where the target's libc keeps dlopen and dlerror, and which object that is. */
struct libc_syms {
	uint64_t dlopen, dlerror;
	char object[PATH_MAX];
	bool any_libc;
};

static bool libc_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "libdl.so", 8) ||
	       !strncmp(b, "libdl-", 6) || !strncmp(b, "ld-musl-", 8);
}

static int find_dlopen(pid_t pid, struct libc_syms *ls)
{
	struct procmaps m;
	int err = procmaps__read(pid, &m);

	if (err)
		return err;
	memset(ls, 0, sizeof(*ls));
	err = -ENOENT;
	for (size_t i = 0; i < m.n && err; i++) {
		const struct map_entry *me = &m.v[i];
		char path[32];
		uint64_t v_open, v_err;
		int type, fd;

		if (!me->exec || !me->path || me->path[0] != '/' || !libc_name(me->path))
			continue;
		ls->any_libc = true;
		/* The mapped libc itself, checked (procmaps.h), never a name the target chose. */
		fd = procmaps__open(pid, me);
		if (fd < 0)
			continue;
		target_file_fd_path(fd, path, sizeof(path));
		if (!remote_elf_symbol(path, "dlopen", &v_open, &type) && type == STT_FUNC &&
		    !remote_elf_symbol(path, "dlerror", &v_err, &type) &&
		    !remote_symbol_addr(pid, path, v_open, &ls->dlopen) &&
		    !remote_symbol_addr(pid, path, v_err, &ls->dlerror)) {
			snprintf(ls->object, sizeof(ls->object), "%s", me->path);
			err = 0;
		}
		close(fd);
	}
	procmaps__free(&m);
	return err;
}

/* Stack a thread needs below its red zone: XSAVE area (AMX: 11 KiB), dlopen, constructors. */
#define STACK_ROOM (256u << 10)

/*
 * Whether a thread stopped at pc with stack pointer sp can run the
 * trampoline: pc outside the dynamic linker's code (a thread there may hold
 * its state), and sp with STACK_ROOM below it in its mapping (the main
 * thread's [stack] grows on demand).
 */
static bool can_run_at(pid_t pid, uint64_t pc, uint64_t sp)
{
	struct procmaps m;
	const struct map_entry *me;
	bool ok = true;

	if (procmaps__read(pid, &m))
		return false;
	me = procmaps__find(&m, pc);
	if (!me || (me->path && strstr(me->path, "/ld-")))
		ok = false;
	me = procmaps__find(&m, sp);
	if (!me || me->exec || (!(me->path && !strcmp(me->path, "[stack]")) &&
				sp - me->start < STACK_ROOM))
		ok = false;
	procmaps__free(&m);
	return ok;
}

/*
 * A thread of pid that waits in a safe syscall, the main thread first
 * (the largest stack). 0 when none now.
 */
static pid_t safe_thread(pid_t pid)
{
	char path[128], line[512];
	pid_t best = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);
		unsigned long long pc = 0, sp = 0;
		long nr;
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		line[0] = 0;
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		/* "nr a1 ... a6 sp pc" while in a syscall; "running" or "-1 sp pc" otherwise. */
		if (sscanf(line, "%ld", &nr) != 1 || !safe_syscall(nr))
			continue;
		{
			unsigned long long f[9];

			if (sscanf(line, "%*d %llx %llx %llx %llx %llx %llx %llx %llx", &f[0], &f[1],
				   &f[2], &f[3], &f[4], &f[5], &f[6], &f[7]) == 8) {
				sp = f[6];
				pc = f[7];
			}
		}
		if (!pc || !sp || !can_run_at(pid, pc, sp))
			continue;
		if (!best || tid == pid)
			best = tid;
		if (tid == pid)
			break;
	}
	closedir(dir);
	return best;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Waits for tid's next ptrace stop that is not a signal for the target:
 * those are passed on at once (the handler runs as it would have). Returns
 * the wait status, or -errno (-ESRCH: the thread is gone).
 */
static int wait_stop(pid_t tid, int resume_req)
{
	for (;;) {
		int status;
		pid_t r = waitpid(tid, &status, __WALL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80) || (status >> 16) != 0)
			return status;
		if (WSTOPSIG(status) == SIGTRAP)
			return status;
		/* A signal for the target: delivered as it would have been. */
		if (ptrace(resume_req, tid, 0, (void *)(long)WSTOPSIG(status)) < 0)
			return -errno;
	}
}

/* Runs one syscall in tid through the syscall instruction at insn; its result in *ret. */
static int remote_syscall(pid_t tid, const struct user_regs_struct *base, uint64_t insn, long nr,
			  const uint64_t args[6], long *ret)
{
	struct user_regs_struct r = *base;
	int st;

	r.rip = insn;
	r.rax = nr;
	r.orig_rax = (unsigned long long)-1;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
		return -errno;
	for (int stops = 0; stops < 2; stops++) {
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0)
			return -errno;
		st = wait_stop(tid, PTRACE_SYSCALL);
		if (st < 0)
			return st;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80))
			stops--; /* another kind of stop: not ours, go on */
	}
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return -errno;
	*ret = (long)r.rax;
	return 0;
}

static int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pwrite(fd, buf, len, (off_t)addr);
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Test hook: CUPROBE_INJECT_TEST_PAUSE=stopped|armed holds cuprobe there for 30 s. */
static void test_pause(const char *stage)
{
	const char *want = getenv("CUPROBE_INJECT_TEST_PAUSE");

	if (want && !strcmp(want, stage)) {
		fprintf(stderr, "cuprobe: injection paused at %s\n", stage);
		sleep_ms(30000);
	}
}

/*
 * With tid in its interrupt stop at regs: maps the trampoline, writes it and
 * sends tid into it. On failure tid's registers are put back as they were.
 */
static int arm(pid_t pid, pid_t tid, const struct user_regs_struct *regs, struct tramp_data *d,
	       uint64_t *data_addr, char *msg, size_t len)
{
	struct user_regs_struct go = *regs;
	uint64_t insn = regs->rip - 2, args[6];
	unsigned char code[2];
	long ret, rax = (long)regs->rax;
	uint64_t page = 0;
	int err;

	if (remote_read(pid, insn, code, 2) || code[0] != 0x0f || code[1] != 0x05)
		return say(msg, len, -EBUSY, "thread %d is not stopped after a syscall instruction",
			   (int)tid);
	/* How the interrupted syscall resumes: restarted as the kernel would, or returned. */
	if (rax == -ERESTARTSYS_ || rax == -ERESTARTNOINTR_ || rax == -ERESTARTNOHAND_) {
		d->resume = insn;
		go.rax = regs->orig_rax;
	} else if (rax == -ERESTART_RESTARTBLOCK_) {
		d->resume = insn;
		go.rax = NR_restart_syscall;
	} else {
		d->resume = regs->rip;
	}
	d->rsp = regs->rsp;
	args[0] = 0;
	args[1] = 2 * PAGE;
	args[2] = PROT_READ | PROT_WRITE;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	args[4] = (uint64_t)-1;
	args[5] = 0;
	err = remote_syscall(tid, regs, insn, 9 /* mmap */, args, &ret);
	if (!err && ret < 0 && ret > -4096)
		err = ret;
	if (err)
		goto restore;
	page = (uint64_t)ret;
	err = mem_write(pid, page, cuprobe_tramp_start,
			(size_t)(cuprobe_tramp_end - cuprobe_tramp_start));
	if (!err)
		err = mem_write(pid, page + PAGE, d, sizeof(*d));
	if (err)
		goto restore;
	args[0] = page;
	args[1] = PAGE;
	args[2] = PROT_READ | PROT_EXEC;
	err = remote_syscall(tid, regs, insn, 10 /* mprotect */, args, &ret);
	if (!err && ret)
		err = ret;
	if (err)
		goto restore;
	go.rip = page;
	go.rsp = (regs->rsp - RED_ZONE - 64) & ~15ull;
	go.orig_rax = (unsigned long long)-1; /* no restart logic on our rip */
	if (ptrace(PTRACE_SETREGS, tid, 0, &go) < 0) {
		err = -errno;
		goto restore;
	}
	*data_addr = page + PAGE;
	return 0;
restore:
	if (page) { /* mapped, then a later step failed: the pages go again */
		args[0] = page;
		args[1] = 2 * PAGE;
		remote_syscall(tid, regs, insn, 11 /* munmap */, args, &ret);
	}
	ptrace(PTRACE_SETREGS, tid, 0, regs);
	return say(msg, len, err, "cannot map the loader's page in pid %d: %s", (int)pid,
		   strerror(-err));
}

/* Stops tid at its syscall (PTRACE_SEIZE, PTRACE_INTERRUPT), arms it, detaches. */
static int stop_arm_detach(pid_t pid, pid_t tid, struct tramp_data *d, uint64_t *data_addr,
			   struct user_regs_struct *orig, char *msg, size_t len)
{
	struct user_regs_struct regs;
	int st, err;

	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD) < 0) {
		if (errno == ESRCH)
			return -EAGAIN; /* the thread ended meanwhile: look for another */
		return say(msg, len, errno == EPERM ? -EPERM : -errno,
			   "ptrace(PTRACE_SEIZE) of pid %d refused: %s (another tracer, or "
			   "kernel.yama.ptrace_scope=3)", (int)tid, strerror(errno));
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		err = -errno;
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return say(msg, len, err, "ptrace(PTRACE_INTERRUPT): %s", strerror(-err));
	}
	/* A thread in an interruptible wait stops at once: the wait is not bounded. */
	st = wait_stop(tid, PTRACE_CONT);
	if (st == -ESRCH)
		return -EAGAIN; /* it ended meanwhile */
	if (st < 0)
		return say(msg, len, st, "waiting for thread %d: %s", (int)tid, strerror(-st));
	test_pause("stopped");
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0) {
		err = -errno;
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return say(msg, len, err, "ptrace(PTRACE_GETREGS): %s", strerror(-err));
	}
	if ((st >> 16) != PTRACE_EVENT_STOP || WSTOPSIG(st) != SIGTRAP ||
	    !safe_syscall((long)regs.orig_rax)) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return say(msg, len, -EAGAIN, "thread %d left its syscall", (int)tid);
	}
	*orig = regs;
	err = arm(pid, tid, &regs, d, data_addr, msg, len);
	if (!err)
		test_pause("armed");
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return err;
}

/*
 * Takes the trampoline's pages away once its thread is back where it was
 * interrupted: in its restarted syscall, at the same pc and stack pointer
 * (no frame of the trampoline, nor a signal handler on top of one, can be
 * live then). The thread is stopped once more, for one munmap through its
 * syscall instruction, as when it was armed. Looked for during 1 s; when the
 * thread has gone on instead (its syscall was not restarted, or it ended),
 * the two pages stay.
 */
static void unmap_tramp(pid_t pid, pid_t tid, const struct user_regs_struct *orig,
			const struct tramp_data *d, uint64_t page)
{
	uint64_t deadline = clock_mono_ns() + 1000000000ull;
	struct user_regs_struct regs;
	char path[128], line[512];
	uint64_t args[6] = { page, 2 * PAGE };
	long ret = -1;
	int st;

	if (d->resume != orig->rip - 2)
		goto stays; /* not restarted: the thread never comes back to that point */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	for (;; sleep_ms(5)) {
		unsigned long long sp = 0, pc = 0;
		long nr = -1;
		FILE *f;

		if (clock_mono_ns() > deadline)
			goto stays;
		f = fopen(path, "re");
		if (!f)
			goto stays;
		line[0] = 0;
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		if (sscanf(line, "%ld %*x %*x %*x %*x %*x %*x %llx %llx", &nr, &sp, &pc) == 3 &&
		    (safe_syscall(nr) || nr == NR_restart_syscall) && sp == orig->rsp &&
		    pc == orig->rip)
			break;
	}
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD) < 0)
		goto stays;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		goto stays;
	}
	st = wait_stop(tid, PTRACE_CONT);
	if (st < 0)
		goto stays;
	if ((st >> 16) == PTRACE_EVENT_STOP && WSTOPSIG(st) == SIGTRAP &&
	    !ptrace(PTRACE_GETREGS, tid, 0, &regs) && regs.rip == orig->rip &&
	    regs.rsp == orig->rsp && (long)regs.orig_rax >= 0) {
		if (remote_syscall(tid, &regs, regs.rip - 2, 11 /* munmap */, args, &ret))
			ret = -1;
		ptrace(PTRACE_SETREGS, tid, 0, &regs);
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
	if (!ret) {
		p_dbg("pid %d: trampoline at 0x%" PRIx64 " unmapped", (int)pid, page);
		return;
	}
stays:
	p_dbg("pid %d: trampoline at 0x%" PRIx64 " stays mapped (8 KiB)", (int)pid, page);
}

static bool cpu_has_xsave(void)
{
	unsigned int a, b, c, dx;

	return __get_cpuid(1, &a, &b, &c, &dx) && (c & bit_OSXSAVE);
}

int inject_agent(pid_t pid, const char *agent, double timeout_s, char *msg, size_t len)
{
	struct tramp_data d = {};
	struct libc_syms ls;
	struct stat mine, theirs;
	char path[PATH_MAX + 64];
	struct user_regs_struct orig = {};
	uint64_t data_addr = 0, deadline;
	long v;
	pid_t tid = 0;
	int err;
	char abs[PATH_MAX];

	if (!realpath(agent, abs))
		return say(msg, len, -errno, "cannot find the agent %s: %s", agent, strerror(errno));
	agent = abs;

	err = inject_has_agent(pid, agent);
	if (err < 0)
		return say(msg, len, err, "cannot read the maps of pid %d: %s", (int)pid,
			   strerror(-err));
	if (err)
		return 0;
	if (!cpu_has_xsave())
		return say(msg, len, -ENOTSUP, "this CPU has no XSAVE, which the loader needs");
	v = any_thread(pid, "TracerPid");
	if (v)
		return say(msg, len, -EBUSY, "it is traced by pid %ld (a debugger or strace); "
			   "cuprobe does not share a traced process", v);
	v = any_thread(pid, "Seccomp");
	if (v > 0)
		return say(msg, len, -EPERM, "it runs under seccomp (mode %ld): a filter may kill "
			   "it for the calls dlopen makes", v);
	if (status_state(pid) == 'T' || status_state(pid) == 't')
		return say(msg, len, -EBUSY, "it is stopped");
	if (!is_64bit(pid))
		return say(msg, len, -ENOTSUP, "it is not a 64-bit program");
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, agent);
	if (agent[0] != '/' || stat(agent, &mine) || stat(path, &theirs) ||
	    mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino)
		return say(msg, len, -EXDEV, "%s is not the same file inside its mount namespace "
			   "(a container): bind-mount the agent and libcupti there at the same path, "
			   "or start it with CUDA_INJECTION64_PATH", agent);
	if (strlen(agent) >= sizeof(d.path))
		return say(msg, len, -ENAMETOOLONG, "the agent's path is too long");
	err = find_dlopen(pid, &ls);
	if (err == -ENOENT)
		return say(msg, len, -ENOENT, ls.any_libc
			   ? "its libc has no dlopen (glibc older than 2.34 without libdl loaded, "
			     "or another libc)"
			   : "it maps no libc (a static binary): there is no dlopen to call");
	if (err)
		return say(msg, len, err, "cannot read pid %d: %s", (int)pid, strerror(-err));
	/* A process without CUDA (a launcher, a shell) is not worth a ptrace stop. */
	if (maps_cuda(pid) == 0)
		return say(msg, len, -ENODATA, "it maps no CUDA library (libcudart, libcuda)");
	d.dlopen = ls.dlopen;
	d.dlerror = ls.dlerror;
	d.mode = RTLD_NOW_;
	snprintf(d.path, sizeof(d.path), "%s", agent);

	/* A thread waiting in a safe syscall, looked for during up to 2 s. */
	deadline = clock_mono_ns() + 2000000000ull;
	err = -EAGAIN;
	while (err == -EAGAIN && clock_mono_ns() < deadline) {
		if (kill(pid, 0) && errno == ESRCH)
			return say(msg, len, -ESRCH, "it exited");
		tid = safe_thread(pid);
		if (!tid) {
			sleep_ms(10);
			continue;
		}
		err = stop_arm_detach(pid, tid, &d, &data_addr, &orig, msg, len);
	}
	if (err == -EAGAIN)
		return say(msg, len, -EBUSY, "no thread of it waited in sleep, poll, select or wait "
			   "with 256 KiB of stack to spare (where dlopen can be called safely) "
			   "for 2 s");
	if (err)
		return err;
	p_dbg("pid %d: thread %d loads %s through %s", (int)pid, (int)tid, agent, ls.object);

	/* The target runs the trampoline by itself; wait for its answer, boundedly. */
	deadline = clock_mono_ns() + (uint64_t)(timeout_s * 1e9);
	for (;;) {
		struct tramp_data got;

		err = remote_read(pid, data_addr, &got, offsetof(struct tramp_data, path));
		if (err)
			return say(msg, len, err, "pid %d went away while loading the agent", (int)pid);
		if (got.done) {
			char why[512] = "dlopen returned NULL";

			if (got.result) {
				unmap_tramp(pid, tid, &orig, &d, data_addr - PAGE);
				return 0;
			}
			if (got.error && !remote_read(pid, got.error, why, sizeof(why) - 1))
				why[sizeof(why) - 1] = 0;
			if (!got.error || !memchr(why, 0, sizeof(why)))
				snprintf(why, sizeof(why), "dlopen returned NULL");
			return say(msg, len, -ELIBBAD, "dlopen of the agent failed there: %s", why);
		}
		if (clock_mono_ns() > deadline)
			return say(msg, len, -ETIMEDOUT, "dlopen of the agent had not returned after "
				   "%.0f s (it goes on in the process, which resumes by itself)",
				   timeout_s);
		sleep_ms(5);
	}
}

#else /* !__x86_64__ */

int inject_agent(pid_t pid, const char *agent, double timeout_s, char *msg, size_t len)
{
	(void)pid;
	(void)agent;
	(void)timeout_s;
	return say(msg, len, -ENOTSUP, "loading the agent into a running process is done on "
		   "x86_64 only");
}

#endif
