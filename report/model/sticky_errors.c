/* sticky_errors.c - the table of the CUDA errors after which a context is
 * unusable (sticky_errors.h). */
#include "model/sticky_errors.h"

#include <stddef.h>

static const struct sum_sticky_error sticky_errors[] = {
	{ 700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access" },
	{ 702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT",
	  "a kernel ran past the display watchdog's limit" },
	{ 710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "a device-side assert failed" },
	{ 714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR",
	  "a kernel's call stack overflowed or was corrupted" },
	{ 715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction" },
	{ 716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS", "a misaligned memory access" },
	{ 717, "cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	  "a memory access outside the instruction's address space" },
	{ 718, "cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", "an invalid program counter" },
	{ 719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED", "an exception in a kernel" },
};

const struct sum_sticky_error *sum_sticky_error(int64_t code)
{
	for (size_t i = 0; i < sizeof sticky_errors / sizeof *sticky_errors; i++)
		if (sticky_errors[i].code == code)
			return &sticky_errors[i];
	return NULL;
}
