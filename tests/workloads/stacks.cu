// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Launches through named call chains, for --stack: main calls chain_a_outer
// -> chain_a_middle -> (inlined) chain_a_inline -> stacks_kernel<<<>>> A_LAUNCHES times,
// and, on a second thread, chain_b_outer -> chain_b_inner -> cudaLaunchKernel
// B_LAUNCHES times. Built with frame pointers and debug info (-g), as a
// program must be for its frames to be unwound and its inlined ones named.
// Prints the ground truth as one JSON line on stderr. --sleep-ms N sleeps
// before the first launch.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define A_LAUNCHES 7
#define B_LAUNCHES 5

__global__ void stacks_kernel(float *p, int n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < (unsigned)n)
		p[i] *= 2.0f;
}

__global__ void other_kernel(int *p)
{
	p[threadIdx.x] = 1;
}

static inline __attribute__((always_inline)) void chain_a_inline(int i)
{
	stacks_kernel<<<i + 1, 32>>>(nullptr, 32);
}

extern "C" __attribute__((noinline)) void chain_a_middle(int i)
{
	chain_a_inline(i);
	asm volatile("" ::: "memory");
}

extern "C" __attribute__((noinline)) void chain_a_outer(void)
{
	for (int i = 0; i < A_LAUNCHES; i++)
		chain_a_middle(i);
	asm volatile("" ::: "memory");
}

extern "C" __attribute__((noinline)) void chain_b_inner(void)
{
	void *args[] = { nullptr };

	cudaLaunchKernel((const void *)other_kernel, dim3(1), dim3(32), args, 0, 0);
	asm volatile("" ::: "memory");
}

extern "C" __attribute__((noinline)) void chain_b_outer(void)
{
	for (int i = 0; i < B_LAUNCHES; i++)
		chain_b_inner();
	asm volatile("" ::: "memory");
}

static void *thread_b(void *)
{
	chain_b_outer();
	return nullptr;
}

int main(int argc, char **argv)
{
	pthread_t t;

	/* --sleep-ms N: before launching (an agent turning CUPTI on has the time to). */
	if (argc == 3 && !strcmp(argv[1], "--sleep-ms"))
		usleep(1000 * atoi(argv[2]));
	chain_a_outer();
	if (pthread_create(&t, nullptr, thread_b, nullptr) || pthread_join(t, nullptr))
		return 1;
	fprintf(stderr, "{\"chains\": ["
	       "{\"frames\": [\"main\", \"chain_a_outer\", \"chain_a_middle\", \"chain_a_inline\"], "
	       "\"kernel\": \"stacks_kernel(float*, int)\", \"count\": %d}, "
	       "{\"frames\": [\"chain_b_outer\", \"chain_b_inner\"], "
	       "\"kernel\": \"other_kernel(int*)\", \"count\": %d}]}\n",
	       A_LAUNCHES, B_LAUNCHES);
	return 0;
}
