/* run_control.h - `perfkit start` and `perfkit stop`: opening and closing
 * capture windows on a running capture, through the control file in the
 * folder of its process files (prof/protocol.h). */
#ifndef PERFKIT_RUN_CONTROL_H
#define PERFKIT_RUN_CONTROL_H

#include <stdbool.h>

#include "run_session.h"

/* target: the capture's file (the output of a perfkit run still going) or
 * a pid (perfkit run's or the program's). open: start, else stop. 0, or
 * -1 with the message printed. */
int run_control(const struct run_messages *msg, const char *target, bool open);

#endif
