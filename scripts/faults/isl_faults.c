/* isl_faults.c: planted faults in isl's C API, for the real-library benchmark (scripts/bench-real).
 *
 * A shim like z3_faults.c, loaded before libisl: each wrapper calls the real function unless its
 * fault is named in MFPPR_FAULTS (comma-separated), and then gets one narrow case wrong.
 *
 *   isl_subtract  isl_set_subtract(s1, s2) returns the empty set when s2 is empty (should be s1).
 *   isl_union     isl_set_union(s1, s2) returns the empty set when s2 is plainly empty and s1 has
 *                 two or more basic sets (should be s1).
 *
 * Build: cc -shared -fPIC -O2 isl_faults.c -o isl_faults.so -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <isl/set.h>

#include "fault_names.h"

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, #name))

typedef isl_set *(*binary)(isl_set *, isl_set *);

/* The empty set in the space of `a`; takes both sets. */
static isl_set *empty_of(isl_set *a, isl_set *b)
{
    isl_set *empty = isl_set_empty(isl_set_get_space(a));
    isl_set_free(a);
    isl_set_free(b);
    return empty;
}

__isl_give isl_set *isl_set_subtract(__isl_take isl_set *s1, __isl_take isl_set *s2)
{
    if (fault_on("isl_subtract") && s1 && s2 && isl_set_is_empty(s2) == isl_bool_true)
        return empty_of(s1, s2);
    return REAL(isl_set_subtract, binary)(s1, s2);
}

__isl_give isl_set *isl_set_union(__isl_take isl_set *s1, __isl_take isl_set *s2)
{
    if (fault_on("isl_union") && s1 && s2 && isl_set_plain_is_empty(s2) == isl_bool_true &&
        isl_set_n_basic_set(s1) >= 2)
        return empty_of(s1, s2);
    return REAL(isl_set_union, binary)(s1, s2);
}
