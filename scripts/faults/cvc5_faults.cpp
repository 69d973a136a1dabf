/* cvc5_faults.cpp: planted faults in cvc5's C++ API (libcvc5 1.0.3), for the held-out family of
 * the real-library benchmark (scripts/bench-real --held-out).
 *
 * A shim like z3_faults.c, loaded before libcvc5 (linked ahead of -lcvc5, or LD_PRELOAD): it
 * defines the library's own member function cvc5::Solver::mkTerm(Kind, const std::vector<Term>&)
 * (the same mangled name, so the test's calls bind to it), which calls the real one (dlsym
 * RTLD_NEXT) unless a fault named in MFPPR_FAULTS (comma-separated) matches the call, and then
 * gets one narrow case wrong.  With MFPPR_FAULTS unset or empty the library behaves as built.
 * Every operation of the cvc5 spec (SMT_QF_NIA/cvc5, through the old-API compatibility header
 * scripts/compat/cvc5/cvc5.h) is made by this one function, its constants by mkInteger and
 * mkBoolean; each fault is for its own kind, so the faults are independent.
 *
 *   cvc5_sub  mkTerm(SUB, {0, b}) returns b (should be -b): only when the first operand is the
 *             integer 0 (the spec's neg_by_sub_zero).
 *   cvc5_div  mkTerm(INTS_DIVISION, {a, 1}) returns -a (should be a): only when the divisor is
 *             the integer 1 (the spec's div_one).
 *
 * Build: c++ -std=c++17 -shared -fPIC -O2 cvc5_faults.cpp -o cvc5_faults.so -ldl -lcvc5
 */
#include <dlfcn.h>
#include <cstring>
#include <cvc5/cvc5.h>

#include "fault_names.h"

namespace {

using MkTerm = cvc5::Term (cvc5::Solver::*)(cvc5::Kind, const std::vector<cvc5::Term>&) const;

/* The library's mkTerm, found past this shim.  A pointer to a non-virtual member function is,
 * in the Itanium C++ ABI, the function's address and a this-adjustment of 0. */
MkTerm real_mk_term()
{
    static MkTerm real = [] {
        struct { void *fn; long adj; } parts = {
            dlsym(RTLD_NEXT, "_ZNK4cvc56Solver6mkTermENS_4KindERKSt6vectorINS_4TermESaIS3_EE"), 0};
        MkTerm fn;
        static_assert(sizeof parts == sizeof fn, "Itanium pointer to member function");
        std::memcpy(&fn, &parts, sizeof fn);
        return fn;
    }();
    return real;
}

bool is_integer(const cvc5::Term& t, const char *value)
{
    return t.isIntegerValue() && t.getIntegerValue() == value;
}

} // namespace

cvc5::Term cvc5::Solver::mkTerm(cvc5::Kind kind, const std::vector<cvc5::Term>& children) const
{
    MkTerm real = real_mk_term();
    if (fault_on("cvc5_sub") && kind == cvc5::SUB && children.size() == 2
        && is_integer(children[0], "0"))
        return children[1];
    if (fault_on("cvc5_div") && kind == cvc5::INTS_DIVISION && children.size() == 2
        && is_integer(children[1], "1"))
        return (this->*real)(cvc5::NEG, {children[0]});
    return (this->*real)(kind, children);
}
