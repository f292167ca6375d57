/* metrics.h - the hooks the injection library calls for hardware metrics
 * (see metrics.c). All are no-ops unless PERFKIT_METRICS=roofline. */
#ifndef PERFKIT_METRICS_H
#define PERFKIT_METRICS_H

#include <cupti.h>

/* After cuptiSubscribe: enables the launch callbacks it needs on the
 * collector's subscriber. 1 when metrics are on, 0 when off, < 0 on error. */
int metrics__init(CUpti_SubscriberHandle subscriber);
/* From the subscriber's callback, for every domain and callback id. */
void metrics__on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);
/* 1 once kernel replay was on in this process: CUPTI gives the replayed
 * kernels' activity records no timestamps, and metrics.c describes them
 * instead (also for the records drained after metrics__exit). */
int metrics__replaying(void);
/* At exit, before the store is finished: closes the sessions and the file. */
void metrics__exit(void);

#endif
