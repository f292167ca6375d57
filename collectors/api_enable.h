/* api_enable.h - turning on activity records for the selected CUDA API
 * calls only (prof/api_select.h), by callback id, instead of every runtime
 * and driver call. Header-only: the injection library and the benchmark's
 * counting consumer (its "selected" floor) enable exactly the same set. */
#ifndef PERFKIT_API_ENABLE_H
#define PERFKIT_API_ENABLE_H

#include <stdbool.h>

#include <cupti.h>

#include "prof/api_select.h"

/* Enable the selected calls of one domain; returns how many, or -1 when
 * CUPTI refused (the caller then records the whole domain instead). */
static inline int api_enable__domain(CUpti_CallbackDomain domain, CUpti_CallbackId size,
				     CUptiResult (*enable)(CUpti_CallbackId, uint8_t))
{
	int n = 0;

	for (CUpti_CallbackId cbid = 1; cbid < size; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS ||
		    !prof_api_select__wanted(name))
			continue;
		if (enable(cbid, 1) != CUPTI_SUCCESS)
			return -1;
		n++;
	}
	return n;
}

/* The selected calls by subtraction: the whole runtime and driver kinds on,
 * then every call that is not selected off; off: both kinds off. The calls
 * to switch off are found once (by name, a walk of every call id: 0.6 ms)
 * and kept, since a window opens on the program's own thread. */
static inline void api_enable__selected_by_kind(uint8_t on)
{
	static CUpti_CallbackId runtime_off[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	static CUpti_CallbackId driver_off[CUPTI_DRIVER_TRACE_CBID_SIZE];
	static struct {
		CUpti_ActivityKind kind;
		CUpti_CallbackDomain domain;
		CUpti_CallbackId size;
		CUptiResult (*enable)(CUpti_CallbackId, uint8_t);
		CUpti_CallbackId *off;
		size_t n_off;
	} d[] = {
		{ CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
		  cuptiActivityEnableRuntimeApi, runtime_off, 0 },
		{ CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
		  cuptiActivityEnableDriverApi, driver_off, 0 },
	};
	static bool listed;

	if (on && !listed) {
		for (size_t i = 0; i < sizeof d / sizeof *d; i++)
			for (CUpti_CallbackId cbid = 1; cbid < d[i].size; cbid++) {
				const char *name = NULL;

				if (cuptiGetCallbackName(d[i].domain, cbid, &name) == CUPTI_SUCCESS &&
				    !prof_api_select__wanted(name))
					d[i].off[d[i].n_off++] = cbid;
			}
		listed = true;
	}
	for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
		if (!on) {
			cuptiActivityDisable(d[i].kind);
			continue;
		}
		cuptiActivityEnable(d[i].kind);
		for (size_t k = 0; k < d[i].n_off; k++)
			d[i].enable(d[i].off[k], 0);
	}
}

/* The selected runtime and driver calls; on a refusal, every call of that
 * domain (more records, never fewer). */
static inline void api_enable__selected(void)
{
	if (api_enable__domain(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
			       cuptiActivityEnableRuntimeApi) < 0)
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
	if (api_enable__domain(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
			       cuptiActivityEnableDriverApi) < 0)
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
}

#endif
