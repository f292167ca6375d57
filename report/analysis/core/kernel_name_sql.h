/* kernel_name_sql.h - the SQL expression of a kernel's name (alias k) in
 * nsys and perfkit stores, which the rules and the analyses share. */
#ifndef REPORT_KERNEL_NAME_SQL_H
#define REPORT_KERNEL_NAME_SQL_H

#include "prof/tables.h"

#define DIAG_KERNEL_NAME_SQL "coalesce(" PROF_SQL_KERNEL_NAME("k.") ", '?')"

#endif
