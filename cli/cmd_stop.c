/* cmd_stop.c - `perfkit stop FILE|PID`: close the capture window of a
 * running capture (the body is perfkit start's, cmd_start.c). */
#include "cli_capture.h"

int cmd_stop(int argc, char **argv)
{
	return cmd_start_or_stop(argc, argv, false);
}
