/* write_report_store.c - writes a small capture through the writer API for
 * the command-line tests of `perfkit report`: kernels, copies, a memset, API
 * calls and NVTX ranges with known values, including names holding quotes,
 * commas, newlines, <, &, ESC and invalid UTF-8. With --edge, instead, a
 * capture at the edges of what the trace exports must handle:
 *
 *   empty     no events at all
 *   api-only  runtime and driver calls on two threads, no GPU work, and a
 *             process and thread whose names are not valid UTF-8
 *   overlap   NVTX start/end ranges that overlap without nesting, around
 *             a launch, so a trace's slices cannot all share one track
 *
 * usage: write_report_store PATH [DROPPED_RECORDS]
 *        write_report_store PATH --edge=empty|api-only|overlap */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int api_only(struct prof_writer *w)
{
	int64_t t = 5000000;
	int rc = 0;

	prof_writer__process(w, 300, "proc\xc3\x28name");
	prof_writer__thread_name(w, prof_global_tid(300, 301), "thr\xff");
	for (int i = 0; i < 20; i++) {
		struct prof_api_call a = {
			.start_ns = t, .end_ns = t + 700, .global_tid = prof_global_tid(300, 301 + i % 2),
			.correlation_id = i + 1,
			.name_id = prof_writer__string(w, i % 2 ? "cuStreamSynchronize" : "cudaFree_v3020"),
		};

		rc |= prof_writer__api(w, i % 2 ? PROF_API_DRIVER : PROF_API_RUNTIME, &a);
		t += 1000;
	}
	return rc;
}

static int overlap(struct prof_writer *w)
{
	int64_t tid = prof_global_tid(400, 401);
	struct prof_nvtx_event a = {
		.start_ns = 1000000, .end_ns = 1003000, .event_type = PROF_NVTX_STARTEND,
		.global_tid = tid, .end_global_tid = tid, .text_id = prof_writer__string(w, "first"),
	};
	struct prof_nvtx_event b = a;
	struct prof_api_call call = {
		.start_ns = 1001500, .end_ns = 1002500, .global_tid = tid, .correlation_id = 9,
		.name_id = prof_writer__string(w, "cudaLaunchKernel_v7000"),
	};
	struct prof_kernel k = {
		.start_ns = 1002600, .end_ns = 1004000, .correlation_id = 9,
		.global_pid = prof_global_pid(400), .stream_id = 3, .grid_x = 1, .grid_y = 1,
		.grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1,
		.demangled_name = prof_writer__string(w, "k"),
	};
	int rc;

	b.start_ns = 1001000;
	b.end_ns = 1005000;
	b.text_id = prof_writer__string(w, "second");
	k.short_name = k.demangled_name;
	rc = prof_writer__nvtx(w, &a);
	rc |= prof_writer__nvtx(w, &b);
	rc |= prof_writer__api(w, PROF_API_RUNTIME, &call);
	rc |= prof_writer__kernel(w, &k);
	return rc;
}

/* The --edge capture named by kind; -1 for an unknown kind. */
static int edge(struct prof_writer *w, const char *kind)
{
	prof_writer__meta(w, "command", "./edge \"case\"\n");
	if (strcmp(kind, "api-only") == 0)
		return api_only(w);
	if (strcmp(kind, "overlap") == 0)
		return overlap(w);
	return strcmp(kind, "empty") == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };
	int64_t tid = prof_global_tid(100, 101), t = 1000000;
	int32_t corr = 1;
	int rc = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: write_report_store PATH [DROPPED_RECORDS | --edge=KIND]\n");
		return 2;
	}
	if (prof_writer__create(argv[1], PROF_WRITER_OVERWRITE, &w, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (argc == 3 && strncmp(argv[2], "--edge=", 7) == 0) {
		rc = edge(w, argv[2] + 7);
		goto done;
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
done:
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
