/* fault_names.h: is a planted fault switched on?  MFPPR_FAULTS is a comma-separated list of
 * fault names; it is read once per process. */
#ifndef MFPPR_FAULT_NAMES_H
#define MFPPR_FAULT_NAMES_H
#include <stdlib.h>
#include <string.h>

static int fault_on(const char *name)
{
    const char *list = getenv("MFPPR_FAULTS");
    size_t n = strlen(name);
    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (len == n && strncmp(list, name, n) == 0)
            return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}
#endif
