// gpu_faults.cu - CUDA programs for the fault tests of tests/gpu/faults.sh:
// each knows exactly how many tick_kernel launches it made, so a capture
// taken under a fault can be checked against it.
//
//   gpu_faults flood N          N launches on one stream, synchronised every
//                               65,536; prints "end_ns=T" (CLOCK_REALTIME) on
//                               stderr at its end, for the time to a ready
//                               capture
//   gpu_faults steady SECONDS   launches for SECONDS (a batch of 100 and a 1 ms
//                               sleep at a time), then prints "launches=N"
//   gpu_faults graph NODES ITERS  one CUDA graph of NODES kernel nodes in a
//                               chain, launched ITERS times
//   gpu_faults streams S N      S non-blocking streams, N launches on each
//   gpu_faults contexts C N     C driver contexts on device 0, N launches in
//                               each (the runtime launches into the context
//                               current on the thread)
//   gpu_faults spawn P N        P copies of "gpu_faults child N" started at
//                               once; exits with the first non-zero status
//   gpu_faults child N          N launches
//   gpu_faults fault N K [SYNC]  N launches, the K-th (from 1) writing through
//                               a null pointer: its context fails. SYNC 1
//                               (default) synchronises after each launch
//                               and sleeps 120 ms (past the writer's least
//                               gap between flushes); 0 queues them all and
//                               synchronises once. Exits 3 on the error,
//                               printing the failing call's error.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x)                                                                  \
	do {                                                                      \
		cudaError_t e_ = (x);                                             \
		if (e_ != cudaSuccess) {                                          \
			fprintf(stderr, "gpu_faults: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(90);                                                 \
		}                                                                 \
	} while (0)
#define CHECK_DRV(x)                                                              \
	do {                                                                      \
		CUresult r_ = (x);                                                \
		if (r_ != CUDA_SUCCESS) {                                         \
			const char *s_ = "?";                                     \
			cuGetErrorString(r_, &s_);                                \
			fprintf(stderr, "gpu_faults: %s: %s\n", #x, s_);          \
			exit(91);                                                 \
		}                                                                 \
	} while (0)

__global__ void tick_kernel(int *out, int v)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[0] += v;
}

static long long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int *device_int(void)
{
	int *buf;

	CHECK(cudaMalloc(&buf, 64));
	CHECK(cudaMemset(buf, 0, 64));
	return buf;
}

static int flood(long long n)
{
	int *buf = device_int();

	for (long long i = 0; i < n; i++) {
		tick_kernel<<<1, 32>>>(buf, 1);
		if ((i & 65535) == 65535)
			CHECK(cudaStreamSynchronize(0));
	}
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(buf));
	fprintf(stderr, "end_ns=%lld\n", realtime_ns());
	return 0;
}

static int steady(double seconds)
{
	int *buf = device_int();
	long long n = 0, until = realtime_ns() + (long long)(seconds * 1e9);

	while (realtime_ns() < until) {
		for (int i = 0; i < 100; i++, n++)
			tick_kernel<<<1, 32>>>(buf, 1);
		usleep(1000);
	}
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(buf));
	printf("launches=%lld\n", n);
	return 0;
}

static int graph(int nodes, int iters)
{
	int *buf = device_int();
	cudaGraph_t g;
	cudaGraphExec_t exec;
	cudaGraphNode_t prev = NULL, node;
	cudaKernelNodeParams p;
	int one = 1;
	void *args[] = { &buf, &one };
	cudaStream_t s;

	memset(&p, 0, sizeof p);
	p.func = (void *)tick_kernel;
	p.gridDim = dim3(1);
	p.blockDim = dim3(32);
	p.kernelParams = args;
	CHECK(cudaGraphCreate(&g, 0));
	for (int i = 0; i < nodes; i++) {
		CHECK(cudaGraphAddKernelNode(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
		prev = node;
	}
	CHECK(cudaGraphInstantiate(&exec, g, 0));
	CHECK(cudaStreamCreate(&s));
	for (int i = 0; i < iters; i++)
		CHECK(cudaGraphLaunch(exec, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(buf));
	return 0;
}

static int streams(int count, int n)
{
	int *buf = device_int();
	cudaStream_t *s = (cudaStream_t *)calloc(count, sizeof *s);

	for (int k = 0; k < count; k++)
		CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
	for (int i = 0; i < n; i++)
		for (int k = 0; k < count; k++)
			tick_kernel<<<1, 32, 0, s[k]>>>(buf, 1);
	for (int k = 0; k < count; k++) {
		CHECK(cudaStreamSynchronize(s[k]));
		CHECK(cudaStreamDestroy(s[k]));
	}
	free(s);
	CHECK(cudaFree(buf));
	return 0;
}

static int contexts(int count, int n)
{
	CUdevice dev;
	CUcontext *ctx = (CUcontext *)calloc(count, sizeof *ctx);

	CHECK_DRV(cuInit(0));
	CHECK_DRV(cuDeviceGet(&dev, 0));
	for (int c = 0; c < count; c++) {
		CHECK_DRV(cuCtxCreate(&ctx[c], NULL, 0, dev));
		int *buf = device_int();
		for (int i = 0; i < n; i++)
			tick_kernel<<<1, 32>>>(buf, 1);
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaFree(buf));
		CHECK_DRV(cuCtxPopCurrent(NULL));
	}
	for (int c = 0; c < count; c++)
		CHECK_DRV(cuCtxDestroy(ctx[c]));
	free(ctx);
	return 0;
}

static int child(int n)
{
	int *buf = device_int();

	for (int i = 0; i < n; i++)
		tick_kernel<<<1, 32>>>(buf, 1);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(buf));
	return 0;
}

static int spawn(const char *self, int count, const char *n)
{
	pid_t *pids = (pid_t *)calloc(count, sizeof *pids);
	int first_bad = 0;

	for (int p = 0; p < count; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			execl(self, self, "child", n, (char *)NULL);
			_exit(127);
		}
	}
	for (int p = 0; p < count; p++) {
		int status = 0;

		waitpid(pids[p], &status, 0);
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (code && !first_bad)
			first_bad = code;
	}
	free(pids);
	return first_bad;
}

static int fault(int n, int k, int sync_each)
{
	int *buf = device_int();
	cudaError_t e = cudaSuccess;

	for (int i = 1; i <= n && e == cudaSuccess; i++) {
		tick_kernel<<<1, 32>>>(i == k ? NULL : buf, 1);
		if (sync_each) {
			e = cudaDeviceSynchronize();
			usleep(120000);
		}
	}
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		fprintf(stderr, "gpu_faults: %s\n", cudaGetErrorName(e));
		return 3;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "flood"))
		return flood(atoll(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "steady"))
		return steady(atof(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "graph"))
		return graph(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "streams"))
		return streams(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "contexts"))
		return contexts(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "spawn"))
		return spawn("/proc/self/exe", atoi(argv[2]), argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "child"))
		return child(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "fault"))
		return fault(atoi(argv[2]), atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 1);
	fprintf(stderr, "usage: gpu_faults flood N | steady SECONDS | graph NODES ITERS | "
			"streams S N | contexts C N | spawn P N | child N | fault N K [SYNC]\n");
	return 2;
}
