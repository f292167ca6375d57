/* id_groups.h - a pass's rows counted by an integer id (a name's StringIds
 * id) in memory, where SQL's GROUP BY sorted every row by it: the ids are
 * few and a table's rows come in runs of one id (id_groups.c). */
#ifndef REPORT_ID_GROUPS_H
#define REPORT_ID_GROUPS_H

#include <stdint.h>

struct id_group {
	int64_t id;
	int64_t count;
	int64_t sum;  /* a saturated sum of the caller's values */
	double total; /* SQL's total() of them, added in the order met */
};

struct id_groups {
	struct id_group *v; /* by id */
	int n, cap;
	int last; /* the group found last */
};

/* The group of id, added with nothing counted where it is new; NULL where
 * memory runs out. */
struct id_group *id_groups__of(struct id_groups *g, int64_t id);
void id_groups__exit(struct id_groups *g);

/* CAST(r AS INTEGER) as SQLite casts a double: the nearest limit past the
 * int64 range. */
int64_t id_groups__sql_integer(double r);

#endif
