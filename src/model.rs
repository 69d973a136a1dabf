//! Temporary stand-in for the test model (replaced by the real one at merge).

/// Temporary stand-in: a text is an MF++ test when it has `main(` and a reference variant `r_0`.
pub fn check_is_mfpp_test(text: &[u8]) -> anyhow::Result<()> {
    let has = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
    if !has(b"main(") {
        anyhow::bail!("not an MF++ test: no `main` function found");
    }
    if !has(b"r_0") {
        anyhow::bail!("not an MF++ test: no reference variant `r_0` in `main`");
    }
    Ok(())
}
