/* diagnose_run.c - `perfkit diagnose` of a capture (diagnose_run.h): the
 * dispatch to the diagnosis of one process (rules/rules.c) or of a job
 * rank by rank (diagnose_job.c), as --rank chose, the header's note of
 * that choice, and the rows left out. It sits above the rules and the
 * diagnosis model, which know neither. */
#include "diagnose_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks/job_judge.h"
#include "analysis/rules/rules.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "prof/error.h"

/* --rank's choice into r, for the header: the ranks, and one named in
 * full ("rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)") or several by number. */
static int note_chosen(struct diag_report *r, const struct sum_ranks *ranks)
{
	const struct sum_process *one = NULL;
	char label[256];

	r->chosen = malloc(sizeof *r->chosen * (size_t)(ranks->n ? ranks->n : 1));
	if (!r->chosen)
		return PROF_E_NOMEM;
	for (int i = 0; i < ranks->n; i++)
		if (ranks->p[i].rank >= 0 && ranks->p[i].selected) {
			r->chosen[r->nchosen++] = ranks->p[i].rank;
			one = &ranks->p[i];
		}
	if (r->nchosen == 1)
		sum_process__label(one, label, sizeof label);
	else
		job_judge__rank_list(r->chosen, r->nchosen, label, sizeof label);
	r->chosen_label = strdup(label);
	return r->chosen_label ? 0 : PROF_E_NOMEM;
}

/* The unit of keep the capture is as a whole, NULL without keep. */
static struct timeline_unit *whole(struct diag_keep *keep, struct prof_error *err, int *rc)
{
	struct timeline_unit *x = keep ? timeline_units__get(&keep->timeline, -1) : NULL;

	*rc = keep && !x ? prof_error__set(err, PROF_E_NOMEM, "out of memory") : 0;
	return x;
}

/* The unit of keep under the rank's number where the capture holds the
 * one rank chosen and no row of another process, so the rank read in its
 * own (sum_ranks__scope) is the capture read whole; else NULL. */
static struct timeline_unit *alone(struct prof_store *store, const struct sum_ranks *ranks, int chosen, int left,
				   struct diag_keep *keep, struct prof_error *err, int *rc)
{
	const struct sum_process *one = NULL;
	struct timeline_unit *x;
	bool only = false;

	*rc = 0;
	if (!keep || chosen != 1 || left != 0)
		return NULL;
	for (int i = 0; i < ranks->n && !one; i++)
		if (ranks->p[i].rank >= 0 && ranks->p[i].selected)
			one = &ranks->p[i];
	*rc = sum_ranks__holds_only(store, one->global_pid, &only, err);
	if (*rc || !only)
		return NULL;
	x = timeline_units__get(&keep->timeline, one->rank);
	*rc = x ? 0 : prof_error__set(err, PROF_E_NOMEM, "out of memory");
	return x;
}

static int run_chosen(struct prof_store *store, const struct diag_settings *settings,
		      struct diag_keep *keep, struct diag_report **out, struct prof_error *err)
{
	struct timeline_unit *x;
	struct sum_ranks ranks;
	int chosen = 0, left = 0, rc;
	bool job;

	*out = NULL;
	/* a perfkit capture of one process is known without the rank model */
	if (!sum_ranks__may_be_job(store)) {
		x = whole(keep, err, &rc);
		return rc ? rc : diag__run_alone(store, settings, x, out, err);
	}
	rc = sum_ranks__load(store, &ranks, err);
	if (rc)
		return rc;
	for (int i = 0; i < ranks.n; i++) {
		chosen += ranks.p[i].rank >= 0 && ranks.p[i].selected;
		left += ranks.p[i].rank >= 0 && !ranks.p[i].selected;
	}
	job = sum_ranks__is_job(&ranks);
	/* one rank of a job is diagnosed through --rank's views, where the
	 * timeline reports read it in its own: nothing kept for them, but for
	 * a capture of that one rank alone */
	x = job ? alone(store, &ranks, chosen, left, keep, err, &rc) : whole(keep, err, &rc);
	if (rc == 0)
		rc = chosen > 1 && job ? diag__run_job(store, settings, &ranks, keep, out, err)
				       : diag__run_alone(store, settings, x, out, err);
	/* the header names --rank's choice when it leaves ranks out */
	if (rc == 0 && left > 0 && note_chosen(*out, &ranks)) {
		diag_report__delete(*out);
		*out = NULL;
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	sum_ranks__exit(&ranks);
	if (rc == 0 && (*out)->nranks > 0 && diag_report__sort(*out)) {
		diag_report__delete(*out);
		*out = NULL;
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	return rc;
}

int diag__run(struct prof_store *store, const struct diag_settings *settings,
	      struct diag_report **out, struct prof_error *err)
{
	return diag__run_keeping(store, settings, NULL, out, err);
}

void diag_keep__exit(struct diag_keep *k)
{
	timeline_units__exit(&k->timeline);
	if (k->have_times)
		rank_times__exit(&k->times);
	k->have_times = false;
}

int diag__run_keeping(struct prof_store *store, const struct diag_settings *settings, struct diag_keep *keep,
		      struct diag_report **out, struct prof_error *err)
{
	int rc = run_chosen(store, settings, keep, out, err);

	/* every rule read the capture without its rows of a bad span, as
	 * the summaries leave them out: the header says how many */
	if (rc == 0)
		rc = sum_bad_spans__count(store, &(*out)->rows_left_out, err);
	if (rc < 0 && *out) {
		diag_report__delete(*out);
		*out = NULL;
	}
	return rc;
}

int diag__run_if_job(struct prof_store *store, const struct diag_settings *settings,
		     struct diag_report **out, struct prof_error *err)
{
	struct sum_ranks ranks;
	bool job;
	int rc;

	*out = NULL;
	if (!sum_ranks__may_be_job(store))
		return 0;
	rc = sum_ranks__load(store, &ranks, err);
	if (rc)
		return rc;
	job = ranks.nranks > 1 && sum_ranks__is_job(&ranks);
	sum_ranks__exit(&ranks);
	return job ? diag__run(store, settings, out, err) : 0;
}
