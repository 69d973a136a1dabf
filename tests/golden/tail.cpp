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
unite_by_parts_0_2(fuzz::fuzz_context ctx, fuzz::set_term a, fuzz::set_term b)
{
    fuzz::set_term only_a = iset::subtract(a, b);
    fuzz::set_term both = metalib::relations::intersect::base(ctx, a, b);
    fuzz::set_term only_b = iset::subtract(b, a);
    return iset::unite(iset::unite(only_a, both), only_b);
}
fuzz::set_term
iden_by_fuzz_split_0_0(fuzz::fuzz_context ctx, fuzz::set_term a)
{
    fuzz::set_term set_term_22 = iset::subtract(a, a);
    fuzz::set_term f = set_term_22;
    fuzz::set_term in = iset::intersect(a, f);
    fuzz::set_term out = metalib::relations::subtract::base(ctx, a, f);
    return unite_by_parts_0_2(ctx, in, out);
}
fuzz::set_term
subtract_by_unite_0_6(fuzz::fuzz_context ctx, fuzz::set_term a, fuzz::set_term b)
{
    fuzz::set_term u = metalib::relations::unite::base(ctx, a, b);
    return metalib::relations::subtract::base(ctx, u, b);
}
fuzz::set_term
subtract_by_unite_0_4(fuzz::fuzz_context ctx, fuzz::set_term a, fuzz::set_term b)
{
    fuzz::set_term u = metalib::relations::unite::base(ctx, a, b);
    return subtract_by_unite_0_6(ctx, u, b);
}
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
fuzz::set_term
subtract_by_intersect_1_4(fuzz::fuzz_context ctx, fuzz::set_term a, fuzz::set_term b)
{
    fuzz::set_term h = iset::hull(a);
    fuzz::set_term cb = iset::complement(b, iset::lower(h), iset::upper(h));
    return metalib::relations::intersect::base(ctx, a, cb);
}
int
main()
{
    fuzz::fuzz_context fctx(-48, 48);
    iset::Set output_var_0 = iset::from_point(14);
    output_var_0 = iset::unite(output_var_0, iset::from_point((((iset::cardinality(iset::intersect(output_var_0, iset::from_interval(fctx.lo, fctx.hi))) % 8) % 8) % 8)));

    // Meta test 0
    iset::Set r_0 = iden_by_fuzz_split_0_0(fctx, output_var_0);
    r_0 = subtract_by_unite_0_4(fctx, r_0, output_var_0);

    // Meta test 1
    iset::Set r_1 = iden_by_unite_empty_1_0(fctx, output_var_0);
    r_1 = subtract_by_intersect_1_4(fctx, r_1, output_var_0);
    metalib::checks::check_card(r_1, r_0);
    metalib::checks::check_equal(r_1, r_0);
}
