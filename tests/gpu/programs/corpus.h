/* corpus.h - what the CUDA programs of the corpus share: every CUDA call
 * checked, and the step time they print. Steps run in blocks, each ended
 * by a synchronisation; the figure is the median block's mean step (a
 * hiccup of the machine spoils one block, not the figure). */
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call)                                                                      \
	do {                                                                             \
		cudaError_t e_ = (call);                                                 \
		if (e_ != cudaSuccess) {                                                 \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
				cudaGetErrorString(e_));                                 \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static inline double now_ms()
{
	return std::chrono::duration<double, std::milli>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

/* Runs step(i) for i in [first, first + steps) in at most `blocks` blocks,
 * calling sync() after each; returns the median block's mean step in ms. */
template <class Step, class Sync>
static double time_steps(int first, int steps, int blocks, Step step, Sync sync)
{
	std::vector<double> means;
	blocks = std::max(1, std::min(blocks, steps));
	int next = first;
	for (int b = 0; b < blocks; b++) {
		int n = steps / blocks + (b < steps % blocks ? 1 : 0);
		double t0 = now_ms();
		for (int i = 0; i < n; i++)
			step(next++);
		sync();
		means.push_back((now_ms() - t0) / n);
	}
	std::sort(means.begin(), means.end());
	size_t m = means.size();
	return m % 2 ? means[m / 2] : (means[m / 2 - 1] + means[m / 2]) / 2;
}

/* a relative difference, for checks against the CPU */
static inline bool close_to(double got, double want, double rel)
{
	double scale = std::max(1.0, want < 0 ? -want : want);
	double diff = got - want;
	return (diff < 0 ? -diff : diff) <= rel * scale;
}
