#include "spec_fuzz.hpp"

#ifdef EXECUTE
#include "iset.h"
#include "iset_fuzz_type_defs.hpp"
#include "meta_spec_iset.hpp"
#else
#include "iset_spec_defs.hpp"
#endif
#include "reduce_iset.hpp"

fuzz::set_term
unite_by_parts_1_2(fuzz::fuzz_context ctx, fuzz::set_term a, fuzz::set_term b)
{
    fuzz::set_term only_a = iset::subtract(a, b);
    fuzz::set_term both = metalib::relations::intersect::base(ctx, a, b);
    fuzz::set_term only_b = iset::subtract(b, a);
    return iset::unite(iset::unite(only_a, both), only_b);
}
fuzz::set_term
iden_by_unite_empty_1_0(fuzz::fuzz_context ctx, fuzz::set_term a)
{
    fuzz::set_term e = metalib::generators::empty::base(ctx, a);
    return unite_by_parts_1_2(ctx, a, e);
}
int
main()
{
    fuzz::fuzz_context fctx(-48, 48);
    iset::Set output_var_0 = iset::from_point(14);

    // Meta test 0
    iset::Set r_0 = output_var_0;

    // Meta test 1
    iset::Set r_1 = iden_by_unite_empty_1_0(fctx, output_var_0);
    metalib::checks::check_card(r_1, r_0);
}
