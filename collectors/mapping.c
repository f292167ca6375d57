/* mapping.c - pure conversions from CUPTI's numbering and records to the
 * store's. */
#include "mapping.h"

#include <string.h>

#include "prof/event.h"

int mapping__mem_kind(uint32_t cupti_kind)
{
	/* CUPTI counts "unknown" as 0 and every real kind one higher than nsys. */
	if (cupti_kind >= 1 && cupti_kind <= 7)
		return (int)cupti_kind - 1;
	return PROF_MEM_UNKNOWN;
}

int mapping__copy_kind(uint32_t cupti_kind)
{
	if (cupti_kind <= PROF_COPY_PTOP)
		return (int)cupti_kind;
	return PROF_COPY_UNKNOWN;
}

int mapping__um_copy_kind(uint32_t counter_kind)
{
	switch (counter_kind) {
	case 1: return PROF_COPY_UVM_HTOD;
	case 2: return PROF_COPY_UVM_DTOH;
	case 8: return PROF_COPY_UVM_DTOD;
	default: return -1;
	}
}

int mapping__memory_operation(uint32_t cupti_op)
{
	switch (cupti_op) {
	case 1: return 0;
	case 2: return 1;
	default: return -1;
	}
}

int mapping__sync_type(uint32_t cupti_type)
{
	if (cupti_type <= PROF_SYNC_CONTEXT)
		return (int)cupti_type;
	return PROF_SYNC_UNKNOWN;
}

/* Index of the '(' opening the bracket group that closes at s[close], or -1.
 * Works on (), <> and [] alike. */
static long match_open(const char *s, long close)
{
	char c = s[close], o = c == ')' ? '(' : c == '>' ? '<' : '[';
	int depth = 0;

	for (long i = close; i >= 0; i--) {
		if (s[i] == c)
			depth++;
		else if (s[i] == o && --depth == 0)
			return i;
	}
	return -1;
}

void mapping__short_name(const char *demangled, char *dst, size_t cap)
{
	long end, start, depth = 0;

	if (!cap)
		return;
	dst[0] = '\0';
	if (!demangled)
		return;
	end = (long)strlen(demangled);
	/* Drop trailing qualifiers and the parameter list, then template args. */
	while (end > 0 && demangled[end - 1] == ' ')
		end--;
	if (end > 0 && demangled[end - 1] == ')') {
		long open = match_open(demangled, end - 1);

		if (open > 0)
			end = open;
	}
	while (end > 0 && demangled[end - 1] == '>') {
		long open = match_open(demangled, end - 1);

		/* "operator>" and friends: leave such names alone. */
		if (open <= 0)
			break;
		end = open;
	}
	/* The name starts after the last top-level "::" or space. */
	start = end;
	while (start > 0) {
		char c = demangled[start - 1];

		if (c == '>' || c == ')')
			depth++;
		else if (c == '<' || c == '(')
			depth--;
		else if (depth == 0 && (c == ' ' || (c == ':' && start > 1 && demangled[start - 2] == ':')))
			break;
		start--;
	}
	if (end <= start) {
		start = 0;
		end = (long)strlen(demangled);
	}
	if ((size_t)(end - start) >= cap)
		end = start + (long)cap - 1;
	memcpy(dst, demangled + start, (size_t)(end - start));
	dst[end - start] = '\0';
}

int64_t mapping__samples_dropped(uint64_t prev_end_ns, uint64_t end_ns, uint64_t interval_ns)
{
	uint64_t gap, periods;

	if (!prev_end_ns || !interval_ns || end_ns <= prev_end_ns)
		return 0;
	gap = end_ns - prev_end_ns;
	/* rounded to the nearest interval, without forming gap + interval / 2 */
	periods = gap / interval_ns + (gap % interval_ns >= interval_ns - interval_ns / 2);
	if (periods <= 1)
		return 0;
	return periods - 1 > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(periods - 1);
}

int64_t mapping__sampler_type_id(int device, int opened_before)
{
	return (int64_t)(device & 0xFF) | ((int64_t)opened_before << 8);
}
