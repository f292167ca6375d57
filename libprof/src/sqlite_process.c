/* sqlite_process.c - SQLite's process-wide settings for a program of
 * perfkit's own (prof_sqlite__setup_process). */
#include <sqlite3.h>

#include "prof/store.h"

int prof_sqlite__setup_process(void)
{
	/* SQLite counts the memory it holds under one process-wide mutex,
	 * taken at every allocation of every connection: the readers that
	 * work on two threads (the HTML page's diagnosis beside its sections,
	 * the traces' GPU side, the check of the whole file) waited on it
	 * hundreds of times a run. Nothing in perfkit reads the count
	 * (sqlite3_memory_used, the heap limits). It can only be changed
	 * before SQLite starts. */
	return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK ? 0 : PROF_E_USAGE;
}
