/* isl_faults.c: planted faults in isl's C API, for the real-library benchmarks (scripts/bench-real,
 * scripts/bench-triage).
 *
 * A shim like z3_faults.c, loaded before libisl: each wrapper calls the real function unless its
 * fault is named in MFPPR_FAULTS (comma-separated), and then gets one narrow case wrong.
 *
 *   isl_subtract        isl_set_subtract(s1, s2) returns the empty set when s2 is empty (should
 *                       be s1).
 *   isl_subtract_multi  isl_set_subtract(s1, s2) leaves s2's last basic set out when both s1 and
 *                       s2 have two or more basic sets (subtracts too little).
 *   isl_union           isl_set_union(s1, s2) returns the empty set when s2 is plainly empty and
 *                       s1 has two or more basic sets (should be s1).
 *   isl_intersect       isl_set_intersect(s1, s2) returns s1 without its last basic set when s2 is
 *                       plainly the universe and s1 has two or more basic sets (should be s1).
 *   isl_complement      isl_set_complement(s) complements s without its last basic set when s has
 *                       exactly two basic sets.
 *   isl_coalesce        isl_set_coalesce(s) drops s's last basic set when s has two or more.
 *
 * "Last" is in the order isl_set_get_basic_set_list gives.  scripts/bench-real plants isl_subtract
 * and isl_union; scripts/bench-triage draws from the others and isl_union, one fault per function,
 * so its faults are independent.
 *
 * Build: cc -shared -fPIC -O2 isl_faults.c -o isl_faults.so -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <isl/set.h>

#include "fault_names.h"

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, #name))

typedef isl_set *(*unary)(isl_set *);
typedef isl_set *(*binary)(isl_set *, isl_set *);

/* The empty set in the space of `a`; takes both sets. */
static isl_set *empty_of(isl_set *a, isl_set *b)
{
    isl_set *empty = isl_set_empty(isl_set_get_space(a));
    isl_set_free(a);
    isl_set_free(b);
    return empty;
}

/* `s` without its last basic set; takes `s`.  The union is the real one, never a faulty one. */
static isl_set *drop_last(isl_set *s)
{
    isl_basic_set_list *list = isl_set_get_basic_set_list(s);
    isl_size n = isl_basic_set_list_n_basic_set(list);
    isl_set *rest = isl_set_empty(isl_set_get_space(s));
    for (isl_size i = 0; i + 1 < n; ++i)
        rest = REAL(isl_set_union, binary)(
            rest, isl_set_from_basic_set(isl_basic_set_list_get_basic_set(list, i)));
    isl_basic_set_list_free(list);
    isl_set_free(s);
    return rest;
}

static int has_basic_sets(isl_set *s, isl_size at_least)
{
    return isl_set_n_basic_set(s) >= at_least;
}

__isl_give isl_set *isl_set_subtract(__isl_take isl_set *s1, __isl_take isl_set *s2)
{
    if (fault_on("isl_subtract") && s1 && s2 && isl_set_is_empty(s2) == isl_bool_true)
        return empty_of(s1, s2);
    if (fault_on("isl_subtract_multi") && s1 && s2 && has_basic_sets(s1, 2) && has_basic_sets(s2, 2))
        s2 = drop_last(s2);
    return REAL(isl_set_subtract, binary)(s1, s2);
}

__isl_give isl_set *isl_set_union(__isl_take isl_set *s1, __isl_take isl_set *s2)
{
    if (fault_on("isl_union") && s1 && s2 && isl_set_plain_is_empty(s2) == isl_bool_true &&
        has_basic_sets(s1, 2))
        return empty_of(s1, s2);
    return REAL(isl_set_union, binary)(s1, s2);
}

__isl_give isl_set *isl_set_intersect(__isl_take isl_set *s1, __isl_take isl_set *s2)
{
    if (fault_on("isl_intersect") && s1 && s2 && isl_set_plain_is_universe(s2) == isl_bool_true &&
        has_basic_sets(s1, 2)) {
        isl_set_free(s2);
        return drop_last(s1);
    }
    return REAL(isl_set_intersect, binary)(s1, s2);
}

__isl_give isl_set *isl_set_complement(__isl_take isl_set *s)
{
    if (fault_on("isl_complement") && s && isl_set_n_basic_set(s) == 2)
        s = drop_last(s);
    return REAL(isl_set_complement, unary)(s);
}

__isl_give isl_set *isl_set_coalesce(__isl_take isl_set *s)
{
    if (fault_on("isl_coalesce") && s && has_basic_sets(s, 2))
        s = drop_last(s);
    return REAL(isl_set_coalesce, unary)(s);
}
