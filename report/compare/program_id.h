/* program_id.h - which program a capture ran, as diff, baseline and gate
 * name it: for an interpreter or a launcher the script or module it ran
 * (`torchrun --nproc_per_node=2 train.py` and `python3 train.py` are one
 * program, train.py; `python3 train.py` and `python3 eval.py` are two),
 * with the launcher beside it; else the command's basename. */
#ifndef REPORT_PROGRAM_ID_H
#define REPORT_PROGRAM_ID_H

#include <stdbool.h>

/* From a command line (PERFKIT_META "command"): *program is the script,
 * the module (`-m pkg.mod`: "pkg.mod") or the executable's basename,
 * *launcher the interpreters and launchers before it joined by " "
 * ("torchrun", "mpirun python3"; "" when none). Both malloc'd; "" and ""
 * for an empty command. 0 or PROF_E_NOMEM. */
int program_id__parse(const char *command, char **program, char **launcher);

#endif
