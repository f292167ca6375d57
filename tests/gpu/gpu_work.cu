// gpu_work.cu - a CUDA program that knows exactly what it did, for
// tests/gpu/run.sh to check a capture against.
//
//   gpu_work work N K   2 threads x 2 streams x N launches of tick_kernel,
//                       copies of known sizes (pageable and pinned), 2
//                       memsets, K cudaMalloc/cudaFree pairs, nested NVTX
//                       push/pop ranges, one start/end range and one mark.
//   gpu_work reset M    M launches, cudaDeviceReset, then _exit(0): only the
//                       collector's reset flush can save those kernels.
//   gpu_work crash MODE M  M launches + sync, then end by MODE: exit (status
//                       3), abort, segv, sigterm, sigint, sigkill (after
//                       1.5 s), _exit (status 4, after 1.5 s), running
//                       (SIGTERM while a long kernel is still running).
//   gpu_work fork P C   P launches, a fork+exec child doing C launches, and a
//                       plain fork child that exits without touching CUDA.
//   gpu_work peer N     N launches on each of the first two GPUs and one
//                       1 MiB peer copy from GPU 0 to GPU 1 (exit 77 when
//                       there are fewer than two GPUs, 78 when they cannot
//                       access each other).
//   gpu_work driver N   N launches of tick_kernel through the driver API
//                       (cuLaunchKernel, as cuBLAS and Triton launch), then
//                       N through the runtime (cudaLaunchKernel); prints
//                       nothing else.
//   gpu_work clean S    a well-behaved loop of S NVTX "step"s: buffers made
//                       once, pinned asynchronous copies, compute-heavy
//                       kernels queued back to back, one synchronisation at
//                       the end; `perfkit diagnose` should find nothing in it.
//   gpu_work managed MIB S  S NVTX "step"s over MIB MiB of managed memory:
//                       the host writes all of it (faulting it back from the
//                       GPU), a kernel updates it (faulting it to the GPU),
//                       a synchronisation; prints managed_bytes and steps.
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(x)                                                                  \
	do {                                                                      \
		cudaError_t e_ = (x);                                             \
		if (e_ != cudaSuccess) {                                          \
			fprintf(stderr, "gpu_work: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(90);                                                 \
		}                                                                 \
	} while (0)

__global__ void tick_kernel(int *out, int v)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[0] += v;
}

// Spins for about `cycles` clock cycles (a second or so at 2e9).
__global__ void spin_kernel(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

struct worker {
	int launches;
	int *buf;
};

static void *launch_on_two_streams(void *arg)
{
	struct worker *w = (struct worker *)arg;
	cudaStream_t s[2];

	CHECK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
	for (int i = 0; i < w->launches; i++)
		for (int j = 0; j < 2; j++)
			tick_kernel<<<1, 32, 0, s[j]>>>(w->buf, 1);
	CHECK(cudaStreamSynchronize(s[0]));
	CHECK(cudaStreamSynchronize(s[1]));
	CHECK(cudaStreamDestroy(s[0]));
	CHECK(cudaStreamDestroy(s[1]));
	return NULL;
}

static void launches(int n)
{
	int *buf;

	CHECK(cudaMalloc(&buf, 64));
	for (int i = 0; i < n; i++)
		tick_kernel<<<1, 32>>>(buf, 1);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(buf));
}

static int work(int n, int k)
{
	const size_t pageable_bytes = 3u << 20, pinned_bytes = 5u << 20, dtoh_bytes = 1u << 20;
	pthread_t th[2];
	struct worker w[2];
	char *host, *pinned, *dev;
	int *buf;

	CHECK(cudaMalloc(&buf, 64));
	nvtxRangePushA("outer");
	for (int i = 0; i < 2; i++) {
		w[i].launches = n;
		w[i].buf = buf;
		pthread_create(&th[i], NULL, launch_on_two_streams, &w[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);

	nvtxRangePushA("copies");
	host = (char *)malloc(pageable_bytes);
	memset(host, 1, pageable_bytes);
	CHECK(cudaMallocHost(&pinned, pinned_bytes));
	CHECK(cudaMalloc(&dev, pinned_bytes));
	CHECK(cudaMemcpy(dev, host, pageable_bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(dev, pinned, pinned_bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(pinned, dev, dtoh_bytes, cudaMemcpyDeviceToHost));
	CHECK(cudaMemset(dev, 0, pinned_bytes));
	CHECK(cudaMemset(dev, 7, dtoh_bytes));
	nvtxRangePop();

	nvtxRangeId_t r = nvtxRangeStartA("allocs");
	for (int i = 0; i < k; i++) {
		void *p;

		CHECK(cudaMalloc(&p, (1u << 20) + (size_t)i * 4096));
		CHECK(cudaFree(p));
	}
	nvtxRangeEnd(r);
	nvtxMarkA("done");
	nvtxRangePop();
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(pinned));
	CHECK(cudaFree(buf));
	free(host);
	return 0;
}

static int crash(const char *mode, int m)
{
	launches(m);
	if (!strcmp(mode, "exit"))
		exit(3);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "segv")) {
		volatile int *p = NULL;
		*p = 1;
	}
	if (!strcmp(mode, "sigterm"))
		raise(SIGTERM);
	if (!strcmp(mode, "sigint"))
		raise(SIGINT);
	if (!strcmp(mode, "running")) {
		/* A kernel still on the GPU when the program dies: the forced
		 * flush may deliver it without an end time. */
		spin_kernel<<<1, 32>>>(2000000000ll);
		usleep(200000);
		raise(SIGTERM);
	}
	if (!strcmp(mode, "sigkill")) {
		usleep(1500000);
		raise(SIGKILL);
	}
	if (!strcmp(mode, "_exit")) {
		usleep(1500000);
		_exit(4);
	}
	fprintf(stderr, "gpu_work: unknown crash mode %s\n", mode);
	return 2;
}

// Compute-bound on purpose (many FMAs per byte): a clean loop keeps the GPU
// busy with work that is neither launch- nor memory-bound.
__global__ void fma_kernel(float *data, int rounds)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float a = data[i], b = 1.0001f;

	for (int r = 0; r < rounds; r++)
		a = fmaf(a, b, 0.5f);
	data[i] = a;
}

static int clean(int steps)
{
	const int n = 1 << 24, chunk = 1 << 20, threads = 256;
	cudaStream_t s;
	float *dev, *host;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&dev, n * sizeof(float)));
	CHECK(cudaMallocHost(&host, chunk * sizeof(float)));
	for (int i = 0; i < chunk; i++)
		host[i] = (float)(i % 97) * 0.01f;
	CHECK(cudaMemsetAsync(dev, 0, n * sizeof(float), s));
	for (int i = 0; i < steps; i++) {
		nvtxRangePushA("step");
		CHECK(cudaMemcpyAsync(dev, host, chunk * sizeof(float), cudaMemcpyHostToDevice, s));
		fma_kernel<<<n / threads, threads, 0, s>>>(dev, 2048);
		CHECK(cudaGetLastError());
		CHECK(cudaMemcpyAsync(host, dev, chunk * sizeof(float), cudaMemcpyDeviceToHost, s));
		nvtxRangePop();
	}
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaFreeHost(host));
	CHECK(cudaFree(dev));
	CHECK(cudaStreamDestroy(s));
	return 0;
}

