/* cvc5/cvc5.h (compatibility): the pre-1.0 cvc5 C++ API that the spec SMT_QF_NIA/cvc5 is written
 * for, mapped onto Debian's libcvc5 1.0.3.  scripts/bench-real copies it into WORK/INC-cvc5, ahead
 * of the spec's include dirs, so `#include "cvc5/cvc5.h"` in the template's EXECUTE branch (the
 * tests as compiled and run) finds it.  API compatibility only: each old name is the 1.0.3 entity
 * of the same meaning, so what a test computes is what the spec says.
 *
 *   cvc5::api::X          1.0.3 moved the API from cvc5::api into cvc5: Solver, Term, Sort, Result
 *                         and the unscoped Kind names (cvc5::api::ITE, ...) are found through a
 *                         using-directive.
 *   cvc5::api::Kind::K    the spec names kinds through the enum; Kind here is a struct of the old
 *                         names that the spec uses: PLUS, MINUS, UMINUS are 1.0.3's ADD, SUB, NEG,
 *                         the others keep their names.
 *   Solver::mkTerm(k, a, b, ...)  1.0.3 has only mkTerm(Kind, std::vector<Term>); the old fixed
 *                         arities (1 to 3 children) pass their children as that vector.
 */
#ifndef MFPPR_CVC5_COMPAT_H
#define MFPPR_CVC5_COMPAT_H

#include "/usr/include/cvc5/cvc5.h"

namespace cvc5 {
namespace api {

using namespace ::cvc5;

struct Kind
{
    static constexpr ::cvc5::Kind PLUS = ::cvc5::ADD, MINUS = ::cvc5::SUB, UMINUS = ::cvc5::NEG,
        MULT = ::cvc5::MULT, INTS_DIVISION = ::cvc5::INTS_DIVISION,
        INTS_MODULUS = ::cvc5::INTS_MODULUS, ABS = ::cvc5::ABS, EQUAL = ::cvc5::EQUAL,
        DISTINCT = ::cvc5::DISTINCT, ITE = ::cvc5::ITE, NOT = ::cvc5::NOT, AND = ::cvc5::AND,
        OR = ::cvc5::OR, XOR = ::cvc5::XOR, IMPLIES = ::cvc5::IMPLIES, LT = ::cvc5::LT,
        GT = ::cvc5::GT, LEQ = ::cvc5::LEQ, GEQ = ::cvc5::GEQ;
};

class Solver : public ::cvc5::Solver
{
  public:
    using ::cvc5::Solver::mkTerm;

    ::cvc5::Term mkTerm(::cvc5::Kind k, const ::cvc5::Term& a) const
    {
        return ::cvc5::Solver::mkTerm(k, {a});
    }

    ::cvc5::Term mkTerm(::cvc5::Kind k, const ::cvc5::Term& a, const ::cvc5::Term& b) const
    {
        return ::cvc5::Solver::mkTerm(k, {a, b});
    }

    ::cvc5::Term mkTerm(::cvc5::Kind k, const ::cvc5::Term& a, const ::cvc5::Term& b,
                        const ::cvc5::Term& c) const
    {
        return ::cvc5::Solver::mkTerm(k, {a, b, c});
    }
};

} // namespace api
} // namespace cvc5

#endif
