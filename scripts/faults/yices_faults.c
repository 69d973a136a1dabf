/* yices_faults.c: planted faults in Yices 2's C API (libyices 2.6.5), for the second held-out
 * family of the real-library benchmark (scripts/bench-real --held-out yices).
 *
 * A shim like z3_faults.c, loaded before libyices (linked ahead of -lyices, or LD_PRELOAD): each
 * wrapper calls the real function (dlsym RTLD_NEXT) unless its fault is named in MFPPR_FAULTS
 * (comma-separated), and then gets one narrow case wrong.  With MFPPR_FAULTS unset or empty the
 * library behaves as built.  Yices' terms are hash-consed, so a term is the constant 0 or 1 when
 * it is the term yices_zero() or yices_int32(1) returns.  The spec (SMT_QF_NIA/yices) calls each
 * function in one relation of its own, so the faults are independent.
 *
 *   yices_sub  yices_sub(0, b) returns b (should be -b): only when the first operand is the
 *              constant 0 (the relation sub).
 *   yices_div  yices_idiv(a, 1) returns -a (should be a): only when the divisor is the constant 1
 *              (the relation division).
 *
 * The bit-vector family (SMT_QF_BV/yices, bench-real --held-out yices_bv) calls the bit-vector
 * functions, each in one relation of its own too; a bit-vector constant is hash-consed as well:
 *
 *   yices_bvsub  yices_bvsub(0, b) returns b (should be -b): only when the first operand is the
 *                zero of its width (the relation sub).
 *   yices_bvdiv  yices_bvdiv(a, 1) returns -a (should be a): only when the divisor is the one of
 *                its width (the relation division).
 *
 * Build: cc -shared -fPIC -O2 -I YICES_INCLUDE yices_faults.c -o yices_faults.so -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <yices.h>

#include "fault_names.h"

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, #name))

typedef term_t (*binary)(term_t, term_t);

term_t yices_sub(term_t a, term_t b)
{
    if (fault_on("yices_sub") && a == yices_zero())
        return b;
    return REAL(yices_sub, binary)(a, b);
}

term_t yices_idiv(term_t a, term_t b)
{
    if (fault_on("yices_div") && b == yices_int32(1))
        return yices_neg(a);
    return REAL(yices_idiv, binary)(a, b);
}

term_t yices_bvsub(term_t a, term_t b)
{
    if (fault_on("yices_bvsub") && yices_term_is_bitvector(a)
        && a == yices_bvconst_zero(yices_term_bitsize(a)))
        return b;
    return REAL(yices_bvsub, binary)(a, b);
}

term_t yices_bvdiv(term_t a, term_t b)
{
    if (fault_on("yices_bvdiv") && yices_term_is_bitvector(b)
        && b == yices_bvconst_one(yices_term_bitsize(b)))
        return yices_bvneg(a);
    return REAL(yices_bvdiv, binary)(a, b);
}