static int peer(int n)
{
	const size_t bytes = 1u << 20;
	int count = 0, *buf[2];
	void *src, *dst;

	CHECK(cudaGetDeviceCount(&count));
	if (count < 2)
		return 77;
	for (int d = 0; d < 2; d++) {
		CHECK(cudaSetDevice(d));
		CHECK(cudaMalloc(&buf[d], 64));
		for (int i = 0; i < n; i++)
			tick_kernel<<<1, 32>>>(buf[d], 1);
		CHECK(cudaDeviceSynchronize());
	}
	/* Without peer access the driver stages a peer copy through the host
	 * (a DtoH and an HtoD): enable it so the copy is a real one. */
	for (int d = 0; d < 2; d++) {
		int can = 0;

		CHECK(cudaDeviceCanAccessPeer(&can, d, 1 - d));
		if (!can)
			return 78;
		CHECK(cudaSetDevice(d));
		CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
	}
	CHECK(cudaSetDevice(0));
	CHECK(cudaMalloc(&src, bytes));
	CHECK(cudaSetDevice(1));
	CHECK(cudaMalloc(&dst, bytes));
	CHECK(cudaMemcpyPeer(dst, 1, src, 0, bytes));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(dst));
	CHECK(cudaFree(buf[1]));
	CHECK(cudaSetDevice(0));
	CHECK(cudaFree(src));
	CHECK(cudaFree(buf[0]));
	return 0;
}

