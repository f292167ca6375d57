/* demangle.c - C++ symbol demangling for kernel names.
 *
 * The toolkit's libcufilt is not installed everywhere CUPTI is, but every
 * process that loads CUPTI already has libstdc++ (CUPTI needs it), whose
 * __cxa_demangle understands the Itanium names nvcc emits. */
#include "collector.h"

#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *collector__demangle(const char *mangled)
{
	int status = 0;
	char *out;

	if (!mangled)
		return NULL;
	/* extern "C" kernels are not mangled: keep them as they are. */
	if (strncmp(mangled, "_Z", 2) != 0)
		return strdup(mangled);
	out = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status != 0 || !out) {
		free(out);
		return strdup(mangled);
	}
	return out;
}
