// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A target for the injection tests (tests/e2e/test_inject.sh): its only
 * thread sleeps in a raw nanosleep with known values in every register the
 * kernel keeps across a syscall (rbx, rdx, r8-r10, r12-r15, and the 16 vector
 * registers, whole ymm where the CPU has AVX), and checks them, and that the
 * sleep returned 0 (restarted, never EINTR), after each sleep. Any difference
 * is printed and the exit status is 1. Built dynamically (it maps libc, and
 * libcudart without calling it, as cuprobe brings the agent only into a
 * process that maps CUDA) and statically (-static: no dlopen to call).
 *
 *   regcheck [--iters N] [--sleep-ms N] [--ready-file PATH]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rc_regs {
	uint64_t g[9];
	uint8_t v[16][32];
};

__attribute__((visibility("hidden"), used)) struct rc_regs cuprobe_rc_in, cuprobe_rc_out;
__attribute__((visibility("hidden"), used)) struct timespec cuprobe_rc_ts;
__attribute__((visibility("hidden"), used)) long cuprobe_rc_ret;

static void sleep_sse(void)
{
	__asm__ volatile(
	"movq cuprobe_rc_in+0(%%rip), %%rbx\n"
	"movq cuprobe_rc_in+8(%%rip), %%rdx\n"
	"movq cuprobe_rc_in+16(%%rip), %%r8\n"
	"movq cuprobe_rc_in+24(%%rip), %%r9\n"
	"movq cuprobe_rc_in+32(%%rip), %%r10\n"
	"movq cuprobe_rc_in+40(%%rip), %%r12\n"
	"movq cuprobe_rc_in+48(%%rip), %%r13\n"
	"movq cuprobe_rc_in+56(%%rip), %%r14\n"
	"movq cuprobe_rc_in+64(%%rip), %%r15\n"
	"movdqu cuprobe_rc_in+72(%%rip), %%xmm0\n"
	"movdqu cuprobe_rc_in+104(%%rip), %%xmm1\n"
	"movdqu cuprobe_rc_in+136(%%rip), %%xmm2\n"
	"movdqu cuprobe_rc_in+168(%%rip), %%xmm3\n"
	"movdqu cuprobe_rc_in+200(%%rip), %%xmm4\n"
	"movdqu cuprobe_rc_in+232(%%rip), %%xmm5\n"
	"movdqu cuprobe_rc_in+264(%%rip), %%xmm6\n"
	"movdqu cuprobe_rc_in+296(%%rip), %%xmm7\n"
	"movdqu cuprobe_rc_in+328(%%rip), %%xmm8\n"
	"movdqu cuprobe_rc_in+360(%%rip), %%xmm9\n"
	"movdqu cuprobe_rc_in+392(%%rip), %%xmm10\n"
	"movdqu cuprobe_rc_in+424(%%rip), %%xmm11\n"
	"movdqu cuprobe_rc_in+456(%%rip), %%xmm12\n"
	"movdqu cuprobe_rc_in+488(%%rip), %%xmm13\n"
	"movdqu cuprobe_rc_in+520(%%rip), %%xmm14\n"
	"movdqu cuprobe_rc_in+552(%%rip), %%xmm15\n"
	"lea cuprobe_rc_ts(%%rip), %%rdi\n"
	"xor %%esi, %%esi\n"
	"mov $35, %%eax\n" /* nanosleep */
	"syscall\n"
	"mov %%rax, cuprobe_rc_ret(%%rip)\n"
	"movq %%rbx, cuprobe_rc_out+0(%%rip)\n"
	"movq %%rdx, cuprobe_rc_out+8(%%rip)\n"
	"movq %%r8, cuprobe_rc_out+16(%%rip)\n"
	"movq %%r9, cuprobe_rc_out+24(%%rip)\n"
	"movq %%r10, cuprobe_rc_out+32(%%rip)\n"
	"movq %%r12, cuprobe_rc_out+40(%%rip)\n"
	"movq %%r13, cuprobe_rc_out+48(%%rip)\n"
	"movq %%r14, cuprobe_rc_out+56(%%rip)\n"
	"movq %%r15, cuprobe_rc_out+64(%%rip)\n"
	"movdqu %%xmm0, cuprobe_rc_out+72(%%rip)\n"
	"movdqu %%xmm1, cuprobe_rc_out+104(%%rip)\n"
	"movdqu %%xmm2, cuprobe_rc_out+136(%%rip)\n"
	"movdqu %%xmm3, cuprobe_rc_out+168(%%rip)\n"
	"movdqu %%xmm4, cuprobe_rc_out+200(%%rip)\n"
	"movdqu %%xmm5, cuprobe_rc_out+232(%%rip)\n"
	"movdqu %%xmm6, cuprobe_rc_out+264(%%rip)\n"
	"movdqu %%xmm7, cuprobe_rc_out+296(%%rip)\n"
	"movdqu %%xmm8, cuprobe_rc_out+328(%%rip)\n"
	"movdqu %%xmm9, cuprobe_rc_out+360(%%rip)\n"
	"movdqu %%xmm10, cuprobe_rc_out+392(%%rip)\n"
	"movdqu %%xmm11, cuprobe_rc_out+424(%%rip)\n"
	"movdqu %%xmm12, cuprobe_rc_out+456(%%rip)\n"
	"movdqu %%xmm13, cuprobe_rc_out+488(%%rip)\n"
	"movdqu %%xmm14, cuprobe_rc_out+520(%%rip)\n"
	"movdqu %%xmm15, cuprobe_rc_out+552(%%rip)\n"
	:
	:
	: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
	  "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
	  "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
}

static void sleep_avx(void)
{
	__asm__ volatile(
	"movq cuprobe_rc_in+0(%%rip), %%rbx\n"
	"movq cuprobe_rc_in+8(%%rip), %%rdx\n"
	"movq cuprobe_rc_in+16(%%rip), %%r8\n"
	"movq cuprobe_rc_in+24(%%rip), %%r9\n"
	"movq cuprobe_rc_in+32(%%rip), %%r10\n"
	"movq cuprobe_rc_in+40(%%rip), %%r12\n"
	"movq cuprobe_rc_in+48(%%rip), %%r13\n"
	"movq cuprobe_rc_in+56(%%rip), %%r14\n"
	"movq cuprobe_rc_in+64(%%rip), %%r15\n"
	"vmovdqu cuprobe_rc_in+72(%%rip), %%ymm0\n"
	"vmovdqu cuprobe_rc_in+104(%%rip), %%ymm1\n"
	"vmovdqu cuprobe_rc_in+136(%%rip), %%ymm2\n"
	"vmovdqu cuprobe_rc_in+168(%%rip), %%ymm3\n"
	"vmovdqu cuprobe_rc_in+200(%%rip), %%ymm4\n"
	"vmovdqu cuprobe_rc_in+232(%%rip), %%ymm5\n"
	"vmovdqu cuprobe_rc_in+264(%%rip), %%ymm6\n"
	"vmovdqu cuprobe_rc_in+296(%%rip), %%ymm7\n"
	"vmovdqu cuprobe_rc_in+328(%%rip), %%ymm8\n"
	"vmovdqu cuprobe_rc_in+360(%%rip), %%ymm9\n"
	"vmovdqu cuprobe_rc_in+392(%%rip), %%ymm10\n"
	"vmovdqu cuprobe_rc_in+424(%%rip), %%ymm11\n"
	"vmovdqu cuprobe_rc_in+456(%%rip), %%ymm12\n"
	"vmovdqu cuprobe_rc_in+488(%%rip), %%ymm13\n"
	"vmovdqu cuprobe_rc_in+520(%%rip), %%ymm14\n"
	"vmovdqu cuprobe_rc_in+552(%%rip), %%ymm15\n"
	"lea cuprobe_rc_ts(%%rip), %%rdi\n"
	"xor %%esi, %%esi\n"
	"mov $35, %%eax\n" /* nanosleep */
	"syscall\n"
	"mov %%rax, cuprobe_rc_ret(%%rip)\n"
	"movq %%rbx, cuprobe_rc_out+0(%%rip)\n"
	"movq %%rdx, cuprobe_rc_out+8(%%rip)\n"
	"movq %%r8, cuprobe_rc_out+16(%%rip)\n"
	"movq %%r9, cuprobe_rc_out+24(%%rip)\n"
	"movq %%r10, cuprobe_rc_out+32(%%rip)\n"
	"movq %%r12, cuprobe_rc_out+40(%%rip)\n"
	"movq %%r13, cuprobe_rc_out+48(%%rip)\n"
	"movq %%r14, cuprobe_rc_out+56(%%rip)\n"
	"movq %%r15, cuprobe_rc_out+64(%%rip)\n"
	"vmovdqu %%ymm0, cuprobe_rc_out+72(%%rip)\n"
	"vmovdqu %%ymm1, cuprobe_rc_out+104(%%rip)\n"
	"vmovdqu %%ymm2, cuprobe_rc_out+136(%%rip)\n"
	"vmovdqu %%ymm3, cuprobe_rc_out+168(%%rip)\n"
	"vmovdqu %%ymm4, cuprobe_rc_out+200(%%rip)\n"
	"vmovdqu %%ymm5, cuprobe_rc_out+232(%%rip)\n"
	"vmovdqu %%ymm6, cuprobe_rc_out+264(%%rip)\n"
	"vmovdqu %%ymm7, cuprobe_rc_out+296(%%rip)\n"
	"vmovdqu %%ymm8, cuprobe_rc_out+328(%%rip)\n"
	"vmovdqu %%ymm9, cuprobe_rc_out+360(%%rip)\n"
	"vmovdqu %%ymm10, cuprobe_rc_out+392(%%rip)\n"
	"vmovdqu %%ymm11, cuprobe_rc_out+424(%%rip)\n"
	"vmovdqu %%ymm12, cuprobe_rc_out+456(%%rip)\n"
	"vmovdqu %%ymm13, cuprobe_rc_out+488(%%rip)\n"
	"vmovdqu %%ymm14, cuprobe_rc_out+520(%%rip)\n"
	"vmovdqu %%ymm15, cuprobe_rc_out+552(%%rip)\n"
	:
	:
	: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
	  "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
	  "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
}

static const char *const gnames[9] = { "rbx", "rdx", "r8", "r9", "r10", "r12", "r13", "r14", "r15" };

int main(int argc, char **argv)
{
	long iters = 100, sleep_ms = 20, bad = 0;
	const char *ready = NULL;
	int avx = __builtin_cpu_supports("avx"), width = avx ? 32 : 16;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--iters"))
			iters = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--sleep-ms"))
			sleep_ms = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--ready-file"))
			ready = argv[i + 1];
	}
	cuprobe_rc_ts.tv_sec = sleep_ms / 1000;
	cuprobe_rc_ts.tv_nsec = (sleep_ms % 1000) * 1000000L;
	for (long it = 0; it < iters; it++) {
		for (int r = 0; r < 9; r++)
			cuprobe_rc_in.g[r] = 0x5a5a000000000000ull ^ ((uint64_t)it << 16) ^ (uint64_t)(r + 1);
		for (int r = 0; r < 16; r++)
			for (int b = 0; b < 32; b++)
				cuprobe_rc_in.v[r][b] = (uint8_t)(it * 7 + r * 32 + b + 1);
		memset(&cuprobe_rc_out, 0, sizeof(cuprobe_rc_out));
		if (ready && it == 0) {
			FILE *f = fopen(ready, "w");

			if (f)
				fclose(f);
		}
		if (avx)
			sleep_avx();
		else
			sleep_sse();
		if (cuprobe_rc_ret != 0) {
			fprintf(stderr, "regcheck: iteration %ld: nanosleep returned %ld\n", it,
				cuprobe_rc_ret);
			bad++;
		}
		for (int r = 0; r < 9; r++)
			if (cuprobe_rc_in.g[r] != cuprobe_rc_out.g[r]) {
				fprintf(stderr, "regcheck: iteration %ld: %s changed\n", it, gnames[r]);
				bad++;
			}
		for (int r = 0; r < 16; r++)
			if (memcmp(cuprobe_rc_in.v[r], cuprobe_rc_out.v[r], width)) {
				fprintf(stderr, "regcheck: iteration %ld: %cmm%d changed\n", it,
					avx ? 'y' : 'x', r);
				bad++;
			}
	}
	printf("regcheck: %ld iterations, %ld differences, %s\n", iters, bad, avx ? "ymm" : "xmm");
	return bad ? 1 : 0;
}