__global__ void scale_kernel(float *x, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

/* Managed memory touched by host and GPU in turn: every step migrates the
 * buffer both ways on demand (page faults), which the capture must show. */
static int managed(int mib, int steps)
{
	size_t n = ((size_t)mib << 20) / sizeof(float);
	float *x;

	if (mib <= 0 || steps <= 0)
		return 2;
	CHECK(cudaMallocManaged(&x, n * sizeof *x));
	for (int s = 0; s < steps; s++) {
		nvtxRangePushA("step");
		for (size_t i = 0; i < n; i++)
			x[i] = (float)s;
		scale_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x, n);
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		nvtxRangePop();
	}
	if (x[n - 1] != (float)(steps - 1) * 0.5f + 1.0f)
		return 3;
	CHECK(cudaFree(x));
	printf("managed_bytes %zu\nsteps %d\n", n * sizeof *x, steps);
	return 0;
}

/* Launches through the driver API, reached the way libraries reach it
 * (an entry point the runtime hands out), so no link to libcuda. */
static int driver_launches(int n)
{
	typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				      unsigned, unsigned, CUstream, void **, void **);
	cudaDriverEntryPointQueryResult found;
	launch_fn launch = NULL;
	cudaFunction_t fn;
	int *buf, one = 1;
	void *args[] = { &buf, &one };

	CHECK(cudaMalloc(&buf, 64));
	CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&launch, 12000,
					       cudaEnableDefault, &found));
	if (!launch || found != cudaDriverEntryPointSuccess)
		return 91;
	CHECK(cudaGetFuncBySymbol(&fn, (const void *)tick_kernel));
	for (int i = 0; i < n; i++)
		if (launch((CUfunction)fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS)
			return 92;
	for (int i = 0; i < n; i++)
		tick_kernel<<<1, 32>>>(buf, 1);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(buf));
	return 0;
}

static int fork_test(const char *self, int p, int c)
{
	char count[16];
	pid_t pid;
	int status;

	launches(p);
	/* A fork that never uses CUDA must exit cleanly despite the collector. */
	pid = fork();
	if (pid == 0)
		exit(0);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 5;
	snprintf(count, sizeof(count), "%d", c);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", self, "child", count, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 6;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "work"))
		return work(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "reset")) {
		launches(atoi(argv[2]));
		CHECK(cudaDeviceReset());
		_exit(0);
	}
	if (argc >= 4 && !strcmp(argv[1], "crash"))
		return crash(argv[2], atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "fork"))
		return fork_test(argv[0], atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "peer"))
		return peer(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "clean"))
		return clean(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "driver"))
		return driver_launches(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "managed"))
		return managed(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "child")) {
		launches(atoi(argv[2]));
		return 0;
	}
	fprintf(stderr, "usage: gpu_work work N K | reset M | crash MODE M | fork P C | peer N | clean S | "
		"driver N | managed MIB S\n");
	return 2;
}
