/* z3_faults.c: planted faults in Z3's C API, for the real-library benchmarks (scripts/bench-real,
 * scripts/bench-triage).
 *
 * A shim, loaded before libz3 (LD_PRELOAD, or linked ahead of -lz3): each wrapper calls the real
 * function (dlsym RTLD_NEXT) unless its fault is named in MFPPR_FAULTS (comma-separated), and then
 * gets one narrow case wrong.  With MFPPR_FAULTS unset or empty the library behaves as built, so
 * a test that fails with one fault and passes without fails because of that fault alone (the
 * benchmarks' ground truth).  Each fault is in its own function (the spec reaches all of them
 * through z3++.h), so the faults are independent.
 *
 *   arithmetic
 *   z3_sub     Z3_mk_sub(0, b) returns b (should be -b): only when the first operand is numeral 0.
 *   z3_div     Z3_mk_div(a, 1) returns -a (should be a): only when the divisor is numeral 1.
 *   z3_uminus  Z3_mk_unary_minus(a) returns a itself when a is a numeral.
 *   z3_mul     Z3_mk_mul(a, 0) of two operands returns a (should be 0): only when the second
 *              operand is numeral 0.
 *   z3_mod     Z3_mk_mod(a, 1) returns a (should be 0): only when the divisor is numeral 1.
 *   term constructor
 *   z3_ite     Z3_mk_ite(c, t, e) returns e when t is a numeral and e is not (should be the ite).
 *   comparisons
 *   z3_gt      Z3_mk_gt(a, 0) returns 0 > a (should be a > 0): only when the second operand is
 *              numeral 0.
 *   z3_eq      Z3_mk_eq(0, b) returns not (0 = b) when the first operand is numeral 0 and b is not
 *              a numeral.
 *   a crash
 *   z3_rem_abort  Z3_mk_rem(a, b) aborts (SIGABRT, as a failed assertion of the library would)
 *              when the divisor is numeral 7.  The fuzzed inputs call rem, mostly in values
 *              nothing reads, which is where mfppr's unread step looks (docs/results/real.md).
 *   model evaluation (no operation of the spec's relations calls it; only the check
 *   check_exprs_are_zero does, so its tests fail in that check, every computed value right)
 *   z3_eval    Z3_model_eval(m, a = b) gives false when a is a unary minus (should be its value).
 *
 * scripts/bench-real plants z3_sub, z3_div and z3_uminus; scripts/bench-triage draws from all.
 *
 * Build: cc -shared -fPIC -O2 z3_faults.c -o z3_faults.so -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <z3.h>

#include "fault_names.h"

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, #name))

typedef Z3_ast (*unary)(Z3_context, Z3_ast);
typedef Z3_ast (*binary)(Z3_context, Z3_ast, Z3_ast);
typedef Z3_ast (*ternary)(Z3_context, Z3_ast, Z3_ast, Z3_ast);
typedef Z3_ast (*nary)(Z3_context, unsigned, Z3_ast const[]);
typedef bool (*evaluate)(Z3_context, Z3_model, Z3_ast, bool, Z3_ast *);

static int is_numeral(Z3_context c, Z3_ast a, const char *value)
{
    return Z3_is_numeral_ast(c, a) && strcmp(Z3_get_numeral_string(c, a), value) == 0;
}

Z3_ast Z3_API Z3_mk_sub(Z3_context c, unsigned n, Z3_ast const args[])
{
    if (fault_on("z3_sub") && n == 2 && is_numeral(c, args[0], "0"))
        return args[1];
    return REAL(Z3_mk_sub, nary)(c, n, args);
}

Z3_ast Z3_API Z3_mk_div(Z3_context c, Z3_ast a, Z3_ast b)
{
    if (fault_on("z3_div") && is_numeral(c, b, "1"))
        return REAL(Z3_mk_unary_minus, unary)(c, a);
    return REAL(Z3_mk_div, binary)(c, a, b);
}

Z3_ast Z3_API Z3_mk_unary_minus(Z3_context c, Z3_ast a)
{
    if (fault_on("z3_uminus") && Z3_is_numeral_ast(c, a))
        return a;
    return REAL(Z3_mk_unary_minus, unary)(c, a);
}

Z3_ast Z3_API Z3_mk_rem(Z3_context c, Z3_ast a, Z3_ast b)
{
    if (fault_on("z3_rem_abort") && is_numeral(c, b, "7"))
        abort();
    return REAL(Z3_mk_rem, binary)(c, a, b);
}

Z3_ast Z3_API Z3_mk_mul(Z3_context c, unsigned n, Z3_ast const args[])
{
    if (fault_on("z3_mul") && n == 2 && is_numeral(c, args[1], "0"))
        return args[0];
    return REAL(Z3_mk_mul, nary)(c, n, args);
}

Z3_ast Z3_API Z3_mk_mod(Z3_context c, Z3_ast a, Z3_ast b)
{
    if (fault_on("z3_mod") && is_numeral(c, b, "1"))
        return a;
    return REAL(Z3_mk_mod, binary)(c, a, b);
}

Z3_ast Z3_API Z3_mk_ite(Z3_context c, Z3_ast cond, Z3_ast t, Z3_ast e)
{
    if (fault_on("z3_ite") && Z3_is_numeral_ast(c, t) && !Z3_is_numeral_ast(c, e))
        return e;
    return REAL(Z3_mk_ite, ternary)(c, cond, t, e);
}

Z3_ast Z3_API Z3_mk_gt(Z3_context c, Z3_ast a, Z3_ast b)
{
    if (fault_on("z3_gt") && is_numeral(c, b, "0"))
        return REAL(Z3_mk_gt, binary)(c, b, a);
    return REAL(Z3_mk_gt, binary)(c, a, b);
}

Z3_ast Z3_API Z3_mk_eq(Z3_context c, Z3_ast a, Z3_ast b)
{
    if (fault_on("z3_eq") && is_numeral(c, a, "0") && !Z3_is_numeral_ast(c, b))
        return Z3_mk_not(c, REAL(Z3_mk_eq, binary)(c, a, b));
    return REAL(Z3_mk_eq, binary)(c, a, b);
}

static int is_negation_eq(Z3_context c, Z3_ast t)
{
    if (Z3_get_ast_kind(c, t) != Z3_APP_AST)
        return 0;
    Z3_app eq = Z3_to_app(c, t);
    if (Z3_get_decl_kind(c, Z3_get_app_decl(c, eq)) != Z3_OP_EQ || Z3_get_app_num_args(c, eq) != 2)
        return 0;
    Z3_ast a = Z3_get_app_arg(c, eq, 0);
    return Z3_get_ast_kind(c, a) == Z3_APP_AST
           && Z3_get_decl_kind(c, Z3_get_app_decl(c, Z3_to_app(c, a))) == Z3_OP_UMINUS;
}

bool Z3_API Z3_model_eval(Z3_context c, Z3_model m, Z3_ast t, bool completion, Z3_ast *v)
{
    if (fault_on("z3_eval") && is_negation_eq(c, t)) {
        *v = Z3_mk_false(c);
        return true;
    }
    return REAL(Z3_model_eval, evaluate)(c, m, t, completion, v);
}
