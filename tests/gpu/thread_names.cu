// thread_names.cu - threads that name themselves, for tests/gpu/thread_names.sh:
// the collector must keep each traced thread's OS name in ThreadNames, also
// for threads that exit long before the program does, and let an NVTX name
// win over the OS name.
//
//   thread_names   prints "tid NAME TID" for each thread it made and for main
//
//   stager     pthread_setname_np("stager"), kernels and copies, exits; the
//              program goes on for 1.5 s after it, so its /proc entry is gone
//              at the end.
//   blink      names itself, one memset and a 100 ms sleep, exits: shorter
//              than one 500 ms flush interval.
//   os_name    pthread_setname_np("os_name") and nvtxNameOsThread "nvtx_name":
//              ThreadNames must hold nvtx_name only.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK(x)                                                                      \
	do {                                                                          \
		cudaError_t e_ = (x);                                                 \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "thread_names: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(90);                                                     \
		}                                                                     \
	} while (0)

__global__ void scale(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 2.0f + 1.0f;
}

static unsigned tid_of_self(void) { return (unsigned)syscall(SYS_gettid); }

static void some_work(int launches)
{
	const int n = 1 << 20;
	float *d;
	CHECK(cudaMalloc(&d, n * sizeof(float)));
	CHECK(cudaMemset(d, 0, n * sizeof(float)));
	for (int i = 0; i < launches; i++)
		scale<<<(n + 255) / 256, 256>>>(d, n);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(d));
}

static void *stager(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "stager");
	printf("tid stager %u\n", tid_of_self());
	some_work(50);
	return NULL;
}

static void *blink(void *arg)
{
	float *d;
	(void)arg;
	pthread_setname_np(pthread_self(), "blink");
	printf("tid blink %u\n", tid_of_self());
	CHECK(cudaMalloc(&d, 4096));
	CHECK(cudaMemset(d, 0, 4096));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(d));
	usleep(100 * 1000);
	return NULL;
}

static void *nvtx_named(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "os_name");
	nvtxNameOsThreadA(tid_of_self(), "nvtx_name");
	printf("tid nvtx_name %u\n", tid_of_self());
	some_work(10);
	return NULL;
}

int main(void)
{
	void *(*const workers[])(void *) = { stager, blink, nvtx_named };
	pthread_t t;

	printf("tid main %u\n", tid_of_self());
	some_work(10);
	for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++) {
		if (pthread_create(&t, NULL, workers[i], NULL) != 0)
			return 91;
		pthread_join(t, NULL);
	}
	fflush(stdout);
	// the workers are long gone when the capture ends
	usleep(1500 * 1000);
	some_work(10);
	printf("done\n");
	return 0;
}
