/* write_report_store.c - writes a small capture through the writer API for
 * the command-line tests of `perfkit report`: kernels, copies, a memset, API
 * calls and NVTX ranges with known values, including names holding quotes,
 * commas, newlines, <, &, ESC and invalid UTF-8.
 *
 * usage: write_report_store PATH [DROPPED_RECORDS] */
#include <stdio.h>
#include <stdlib.h>

#include "prof/store.h"

static const char *const names[] = {
	"plain_kernel",
	"void gemm<float, \"tiled\">(int, int)",
	"line1\nline2",
	"a<b && c>d",
	"esc\x1b[31mred",
	"bad\xff\xfeutf8",
};
#define NNAMES (int)(sizeof names / sizeof names[0])

int main(int argc, char **argv)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };
	int64_t tid = prof_global_tid(100, 101), t = 1000000;
	int32_t corr = 1;
	int rc = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: write_report_store PATH [DROPPED_RECORDS]\n");
		return 2;
	}
	if (prof_writer__create(argv[1], PROF_WRITER_OVERWRITE, &w, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	prof_writer__meta(w, "command", "./app --size=\"big\"");
	prof_writer__meta(w, "host", "testhost");
	prof_writer__meta(w, "gpu", "Test GPU");
	prof_writer__meta(w, "start_ns", "1000000");
	prof_writer__meta(w, "duration_ns", "1000000");
	prof_writer__meta(w, "exit_status", "0");
	if (argc == 3)
		prof_writer__count(w, "dropped_records", atoll(argv[2]));
	for (int i = 0; i < NNAMES; i++) {
		struct prof_nvtx_event range = {
			.start_ns = t, .end_ns = t + 50000, .event_type = PROF_NVTX_PUSHPOP,
			.global_tid = tid, .end_global_tid = tid,
			.text_id = prof_writer__string(w, names[i]),
		};
		rc |= prof_writer__nvtx(w, &range);
		for (int j = 0; j <= i; j++) {
			struct prof_api_call call = {
				.start_ns = t + 10 + j * 100, .end_ns = t + 60 + j * 100,
				.global_tid = tid, .correlation_id = corr,
				.name_id = prof_writer__string(w, "cudaLaunchKernel_v7000"),
			};
			struct prof_kernel k = {
				.start_ns = t + 1000 + j * 2000, .end_ns = t + 2000 + j * 2000 + i * 10,
				.correlation_id = corr++, .global_pid = prof_global_pid(100),
				.stream_id = 7, .grid_x = 4, .grid_y = 1, .grid_z = 1, .block_x = 256,
				.block_y = 1, .block_z = 1, .registers_per_thread = 32,
				.demangled_name = prof_writer__string(w, names[i]),
			};
			k.short_name = k.demangled_name;
			rc |= prof_writer__api(w, PROF_API_RUNTIME, &call);
			rc |= prof_writer__kernel(w, &k);
		}
		struct prof_memcpy m = {
			.start_ns = t + 20000, .end_ns = t + 21000, .bytes = 1000000,
			.copy_kind = i % 2 ? PROF_COPY_HTOD : PROF_COPY_DTOH,
			.src_kind = i % 2 ? PROF_MEM_PINNED : PROF_MEM_DEVICE,
			.dst_kind = i % 2 ? PROF_MEM_DEVICE : PROF_MEM_PAGEABLE, .stream_id = 7,
			.correlation_id = corr++,
		};
		rc |= prof_writer__memcpy(w, &m);
		t += 100000;
	}
	struct prof_memset ms = { .start_ns = t, .end_ns = t + 500, .bytes = 4096,
				  .mem_kind = PROF_MEM_DEVICE, .correlation_id = corr++ };
	rc |= prof_writer__memset(w, &ms);
	if (rc != 0) {
		fprintf(stderr, "write_report_store: a row was refused\n");
		prof_writer__delete(w);
		return 1;
	}
	if (prof_writer__finish(w, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	return 0;
}
