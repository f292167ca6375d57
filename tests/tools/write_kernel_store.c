/* write_kernel_store.c - writes a capture of known kernels through the writer
 * API for the command-line tests of `perfkit diff`, `baseline` and `gate`.
 *
 * usage: write_kernel_store PATH COMMAND GPU WALL_NS [NAME COUNT NS]...
 * Each NAME is launched COUNT times for NS nanoseconds each, back to back,
 * in steps: each step launches every NAME that has launches left once, in
 * the order given (a loop of COUNT steps, as a training loop's capture
 * holds it). COMMAND becomes the run's command line, GPU the device name
 * and WALL_NS the run's duration. */
#include <stdio.h>
#include <stdlib.h>

#include "prof/store.h"

static int64_t number(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (end == s || *end || v < 0) {
		fprintf(stderr, "write_kernel_store: not a count: %s\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };
	struct prof_gpu_info gpu = { 0 };
	int64_t t = 1000000000;
	int32_t corr = 0;
	int rc = 0;

	if (argc < 5 || (argc - 5) % 3) {
		fprintf(stderr, "usage: write_kernel_store PATH COMMAND GPU WALL_NS [NAME COUNT NS]...\n");
		return 2;
	}
	if (prof_writer__create(argv[1], PROF_WRITER_OVERWRITE, &w, &err) < 0) {
		fprintf(stderr, "write_kernel_store: %s\n", err.msg);
		return 1;
	}
	gpu.name = argv[3];
	rc |= prof_writer__meta(w, "command", argv[2]);
	rc |= prof_writer__meta(w, "duration_ns", argv[4]);
	rc |= prof_writer__gpu(w, &gpu);
	for (int64_t step = 0, more = 1; more; step++) {
		more = 0;
		for (int a = 5; a + 2 < argc; a += 3) {
			int64_t count = number(argv[a + 1]), ns = number(argv[a + 2]);
			struct prof_kernel k = { 0 };

			if (step >= count)
				continue;
			more = 1;
			k.start_ns = t;
			k.end_ns = t + ns;
			k.correlation_id = ++corr;
			k.demangled_name = k.short_name = prof_writer__string(w, argv[a]);
			k.grid_x = k.grid_y = k.grid_z = 1;
			k.block_x = 128;
			k.block_y = k.block_z = 1;
			rc |= prof_writer__kernel(w, &k);
			t = k.end_ns + 1000;
		}
	}
	if (rc) {
		prof_writer__delete(w);
		fprintf(stderr, "write_kernel_store: writing rows failed\n");
		return 1;
	}
	if (prof_writer__finish(w, &err) < 0) {
		fprintf(stderr, "write_kernel_store: %s\n", err.msg);
		return 1;
	}
	return 0;
}
